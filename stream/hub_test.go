package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exgate/exgate"
)

// fakeStreamer is an exchange whose Watch calls the test drives: each call
// is handed to the test on calls, emits what the test emits through it and
// holds until its context ends, or returns fail at once.
type fakeStreamer struct {
	exgate.Exchange
	calls chan *watchCall
	mu    sync.Mutex
	fail  error
}

type watchCall struct {
	channel string
	sym     exgate.Symbol
	ctx     context.Context
	book    func(exgate.OrderBook)
	kline   func(exgate.KlineUpdate)
	order   func(exgate.Order)
	// live: the call holds until its context ends (it did not fail).
	live bool
}

func newFakeStreamer() *fakeStreamer { return &fakeStreamer{calls: make(chan *watchCall, 100)} }

func (f *fakeStreamer) watch(ctx context.Context, c *watchCall) error {
	c.ctx = ctx
	f.mu.Lock()
	err := f.fail
	f.mu.Unlock()
	c.live = err == nil
	f.calls <- c
	if err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func (f *fakeStreamer) WatchOrders(ctx context.Context, cred exgate.Credential, emit func(exgate.Order)) error {
	return f.watch(ctx, &watchCall{channel: ChannelOrders, order: emit})
}

func (f *fakeStreamer) WatchBook(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, emit func(exgate.OrderBook)) error {
	return f.watch(ctx, &watchCall{channel: ChannelBook, sym: sym, book: emit})
}

func (f *fakeStreamer) WatchKlines(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, iv exgate.Interval, emit func(exgate.KlineUpdate)) error {
	return f.watch(ctx, &watchCall{channel: ChannelKlines, sym: sym, kline: emit})
}

func (f *fakeStreamer) nextCall(t *testing.T) *watchCall {
	t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no Watch call")
		return nil
	}
}

func (f *fakeStreamer) noCall(t *testing.T) {
	t.Helper()
	select {
	case c := <-f.calls:
		t.Fatalf("unexpected Watch call %s %s", c.channel, c.sym)
	default:
	}
}

// fakeWS is an in-memory WebSocket: the test writes client frames to in
// and reads server frames from out; while hold is set, writes wait.
type fakeWS struct {
	in   chan []byte
	out  chan []byte
	hold chan struct{}
	// held is signaled each time a write starts waiting for hold.
	held   chan struct{}
	closed chan struct{}
	once   sync.Once
	mu     sync.Mutex
	code   websocket.StatusCode
	reason string
}

func newFakeWS() *fakeWS {
	return &fakeWS{in: make(chan []byte, 10), out: make(chan []byte, 10_000), held: make(chan struct{}, 1), closed: make(chan struct{})}
}

var errClosed = errors.New("closed")

func (w *fakeWS) Read(ctx context.Context) (websocket.MessageType, []byte, error) {
	select {
	case f := <-w.in:
		return websocket.MessageText, f, nil
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	case <-w.closed:
		return 0, nil, errClosed
	}
}

func (w *fakeWS) Write(ctx context.Context, _ websocket.MessageType, p []byte) error {
	if w.hold != nil {
		wake(w.held)
		select {
		case <-w.hold:
		case <-ctx.Done():
			return ctx.Err()
		case <-w.closed:
			return errClosed
		}
	}
	select {
	case w.out <- p:
		return nil
	case <-w.closed:
		return errClosed
	}
}

func (w *fakeWS) Ping(context.Context) error { return nil }

func (w *fakeWS) Close(code websocket.StatusCode, reason string) error {
	w.mu.Lock()
	w.code, w.reason = code, reason
	w.mu.Unlock()
	return w.CloseNow()
}

func (w *fakeWS) CloseNow() error {
	w.once.Do(func() { close(w.closed) })
	return nil
}

func (w *fakeWS) send(frame string) { w.in <- []byte(frame) }

// next returns the next server message, decoded.
func (w *fakeWS) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case b := <-w.out:
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("server frame %s: %v", b, err)
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no server message")
		return nil
	}
}

func (w *fakeWS) none(t *testing.T) {
	t.Helper()
	select {
	case b := <-w.out:
		t.Fatalf("unexpected server message %s", b)
	case <-time.After(20 * time.Millisecond):
	}
}

// expectOp reads the next message and checks its op (and code).
func (w *fakeWS) expectOp(t *testing.T, op, code string) map[string]any {
	t.Helper()
	m := w.next(t)
	if m["op"] != op || (code != "" && m["code"] != code) {
		t.Fatalf("got %v, want op %s code %s", m, op, code)
	}
	return m
}

var testCred = exgate.Credential{ID: 1, ClientAPIKey: "k1", Name: "main", Exchange: "fake"}

type harness struct {
	hub *Hub
	ex  *fakeStreamer
	clk *fakeClock
}

func newHarness(t *testing.T, mod func(*Options)) *harness {
	ex := newFakeStreamer()
	clk := newFakeClock()
	opts := Options{Exchanges: map[string]exgate.Exchange{"fake": ex}, Clock: clk, Backoff: func(int) time.Duration { return time.Millisecond }}
	if mod != nil {
		mod(&opts)
	}
	return &harness{hub: New(opts), ex: ex, clk: clk}
}

// passGrace waits until a topic has lost its last subscriber, then moves
// the clock past the grace period that keeps it (Options.UpstreamGrace).
func (h *harness) passGrace(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.hub.idleTopics() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no topic lost its last subscriber")
		}
		time.Sleep(time.Millisecond)
	}
	h.clk.Add(DefaultUpstreamGrace)
}

// connect serves a fake client until the test ends.
func (h *harness) connect(t *testing.T, cred exgate.Credential) *fakeWS {
	ws := newFakeWS()
	done := make(chan struct{})
	go func() { defer close(done); h.hub.ServeConn(context.Background(), ws, cred) }()
	t.Cleanup(func() { _ = ws.CloseNow(); <-done })
	return ws
}

func book(n int, price string) exgate.OrderBook {
	b := exgate.OrderBook{}
	for i := range n {
		b.Bids = append(b.Bids, exgate.Level{Price: fmt.Sprintf("%s%d", price, i), Quantity: "1"})
		b.Asks = append(b.Asks, exgate.Level{Price: fmt.Sprintf("%s%d", price, i), Quantity: "2"})
	}
	return b
}

func TestFanOutOneUpstream(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.connect(t, testCred), h.connect(t, exgate.Credential{ID: 2, ClientAPIKey: "k2", Name: "other", Exchange: "fake"})
	a.send(`{"op":"subscribe","channel":"book","asset1":"btc","asset2":"USDT","depth":2}`)
	if m := a.expectOp(t, OpSubscribed, ""); m["asset1"] != "BTC" || m["depth"] != 2.0 {
		t.Fatalf("ack %v", m)
	}
	call := h.ex.nextCall(t)
	call.book(book(5, "10"))
	if m := a.next(t); len(m["data"].(map[string]any)["bids"].([]any)) != 2 || m["asset2"] != "USDT" || m["channel"] != "book" {
		t.Fatalf("book %v", m)
	}
	// A second client on the same pair (another depth) joins the same
	// upstream subscription and gets the latest book at once.
	b.send(`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT"}`)
	b.expectOp(t, OpSubscribed, "")
	if m := b.next(t); len(m["data"].(map[string]any)["asks"].([]any)) != 5 {
		t.Fatalf("late joiner's book %v", m)
	}
	h.clk.Add(time.Second)
	call.book(book(30, "20"))
	if m := b.next(t); len(m["data"].(map[string]any)["asks"].([]any)) != 20 {
		t.Fatalf("default depth %v", m)
	}
	a.next(t)
	h.ex.noCall(t)
	if h.hub.Watches() != 1 || h.hub.Topics() != 1 {
		t.Fatalf("watches %d topics %d, want one upstream subscription", h.hub.Watches(), h.hub.Topics())
	}
}

func TestLastSubscriberStopsUpstream(t *testing.T) {
	h := newHarness(t, nil)
	a, b := h.connect(t, testCred), h.connect(t, testCred)
	for _, c := range []*fakeWS{a, b} {
		c.send(`{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT","interval":"5m"}`)
		c.expectOp(t, OpSubscribed, "")
	}
	call := h.ex.nextCall(t)
	a.send(`{"op":"unsubscribe","channel":"klines","asset1":"BTC","asset2":"USDT","interval":"5m"}`)
	a.expectOp(t, OpUnsubscribed, "")
	if call.ctx.Err() != nil {
		t.Fatal("upstream stopped while a subscriber is left")
	}
	_ = b.CloseNow() // the last subscriber goes away with its connection
	h.passGrace(t)
	select {
	case <-call.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("upstream not stopped after the last subscriber left")
	}
	if n := h.hub.Topics(); n != 0 {
		t.Fatalf("%d topics left", n)
	}
	// A new subscriber starts a new one.
	c := h.connect(t, testCred)
	c.send(`{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT","interval":"5m"}`)
	c.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
}

func TestKlinesEveryChangeAndClosed(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t, testCred)
	a.send(`{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT"}`)
	if m := a.expectOp(t, OpSubscribed, ""); m["interval"] != "1m" {
		t.Fatalf("default interval: %v", m)
	}
	call := h.ex.nextCall(t)
	k := exgate.Kline{OpenTime: 60_000, ClosePrice: "1", CloseTime: 119_999}
	call.kline(exgate.KlineUpdate{Kline: k})
	call.kline(exgate.KlineUpdate{Kline: k}) // no change: no message
	k.ClosePrice = "2"
	call.kline(exgate.KlineUpdate{Kline: k})
	call.kline(exgate.KlineUpdate{Kline: k, Closed: true})
	for i, want := range []struct {
		price  string
		closed bool
	}{{"1", false}, {"2", false}, {"2", true}} {
		m := a.next(t)
		if m["data"].(map[string]any)["closePrice"] != want.price || (m["closed"] == true) != want.closed || m["interval"] != "1m" {
			t.Fatalf("message %d: %v", i, m)
		}
		if _, has := m["closed"]; has != want.closed {
			t.Fatalf("message %d: closed present %v", i, has)
		}
	}
	a.none(t)
}

func TestBookPacedLatestWins(t *testing.T) {
	h := newHarness(t, nil)
	a := h.connect(t, testCred)
	a.send(`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":1}`)
	a.expectOp(t, OpSubscribed, "")
	call := h.ex.nextCall(t)
	// 25 changes inside one instant: ten go at once, then only the
	// latest, once the second has passed.
	for i := range 25 {
		call.book(book(1, fmt.Sprint(i)))
	}
	for i := range exgate.StreamBookRate {
		if got := a.next(t)["data"].(map[string]any)["bids"].([]any)[0].(map[string]any)["price"]; got != fmt.Sprintf("%d0", i) {
			t.Fatalf("snapshot %d: %v", i, got)
		}
	}
	a.none(t)
	h.clk.Add(999 * time.Millisecond)
	a.none(t)
	h.clk.Add(time.Millisecond)
	if got := a.next(t)["data"].(map[string]any)["bids"].([]any)[0].(map[string]any)["price"]; got != "240" {
		t.Fatalf("after the pause: %v, want the latest (240)", got)
	}
	a.none(t)
	// Spaced at the rate, every change goes through at once.
	for i := range 10 {
		h.clk.Add(100 * time.Millisecond)
		call.book(book(1, fmt.Sprint(100+i)))
		if got := a.next(t)["data"].(map[string]any)["bids"].([]any)[0].(map[string]any)["price"]; got != fmt.Sprintf("%d0", 100+i) {
			t.Fatalf("paced snapshot %d: %v", i, got)
		}
	}
}

func TestSlowClientClosed1008(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.QueueLimit = 5 })
	a := h.connect(t, testCred)
	a.send(`{"op":"subscribe","channel":"orders"}`)
	a.expectOp(t, OpSubscribed, "")
	call := h.ex.nextCall(t)
	a.hold = make(chan struct{}) // the client stops reading
	call.order(exgate.Order{ID: "o0", Status: exgate.OrderPending})
	// One is being written (the writer waits in it), five wait in the
	// queue; the next is one too many.
	select {
	case <-a.held:
	case <-time.After(5 * time.Second):
		t.Fatal("the first order was not written")
	}
	for i := 1; i <= 7; i++ {
		call.order(exgate.Order{ID: fmt.Sprint("o", i), Status: exgate.OrderPending})
	}
	// The client is let read again once the hub has decided to close it.
	deadline := time.Now().Add(5 * time.Second)
	for h.hub.Stats().SlowClosed == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the queue overflowed without a slow close")
		}
		time.Sleep(time.Millisecond)
	}
	close(a.hold)
	select {
	case <-a.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("slow client not closed")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.code != websocket.StatusPolicyViolation || !strings.Contains(a.reason, "more than 5 messages pending") {
		t.Fatalf("closed with %d %q", a.code, a.reason)
	}
	if n := h.hub.Stats().SlowClosed; n != 1 {
		t.Fatalf("slow closes counted %d, want 1 (the client, once)", n)
	}
}

func TestPermanentErrorDropsSubscriptions(t *testing.T) {
	h := newHarness(t, nil)
	h.ex.fail = exgate.Errorf(exgate.CodeUnknownSymbol, "FOO/BAR is not listed")
	a := h.connect(t, testCred)
	a.send(`{"op":"subscribe","channel":"book","asset1":"FOO","asset2":"BAR","depth":5}`)
	a.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
	m := a.expectOp(t, OpError, "UNKNOWN_SYMBOL")
	if m["channel"] != "book" || m["asset1"] != "FOO" || m["depth"] != 5.0 {
		t.Fatalf("error names %v", m)
	}
	// The subscription is gone: unsubscribing is an error, subscribing
	// again tries again.
	a.send(`{"op":"unsubscribe","channel":"book","asset1":"FOO","asset2":"BAR"}`)
	a.expectOp(t, OpError, "INVALID_PARAMETER")
	h.ex.mu.Lock()
	h.ex.fail = nil
	h.ex.mu.Unlock()
	a.send(`{"op":"subscribe","channel":"book","asset1":"FOO","asset2":"BAR"}`)
	a.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
}

func TestTransientErrorRetried(t *testing.T) {
	h := newHarness(t, nil)
	h.ex.fail = errors.New("connection reset")
	a := h.connect(t, testCred)
	a.send(`{"op":"subscribe","channel":"orders"}`)
	a.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
	h.ex.nextCall(t) // restarted after the backoff
	h.ex.mu.Lock()
	h.ex.fail = nil
	h.ex.mu.Unlock()
	call := h.ex.nextCall(t)
	for !call.live {
		call = h.ex.nextCall(t)
	}
	call.order(exgate.Order{ID: "o1", Status: exgate.OrderFilled})
	if m := a.next(t); m["channel"] != "orders" {
		t.Fatalf("after the restart: %v", m)
	}
}

// journalFake records the orders reported to it and labels them.
type journalFake struct {
	mu   sync.Mutex
	seen []string
}

func (j *journalFake) StreamedOrder(_ context.Context, cred exgate.Credential, o exgate.Order) exgate.Order {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seen = append(j.seen, cred.Name+":"+o.ID+":"+string(o.Status))
	o.ClientOrderID = "mine-" + o.ID
	return o
}

func TestOrdersThroughJournalPerCredential(t *testing.T) {
	j := &journalFake{}
	h := newHarness(t, func(o *Options) { o.Journal = j })
	a, b := h.connect(t, testCred), h.connect(t, testCred)
	other := h.connect(t, exgate.Credential{ID: 2, ClientAPIKey: "k1", Name: "second", Exchange: "fake"})
	a.send(`{"op":"subscribe","channel":"orders"}`)
	a.expectOp(t, OpSubscribed, "")
	call := h.ex.nextCall(t)
	call.order(exgate.Order{ID: "o1", Status: exgate.OrderPending})
	call.order(exgate.Order{ID: "o1", Status: exgate.OrderPending}) // the same again
	if m := a.next(t); m["data"].(map[string]any)["clientOrderId"] != "mine-o1" {
		t.Fatalf("order %v", m)
	}
	a.none(t)
	// A late joiner gets the open order; another credential gets its own
	// upstream subscription.
	b.send(`{"op":"subscribe","channel":"orders"}`)
	b.expectOp(t, OpSubscribed, "")
	if m := b.next(t); m["data"].(map[string]any)["id"] != "o1" {
		t.Fatalf("late joiner %v", m)
	}
	other.send(`{"op":"subscribe","channel":"orders"}`)
	other.expectOp(t, OpSubscribed, "")
	h.ex.nextCall(t)
	call.order(exgate.Order{ID: "o1", Status: exgate.OrderCanceled})
	for _, c := range []*fakeWS{a, b} {
		if m := c.next(t); m["data"].(map[string]any)["status"] != "CANCELED" {
			t.Fatalf("cancel %v", m)
		}
	}
	other.none(t)
	j.mu.Lock()
	defer j.mu.Unlock()
	want := []string{"main:o1:PENDING", "main:o1:PENDING", "main:o1:CANCELED"}
	if fmt.Sprint(j.seen) != fmt.Sprint(want) {
		t.Fatalf("journal heard %v, want %v", j.seen, want)
	}
}

func TestBadRequestsKeepConnection(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.MaxSubscriptions = 2 })
	a := h.connect(t, testCred)
	for _, tc := range []struct{ frame, code, param string }{
		{`{"op":"subscribe","channel":"trades"}`, "INVALID_PARAMETER", "channel"},
		{`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":101}`, "INVALID_PARAMETER", "depth"},
		{`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT","depth":0}`, "INVALID_PARAMETER", "depth"},
		{`{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT","interval":"2m"}`, "INVALID_PARAMETER", "interval"},
		{`{"op":"subscribe","channel":"book","asset1":"BTC/","asset2":"USDT"}`, "INVALID_PARAMETER", "asset1"},
		{`{"op":"subscribe",`, "INVALID_PARAMETER", ""},
		{`{"op":"watch","channel":"orders"}`, "INVALID_PARAMETER", "op"},
		{`{"op":"unsubscribe","channel":"orders"}`, "INVALID_PARAMETER", "channel"},
	} {
		a.send(tc.frame)
		if m := a.expectOp(t, OpError, tc.code); (m["param"] == nil && tc.param != "") || (tc.param != "" && m["param"] != tc.param) {
			t.Fatalf("%s: %v", tc.frame, m)
		}
	}
	a.send(`{"op":"subscribe","channel":"orders"}`)
	a.expectOp(t, OpSubscribed, "")
	a.send(`{"op":"subscribe","channel":"orders"}`)
	a.expectOp(t, OpError, "INVALID_PARAMETER") // duplicate
	a.send(`{"op":"subscribe","channel":"book","asset1":"BTC","asset2":"USDT"}`)
	a.expectOp(t, OpSubscribed, "")
	a.send(`{"op":"subscribe","channel":"book","asset1":"ETH","asset2":"USDT"}`)
	a.expectOp(t, OpError, "RATE_LIMITED")
	a.send(`{"op":"unsubscribe","channel":"book","asset1":"BTC","asset2":"USDT"}`)
	a.expectOp(t, OpUnsubscribed, "")
	a.send(`{"op":"subscribe","channel":"book","asset1":"ETH","asset2":"USDT"}`)
	a.expectOp(t, OpSubscribed, "")
}

func TestNoStreamerNotImplemented(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Exchanges["plain"] = struct{ exgate.Exchange }{} })
	a := h.connect(t, exgate.Credential{ID: 3, ClientAPIKey: "k", Name: "p", Exchange: "plain"})
	a.send(`{"op":"subscribe","channel":"orders"}`)
	a.expectOp(t, OpError, "NOT_IMPLEMENTED")
	a.send(`{"op":"subscribe","channel":"klines","asset1":"BTC","asset2":"USDT"}`)
	a.expectOp(t, OpError, "NOT_IMPLEMENTED")
}

// fakeClock is a settable Clock whose timers fire when Add passes them.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// Add moves the clock and runs the timers due, in order, synchronously.
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

func TestRevokedKeyClosesStream(t *testing.T) {
	var revoked atomic.Bool
	h := newHarness(t, func(o *Options) {
		o.PingInterval = 5 * time.Millisecond
		o.Revalidate = func(_ context.Context, cred exgate.Credential) error {
			if revoked.Load() && cred.ID == testCred.ID {
				return errors.New("revoked")
			}
			return nil
		}
	})
	a := h.connect(t, testCred)
	a.send(`{"op":"subscribe","channel":"orders"}`)
	a.expectOp(t, OpSubscribed, "")
	call := h.ex.nextCall(t)
	revoked.Store(true)
	select {
	case <-a.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("stream of a revoked key not closed")
	}
	a.mu.Lock()
	code, reason := a.code, a.reason
	a.mu.Unlock()
	if code != websocket.StatusPolicyViolation || !strings.Contains(reason, "revoked") {
		t.Fatalf("closed with %d %q", code, reason)
	}
	h.passGrace(t)
	select {
	case <-call.ctx.Done(): // its subscription went with it
	case <-time.After(5 * time.Second):
		t.Fatal("upstream not stopped")
	}
}
