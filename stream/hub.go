// Package stream is the hub of GET /v1/stream (docs/contract.md 2.5): it
// holds one upstream subscription (an exgate.Streamer Watch call) per
// exchange, channel and pair (and interval) for the market channels and
// one per exchange credential for orders, however many clients of this
// instance listen, and fans each out to every client's WebSocket.
//
// The hub starts a Watch with its first subscriber and cancels it when
// the last one leaves. A Watch that fails with an *exgate.Error (the key
// refused, an unknown symbol) ends its subscriptions with that error; any
// other failure is retried with backoff. Each client has an outbound
// queue; a client more than QueueLimit messages behind is closed with
// status 1008. Book snapshots are cut to each subscription's depth and
// paced to exgate.StreamBookRate a second, the latest snapshot winning.
// Order updates go through the journal (OrderJournal) before they reach
// the clients, so that GET /v1/order learns of fills without polling.
package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
)

// Defaults of Options (docs/contract.md 2.5).
const (
	DefaultPingInterval = 15 * time.Second
	DefaultPongTimeout  = 45 * time.Second
	DefaultQueueLimit   = 1000
	// DefaultMaxSubscriptions is how many subscriptions one connection
	// may hold; one more is refused with RATE_LIMITED.
	DefaultMaxSubscriptions = 50
	DefaultWriteTimeout     = 10 * time.Second
	// DefaultUpstreamGrace is how long an upstream subscription outlives
	// its last subscriber, so that a client unsubscribing and subscribing
	// again (churn) reuses it instead of opening another upstream
	// connection.
	DefaultUpstreamGrace = 30 * time.Second
	// DefaultFrameRate and DefaultFrameBurst bound the frames one client
	// may send: over them a frame is answered RATE_LIMITED and ignored,
	// and a client that keeps on is closed with 1008.
	DefaultFrameRate  = 5
	DefaultFrameBurst = 20
	// DefaultCheckInterval is how often a connection's Check runs.
	DefaultCheckInterval = time.Second
)

// maxRefusedFrames is how many frames in a row a connection may send over
// its frame rate before it is closed.
const maxRefusedFrames = 100

// OrderJournal is where the hub reports every order update before it
// fans it out: the journal records it (an order placed through the
// gateway learns of its fills without a read of the exchange) and returns
// the order as the client knows it (the gateway's id and the client's
// clientOrderId, or the exchange's id for an order placed elsewhere).
type OrderJournal interface {
	StreamedOrder(ctx context.Context, cred exgate.Credential, o exgate.Order) exgate.Order
}

// Clock is the hub's time: book pacing waits on it. Tests use a fake.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d; stop cancels that
	// call if it has not started.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Options configures a Hub. Exchanges is required.
type Options struct {
	// Exchanges are the adapters by name; one whose adapter lacks
	// exgate.Streamer answers NOT_IMPLEMENTED.
	Exchanges map[string]exgate.Exchange
	// Journal, when set, hears of every order update first.
	Journal OrderJournal
	Logger  *slog.Logger
	Clock   Clock
	// PingInterval and PongTimeout: the server pings every PingInterval
	// and drops a peer that has not answered a ping within PongTimeout.
	PingInterval time.Duration
	PongTimeout  time.Duration
	// QueueLimit is the most messages a client may have pending; one
	// more closes it with status 1008.
	QueueLimit int
	// MaxSubscriptions per connection.
	MaxSubscriptions int
	// WriteTimeout bounds the write of the frames queued for a client
	// at one time.
	WriteTimeout time.Duration
	// Backoff is the wait before the n-th (from 1) restart of a Watch
	// that failed; default 1 s doubling to 30 s, with ±20% jitter.
	Backoff func(n int) time.Duration
	// SymbolTimeout bounds the check that a subscribed pair is listed.
	SymbolTimeout time.Duration
	// Revalidate, when set, is asked at every ping whether the
	// connection's client key and exchange key still stand; an error
	// closes the connection with 1008, so that a key revoked or removed
	// while a stream is open stops within PingInterval.
	Revalidate func(ctx context.Context, cred exgate.Credential) error
	// CheckInterval is how often a connection's own check (ServeChecked:
	// the client's IP allowlist, the exchange key's permission) runs;
	// default DefaultCheckInterval.
	CheckInterval time.Duration
	// UpstreamGrace is how long an upstream subscription outlives its
	// last subscriber; default DefaultUpstreamGrace, negative none.
	UpstreamGrace time.Duration
	// FrameRate (frames a second) and FrameBurst bound one connection's
	// client frames; defaults DefaultFrameRate and DefaultFrameBurst.
	FrameRate, FrameBurst int
	// Limiter and ConnectLimit pace the start of upstream subscriptions
	// (each one an upstream WebSocket connection and, for a book, its
	// snapshot) within the exchange's published connection limit, in the
	// limiter instances share (Redis when configured): a start waits for
	// the exchange's budget under the key "stream-connect:<exchange>".
	// ConnectLimit returns the limit of an exchange, ok false for none.
	Limiter      exgate.Limiter
	ConnectLimit func(exchange string) (limit exgate.RateLimit, ok bool)
}

// Hub fans upstream subscriptions out to WebSocket clients. It is safe
// for concurrent use.
type Hub struct {
	opts  Options
	log   *slog.Logger
	clock Clock

	mu     sync.Mutex
	topics map[topicKey]*topic
	// watches counts the Watch calls started, for tests and the bench.
	watches int
	// What Stats reports: connections and in-process watchers open,
	// upstream restarts by exchange and channel, slow clients closed.
	conns, watchers int
	restarts        map[[2]string]uint64
	// paced counts the upstream starts that waited for the exchange's
	// connection budget.
	paced int
	// slowClosed is counted under a topic's lock (enqueue), which may
	// not take mu.
	slowClosed atomic.Uint64
}

// New returns a hub.
func New(opts Options) *Hub {
	h := &Hub{opts: opts, log: opts.Logger, clock: opts.Clock, topics: map[topicKey]*topic{}, restarts: map[[2]string]uint64{}}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.clock == nil {
		h.clock = realClock{}
	}
	o := &h.opts
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.PongTimeout <= 0 {
		o.PongTimeout = DefaultPongTimeout
	}
	if o.QueueLimit <= 0 {
		o.QueueLimit = DefaultQueueLimit
	}
	if o.MaxSubscriptions <= 0 {
		o.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.Backoff == nil {
		o.Backoff = defaultBackoff
	}
	if o.SymbolTimeout <= 0 {
		o.SymbolTimeout = 10 * time.Second
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = DefaultCheckInterval
	}
	if o.UpstreamGrace == 0 {
		o.UpstreamGrace = DefaultUpstreamGrace
	}
	if o.FrameRate <= 0 {
		o.FrameRate = DefaultFrameRate
	}
	if o.FrameBurst <= 0 {
		o.FrameBurst = DefaultFrameBurst
	}
	return h
}

func defaultBackoff(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < 30*time.Second; i++ {
		d *= 2
	}
	d = min(d, 30*time.Second)
	return d + time.Duration(rand.Int64N(int64(d)*2/5)) - d/5
}

// Paced returns how many upstream starts waited for an exchange's
// connection budget.
func (h *Hub) Paced() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.paced
}

// Watches returns how many upstream Watch calls the hub has started.
func (h *Hub) Watches() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.watches
}

// idleTopics returns how many topics wait out their grace period.
func (h *Hub) idleTopics() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, t := range h.topics {
		t.mu.Lock()
		if t.idle != nil {
			n++
		}
		t.mu.Unlock()
	}
	return n
}

// Topics returns how many upstream subscriptions are live.
func (h *Hub) Topics() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.topics)
}

// Stats is a snapshot of a hub, for its metrics (package metrics). Every
// label it carries is bounded: exchange names of the gateway and the
// three channels.
type Stats struct {
	// Connections are the WebSocket clients connected; Watchers the
	// in-process subscribers (Watch: the console's market page).
	Connections, Watchers int
	// Topics are the upstream subscriptions live, one per exchange and
	// channel (and pair, and credential for orders), with their
	// subscribers.
	Topics []TopicStats
	// Restarts counts the upstream subscriptions restarted after a
	// failure, by exchange and channel, since the hub began.
	Restarts []RestartStats
	// SlowClosed counts the clients closed for reading too slowly.
	SlowClosed uint64
}

// TopicStats is one upstream subscription.
type TopicStats struct {
	Exchange, Channel string
	Subscribers       int
}

// RestartStats counts the restarts of an exchange's channel.
type RestartStats struct {
	Exchange, Channel string
	Restarts          uint64
}

// Stats returns a snapshot of the hub.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	st := Stats{Connections: h.conns, Watchers: h.watchers, SlowClosed: h.slowClosed.Load()}
	topics := make([]*topic, 0, len(h.topics))
	for _, t := range h.topics {
		topics = append(topics, t)
	}
	for k, n := range h.restarts {
		st.Restarts = append(st.Restarts, RestartStats{Exchange: k[0], Channel: k[1], Restarts: n})
	}
	h.mu.Unlock()
	for _, t := range topics {
		t.mu.Lock()
		st.Topics = append(st.Topics, TopicStats{Exchange: t.key.exchange, Channel: t.key.channel, Subscribers: len(t.subs)})
		t.mu.Unlock()
	}
	return st
}

func (h *Hub) count(n *int, delta int) {
	h.mu.Lock()
	*n += delta
	h.mu.Unlock()
}

func (h *Hub) restarted(k topicKey) {
	h.mu.Lock()
	h.restarts[[2]string{k.exchange, k.channel}]++
	h.mu.Unlock()
}

// Serve upgrades the request to a WebSocket and serves the client of cred
// until the connection ends. The caller has authenticated the handshake.
func (h *Hub) Serve(w http.ResponseWriter, r *http.Request, cred exgate.Credential) {
	h.ServeChecked(w, r, cred, nil)
}

// ServeChecked is Serve with check, which the connection runs every
// CheckInterval: an error closes it with 1008 (the client's address taken
// off its key's allowlist, the exchange key's permission withdrawn).
func (h *Hub) ServeChecked(w http.ResponseWriter, r *http.Request, cred exgate.Credential, check func(ctx context.Context) error) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept has answered
	}
	ws.SetReadLimit(maxFrame + 512)
	// The request's context ends with the handler's deadline; the
	// connection lives on its own.
	h.serveConn(context.WithoutCancel(r.Context()), ws, cred, check)
}

// wsConn is the part of *websocket.Conn a connection uses.
type wsConn interface {
	Read(ctx context.Context) (websocket.MessageType, []byte, error)
	Write(ctx context.Context, typ websocket.MessageType, p []byte) error
	Ping(ctx context.Context) error
	Close(code websocket.StatusCode, reason string) error
	CloseNow() error
}

// ServeConn serves an accepted WebSocket until it ends or ctx does.
func (h *Hub) ServeConn(ctx context.Context, ws wsConn, cred exgate.Credential) {
	h.serveConn(ctx, ws, cred, nil)
}

func (h *Hub) serveConn(ctx context.Context, ws wsConn, cred exgate.Credential, check func(ctx context.Context) error) {
	c := newConn(h, ws, cred)
	c.check = check
	h.count(&h.conns, 1)
	defer h.count(&h.conns, -1)
	c.run(ctx)
}

// topicKey names one upstream subscription.
type topicKey struct {
	exchange string
	channel  string
	sym      exgate.Symbol
	iv       exgate.Interval
	// The credential, for orders only.
	apiKey string
	credID int64
}

// topic is one upstream subscription and its subscribers.
type topic struct {
	hub    *Hub
	key    topicKey
	cred   exgate.Credential
	st     exgate.Streamer
	cancel context.CancelFunc

	mu   sync.Mutex
	subs map[*subscription]struct{}
	done bool
	// idle, while the topic has no subscriber, cancels the stop that
	// ends it after the grace period.
	idle func() bool
	// The latest state, for a subscriber that joins later: the book and
	// its encodings by depth, the current kline's message, the open
	// orders' messages by id.
	book   *bookState
	latest *bookState
	pace   *pacer
	// live is true while the upstream's latest book is the exchange's
	// current one: from a book until the upstream connection drops
	// (exgate.StreamLost, or the Watch ends).
	live     bool
	kline    []byte
	open     map[string][]byte
	openList []string
}

type bookState struct {
	book exgate.OrderBook
	at   int64
	enc  map[int][]byte
}

// message returns the book message cut to depth, encoded once per depth.
func (b *bookState) message(sym exgate.Symbol, depth int) []byte {
	if m, ok := b.enc[depth]; ok {
		return m
	}
	m, err := json.Marshal(bookMessage{Channel: ChannelBook, Asset1: sym.Base, Asset2: sym.Quote, Data: cut(b.book, depth), Time: b.at})
	if err != nil {
		return nil
	}
	b.enc[depth] = m
	return m
}

// sink is where a subscription's messages go: a WebSocket client (conn)
// or an in-process watcher (Watch).
type sink interface {
	// enqueue queues a message; it must not block.
	enqueue(msg []byte)
	// dropped ends sub after its upstream failed for good.
	dropped(sub *subscription, e *exgate.Error)
}

// subscription is one subscriber's subscription to a topic.
type subscription struct {
	to    sink
	cred  exgate.Credential
	req   Request
	topic *topic
}

func (s *subscription) deliver(msg []byte) { s.to.enqueue(msg) }

// join adds sub to its topic, starting the upstream subscription for the
// first subscriber, and sends it the latest state.
func (h *Hub) join(sub *subscription, st exgate.Streamer) {
	cred := sub.cred
	key := topicKey{exchange: cred.Exchange, channel: sub.req.Channel, sym: sub.req.Symbol, iv: sub.req.Interval}
	if key.channel == ChannelOrders {
		key.apiKey, key.credID = cred.ClientAPIKey, cred.ID
	}
	h.mu.Lock()
	t, ok := h.topics[key]
	// A new topic's upstream starts once sub is in it (at the end), so the
	// first subscriber gets every update from the first.
	var start func()
	if !ok {
		ctx, cancel := context.WithCancel(context.Background())
		t = &topic{hub: h, key: key, cred: cred, st: st, cancel: cancel, subs: map[*subscription]struct{}{}, open: map[string][]byte{}}
		if key.channel == ChannelBook {
			t.pace = newPacer(h.clock, t.releaseLatest)
		}
		h.topics[key] = t
		h.watches++
		start = func() { go t.run(ctx) }
	}
	t.mu.Lock()
	h.mu.Unlock()
	if t.idle != nil {
		t.idle() // back within the grace period: the topic stays
		t.idle = nil
	}
	sub.topic = t
	t.subs[sub] = struct{}{}
	switch {
	case t.book != nil:
		sub.deliver(t.book.message(key.sym, sub.req.Depth))
	case t.kline != nil:
		sub.deliver(t.kline)
	}
	for _, id := range t.openList {
		sub.deliver(t.open[id])
	}
	t.mu.Unlock()
	if start != nil {
		start()
	}
}

// leave removes sub from its topic, stopping the upstream subscription
// with the last subscriber.
func (h *Hub) leave(sub *subscription) {
	t := sub.topic
	if t == nil {
		return
	}
	h.mu.Lock()
	t.mu.Lock()
	delete(t.subs, sub)
	if len(t.subs) == 0 && !t.done {
		if grace := h.opts.UpstreamGrace; grace > 0 {
			// Kept for the grace period: a subscriber coming back (churn)
			// reuses it rather than opening another upstream connection.
			if t.idle == nil {
				t.idle = h.clock.AfterFunc(grace, func() { h.endIdle(t) })
			}
		} else {
			h.end(t)
		}
	}
	t.mu.Unlock()
	h.mu.Unlock()
}

// endIdle ends t when it still has no subscriber at the end of its grace
// period.
func (h *Hub) endIdle(t *topic) {
	h.mu.Lock()
	t.mu.Lock()
	if len(t.subs) == 0 && !t.done && t.idle != nil {
		h.end(t)
	}
	t.mu.Unlock()
	h.mu.Unlock()
}

// end stops t and forgets it; the caller holds h.mu and t.mu.
func (h *Hub) end(t *topic) {
	t.done = true
	t.idle = nil
	if h.topics[t.key] == t {
		delete(h.topics, t.key)
	}
	t.stop()
}

// run holds the upstream subscription until ctx ends, restarting a Watch
// that returns with backoff; an *exgate.Error ends the topic.
func (t *topic) run(ctx context.Context) {
	failures := 0
	for {
		if err := t.hub.paceConnect(ctx, t.key.exchange); err != nil {
			return // ctx ended
		}
		emitted := false
		err := t.watch(ctx, &emitted)
		if ctx.Err() != nil {
			return
		}
		if e, ok := errors.AsType[*exgate.Error](err); ok {
			t.fail(e)
			return
		}
		if emitted {
			failures = 0
		}
		failures++
		t.hub.restarted(t.key)
		wait := t.hub.opts.Backoff(failures)
		t.hub.log.WarnContext(ctx, "stream: upstream subscription ended; restarting",
			"exchange", t.key.exchange, "channel", t.key.channel, "pair", t.key.sym.String(), "in", wait, "err", err)
		tm := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			tm.Stop()
			return
		case <-tm.C:
		}
	}
}

func (t *topic) watch(ctx context.Context, emitted *bool) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = errors.New("stream: the adapter's Watch panicked")
			t.hub.log.ErrorContext(ctx, "stream: Watch panicked", "exchange", t.key.exchange, "panic", v)
		}
	}()
	switch t.key.channel {
	case ChannelOrders:
		return t.st.WatchOrders(ctx, t.cred, func(o exgate.Order) { *emitted = true; t.order(ctx, o) })
	case ChannelBook:
		defer t.lost()
		ctx = exgate.ContextWithStreamLost(ctx, t.lost)
		return t.st.WatchBook(ctx, t.cred, t.key.sym, func(b exgate.OrderBook) { *emitted = true; t.bookUpdate(b) })
	default:
		return t.st.WatchKlines(ctx, t.cred, t.key.sym, t.key.iv, func(k exgate.KlineUpdate) { *emitted = true; t.klineUpdate(k) })
	}
}

// paceConnect waits until the exchange's connection budget allows one more
// upstream connection (Options.Limiter, ConnectLimit). A limiter that
// fails lets the start wait a second and try again, never skip the budget.
func (h *Hub) paceConnect(ctx context.Context, exchange string) error {
	if h.opts.Limiter == nil || h.opts.ConnectLimit == nil {
		return ctx.Err()
	}
	limit, ok := h.opts.ConnectLimit(exchange)
	if !ok {
		return ctx.Err()
	}
	for {
		wait, err := h.opts.Limiter.Reserve(ctx, "stream-connect:"+exchange, 1, limit)
		if err == nil && wait <= 0 {
			return nil
		}
		if err != nil {
			h.log.WarnContext(ctx, "stream: the connection budget cannot be read; waiting", "exchange", exchange, "err", err)
			wait = time.Second
		}
		h.count(&h.paced, 1)
		ready := make(chan struct{})
		stop := h.clock.AfterFunc(wait, func() { close(ready) })
		select {
		case <-ctx.Done():
			stop()
			return ctx.Err()
		case <-ready:
		}
	}
}

// fail sends e to every subscriber and ends their subscriptions.
func (t *topic) fail(e *exgate.Error) {
	h := t.hub
	h.mu.Lock()
	if h.topics[t.key] == t {
		delete(h.topics, t.key)
	}
	t.mu.Lock()
	t.done = true
	if t.idle != nil {
		t.idle()
		t.idle = nil
	}
	subs := make([]*subscription, 0, len(t.subs))
	for s := range t.subs {
		subs = append(subs, s)
	}
	clear(t.subs)
	t.mu.Unlock()
	h.mu.Unlock()
	t.stop()
	for _, s := range subs {
		s.to.dropped(s, e)
	}
}

// stop ends the upstream subscription and the pacing.
func (t *topic) stop() {
	t.cancel()
	if t.pace != nil {
		t.pace.stop()
	}
}

// bookUpdate takes a new book: it goes out at once when the rate allows,
// else the pacer's timer sends the latest then (releaseLatest).
func (t *topic) bookUpdate(b exgate.OrderBook) {
	at := t.hub.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.latest = &bookState{book: b, at: at.UnixMilli(), enc: map[int][]byte{}}
	t.live = true
	if t.pace.admit(at) {
		t.release(t.latest)
	}
}

// lost marks the latest book as no longer the exchange's current one: the
// upstream connection dropped.
func (t *topic) lost() {
	t.mu.Lock()
	t.live = false
	t.mu.Unlock()
}

// LiveBook returns the current order book of sym on exchange from the
// upstream subscription the hub holds for it (the adapter's book kept
// from the exchange's snapshot plus updates, up to exgate.MaxStreamDepth
// levels a side), when there is one and its connection has been up since
// its latest book; ok is false otherwise. The book is shared: the caller
// must not change it. HoldBook keeps such a subscription open.
func (h *Hub) LiveBook(exchange string, sym exgate.Symbol) (b exgate.OrderBook, ok bool) {
	h.mu.Lock()
	t := h.topics[topicKey{exchange: exchange, channel: ChannelBook, sym: sym}]
	h.mu.Unlock()
	if t == nil {
		return exgate.OrderBook{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done || !t.live || t.latest == nil {
		return exgate.OrderBook{}, false
	}
	return t.latest.book, true
}

// HoldBook holds the upstream subscription to the book of sym on exchange
// open until ctx ends, as a subscriber that reads nothing, so that
// LiveBook has it. It returns as Watch does: nil when ctx ends, the
// refusal of an unknown pair or an exchange without streams.
func (h *Hub) HoldBook(ctx context.Context, exchange string, sym exgate.Symbol) error {
	return h.Watch(ctx, exchange, Request{Channel: ChannelBook, Symbol: sym, Depth: 1}, func([]byte) {})
}

func (t *topic) releaseLatest() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.latest != nil && t.latest != t.book && t.pace.admit(t.hub.clock.Now()) {
		t.release(t.latest)
	}
}

// release sends b to every subscriber, cut to its depth; a subscriber
// that joins later starts from it.
func (t *topic) release(b *bookState) {
	t.book = b
	for s := range t.subs {
		s.deliver(b.message(t.key.sym, s.req.Depth))
	}
}

func (t *topic) klineUpdate(k exgate.KlineUpdate) {
	msg, err := json.Marshal(klinesMessage{Channel: ChannelKlines, Asset1: t.key.sym.Base, Asset2: t.key.sym.Quote,
		Interval: string(t.key.iv), Data: k.Kline, Closed: k.Closed})
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !k.Closed {
		if bytes.Equal(msg, t.kline) {
			return // not a change
		}
		t.kline = msg
	} else {
		t.kline = nil
	}
	for s := range t.subs {
		s.deliver(msg)
	}
}

// maxOpenKept bounds the open orders a topic keeps for late subscribers.
const maxOpenKept = 10_000

func (t *topic) order(ctx context.Context, o exgate.Order) {
	if j := t.hub.opts.Journal; j != nil {
		o = j.StreamedOrder(ctx, t.cred, o)
	}
	msg, err := json.Marshal(ordersMessage{Channel: ChannelOrders, Data: o})
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	prev, known := t.open[o.ID]
	if known && bytes.Equal(prev, msg) {
		return // the same state again (after a reconnect)
	}
	if o.Status.Final() {
		if known {
			delete(t.open, o.ID)
			for i, id := range t.openList {
				if id == o.ID {
					t.openList = append(t.openList[:i], t.openList[i+1:]...)
					break
				}
			}
		}
	} else if known || len(t.open) < maxOpenKept {
		if !known {
			t.openList = append(t.openList, o.ID)
		}
		t.open[o.ID] = msg
	}
	for s := range t.subs {
		s.deliver(msg)
	}
}
