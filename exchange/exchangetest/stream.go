package exchangetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// StreamSetup is an adapter that implements exgate.Streamer, pointed at its
// fake exchange, with the controls of the fake the stream cases need. The
// hooks act on the fake, never on the adapter.
type StreamSetup struct {
	Setup
	// Fill fills the open order with this client order id completely on
	// the fake, as a trade against it would, and pushes the change to
	// the fake's stream of the account when it is connected.
	Fill func(t *testing.T, clientOrderID string)
	// Pause drops every stream connection of the fake and refuses new
	// ones until resume is called: an outage of the exchange's streams
	// (its REST API stays up).
	Pause func(t *testing.T) (resume func())
	// Book returns the fake's own book of Symbol, best first, at most
	// exgate.MaxStreamDepth levels per side.
	Book func(t *testing.T) exgate.OrderBook
	// ChangeBook changes the fake's book of Symbol and pushes the update
	// to its subscribers.
	ChangeBook func(t *testing.T)
	// SkipSequence changes the fake's book without sending the update, so
	// the next update's sequence number skips one; nil when the exchange
	// has no sequence numbers.
	SkipSequence func(t *testing.T)
	// BadChecksum makes the next update wrong (a quantity differing from
	// the change the fake applied to its book) while its checksum is that
	// of the fake's true book; nil when the exchange sends no checksums.
	BadChecksum func(t *testing.T)
	// TradeKline changes the fake's current 1m kline of Symbol (a trade)
	// and pushes it; with next, the current kline closes first and the
	// trade opens the next one.
	TradeKline func(t *testing.T, next bool)
}

// The waits of the stream cases: deliveries on loopback take
// milliseconds; a fill must be seen within a second (the bar),
// a reconnect within the adapter's first backoff steps.
const (
	fillWithin      = time.Second
	deliveryWithin  = 5 * time.Second
	reconnectWithin = 15 * time.Second
)

// RunStreams runs the live-stream cases of docs/contract.md 2.5 against an
// adapter that implements exgate.Streamer and exgate.OrderManager:
//
//   - Orders: a limit order placed through the adapter is emitted PENDING;
//     filled on the fake, it is emitted FILLED within a second.
//   - OrdersAfterOutage: with the stream down, an order fills; after the
//     reconnect it is emitted FILLED (from the REST catch-up or the stream).
//   - Book: the first emission and the one after a change equal the
//     fake's book.
//   - BookGap, BookChecksum: after a skipped sequence number or a bad
//     checksum the adapter tells the caller the book is lost
//     (exgate.StreamLost), then the emitted book comes back to the fake's
//     book (resync).
//   - BookAfterOutage: when the stream drops the adapter tells the caller
//     the book is lost; after the reconnect it emits the book again,
//     though unchanged.
//   - Klines: one emission per change of the current kline, exactly one
//     Closed emission for it, then the next kline.
func RunStreams(t *testing.T, newSetup func(t *testing.T) StreamSetup) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s *streamSuite)
	}{
		{"Orders", testStreamOrders},
		{"OrdersAfterOutage", testStreamOrdersAfterOutage},
		{"Book", testStreamBook},
		{"BookGap", testStreamBookGap},
		{"BookChecksum", testStreamBookChecksum},
		{"BookAfterOutage", testStreamBookAfterOutage},
		{"Klines", testStreamKlines},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newSetup(t)
			s := &streamSuite{suite: start(t, func(*testing.T) Setup { return st.Setup }), hooks: st}
			var ok bool
			if s.streamer, ok = st.Exchange.(exgate.Streamer); !ok {
				s.fatalf("the adapter does not implement exgate.Streamer")
			}
			if s.om, ok = st.Exchange.(exgate.OrderManager); !ok {
				s.fatalf("the adapter does not implement exgate.OrderManager")
			}
			tc.fn(t, s)
		})
	}
}

type streamSuite struct {
	*suite
	hooks    StreamSetup
	streamer exgate.Streamer
	om       exgate.OrderManager
}

// watch runs a Watch call in the background until the test ends and
// collects what it emits; the call must not return before.
func watch[T any](s *streamSuite, what string, run func(ctx context.Context, emit func(T)) error) *collector[T] {
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector[T]{s: s, what: what, changed: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- run(ctx, c.add) }()
	s.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				s.errorf("%s returned %v when its context ended, want nil", what, err)
			}
		case <-time.After(5 * time.Second):
			s.errorf("%s did not return within 5 s of its context ending", what)
		}
	})
	c.done = done
	return c
}

type collector[T any] struct {
	s       *streamSuite
	what    string
	done    chan error
	mu      sync.Mutex
	got     []T
	changed chan struct{}
	// losses holds, for each exgate.StreamLost the adapter told, how
	// many emissions came before it.
	losses []int
}

func (c *collector[T]) add(v T) {
	c.mu.Lock()
	c.got = append(c.got, v)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// lost records an exgate.StreamLost.
func (c *collector[T]) lost() {
	c.mu.Lock()
	c.losses = append(c.losses, len(c.got))
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// lostBetween checks that a loss was told after emission i and before
// emission j.
func (c *collector[T]) lostBetween(i, j int, after string) {
	c.s.t.Helper()
	c.mu.Lock()
	losses := slices.Clone(c.losses)
	c.mu.Unlock()
	if !slices.ContainsFunc(losses, func(n int) bool { return n > i && n <= j }) {
		c.s.errorf("%s: the book was not told lost (exgate.StreamLost) %s, between emissions %d and %d; losses told before emissions %v", c.what, after, i, j, losses)
	}
}

// waitLost waits until a loss is told after emission i.
func (c *collector[T]) waitLost(i int, within time.Duration, after string) {
	c.s.t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		told := slices.ContainsFunc(c.losses, func(n int) bool { return n > i })
		changed := c.changed
		c.mu.Unlock()
		if told {
			return
		}
		select {
		case <-changed:
		case err := <-c.done:
			c.s.fatalf("%s returned %v while waiting for the loss %s", c.what, err, after)
		case <-deadline.C:
			c.s.fatalf("%s: the book was not told lost (exgate.StreamLost) within %v %s", c.what, within, after)
		}
	}
}

// all returns a copy of what was emitted so far.
func (c *collector[T]) all() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

// waitFor waits until an emission from index from on satisfies ok and
// returns its index; it fails the test after within, showing the last
// emissions.
func (c *collector[T]) waitFor(from int, within time.Duration, want string, ok func(T) bool) int {
	c.s.t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.got); i++ {
			if ok(c.got[i]) {
				c.mu.Unlock()
				return i
			}
		}
		from = max(from, len(c.got))
		changed := c.changed
		last := c.got[max(0, len(c.got)-3):]
		c.mu.Unlock()
		select {
		case <-changed:
		case err := <-c.done:
			c.s.fatalf("%s returned %v while waiting for %s", c.what, err, want)
		case <-deadline.C:
			c.s.fatalf("%s: no %s within %v; last emissions: %s", c.what, want, within, show(last))
		}
	}
}

func (s *streamSuite) watchOrders() *collector[exgate.Order] {
	return watch(s, "WatchOrders", func(ctx context.Context, emit func(exgate.Order)) error {
		return s.streamer.WatchOrders(ctx, s.Credential, emit)
	})
}

// rest places a GTC buy far below the market that rests on the book.
func (s *streamSuite) rest(id string) exgate.Order {
	_, tick, bid, _ := s.market(s.om)
	price := onTick(bid.Mul(decimal.RequireFromString("0.8")), tick)
	o, err := s.om.PlaceLimitOrder(s.t.Context(), s.Credential, s.limit(exgate.SideBuy, price, exgate.GTC, false, id))
	if err != nil || o.Status != exgate.OrderPending {
		s.fatalf("PlaceLimitOrder %s at %s = %s, %v; want PENDING", id, price, show(o), err)
	}
	return o
}

func hasStatus(id string, st exgate.OrderStatus) func(exgate.Order) bool {
	return func(o exgate.Order) bool { return o.ClientOrderID == id && o.Status == st }
}

func testStreamOrders(t *testing.T, s *streamSuite) {
	orders := s.watchOrders()
	// Placed before or after the subscription is live, the order is
	// emitted PENDING: from the open orders of the first emission or
	// live.
	s.rest("ctstream1")
	i := orders.waitFor(0, deliveryWithin, "PENDING ctstream1", hasStatus("ctstream1", exgate.OrderPending))
	filledAt := time.Now()
	s.hooks.Fill(t, "ctstream1")
	j := orders.waitFor(i+1, fillWithin, "FILLED ctstream1 within a second of the fill", hasStatus("ctstream1", exgate.OrderFilled))
	o := orders.all()[j]
	if o.ExecutedQuantity == nil || !o.ExecutedQuantity.Equal(s.BaseQuantity) || o.Asset1 != s.Symbol.Base || o.Exchange != s.name {
		s.errorf("FILLED emission = %s; want %s %s executed on %s", show(o), s.BaseQuantity, s.Symbol.Base, s.name)
	}
	t.Logf("%s: FILLED emitted %v after the fill", s.name, time.Since(filledAt).Round(time.Millisecond))
}

func testStreamOrdersAfterOutage(t *testing.T, s *streamSuite) {
	orders := s.watchOrders()
	s.rest("ctoutage1")
	i := orders.waitFor(0, deliveryWithin, "PENDING ctoutage1", hasStatus("ctoutage1", exgate.OrderPending))
	resume := s.hooks.Pause(t)
	s.hooks.Fill(t, "ctoutage1")
	resume()
	orders.waitFor(i+1, reconnectWithin, "FILLED ctoutage1 after the reconnect", hasStatus("ctoutage1", exgate.OrderFilled))
	// A second order placed after the reconnect is streamed live again.
	s.rest("ctoutage2")
	orders.waitFor(i+1, deliveryWithin, "PENDING ctoutage2 after the reconnect", hasStatus("ctoutage2", exgate.OrderPending))
}

func (s *streamSuite) watchBook() *collector[exgate.OrderBook] {
	var c *collector[exgate.OrderBook]
	started := make(chan struct{})
	c = watch(s, "WatchBook", func(ctx context.Context, emit func(exgate.OrderBook)) error {
		<-started
		return s.streamer.WatchBook(exgate.ContextWithStreamLost(ctx, c.lost), s.Credential, s.Symbol, emit)
	})
	close(started)
	return c
}

// sameBook compares two books level by level as decimals.
func sameBook(a, b exgate.OrderBook) bool {
	eq := func(x, y []exgate.Level) bool {
		return slices.EqualFunc(x, y, func(l, m exgate.Level) bool {
			lp, err1 := decimal.NewFromString(l.Price)
			mp, err2 := decimal.NewFromString(m.Price)
			lq, err3 := decimal.NewFromString(l.Quantity)
			mq, err4 := decimal.NewFromString(m.Quantity)
			return err1 == nil && err2 == nil && err3 == nil && err4 == nil && lp.Equal(mp) && lq.Equal(mq)
		})
	}
	return eq(a.Bids, b.Bids) && eq(a.Asks, b.Asks)
}

// waitBook waits for an emission equal to the fake's book now.
func (s *streamSuite) waitBook(book *collector[exgate.OrderBook], from int, after string) int {
	s.t.Helper()
	want := s.hooks.Book(s.t)
	if len(want.Bids) == 0 || len(want.Asks) == 0 {
		s.fatalf("the fake's book has an empty side: %s", show(want))
	}
	return book.waitFor(from, deliveryWithin, fmt.Sprintf("book equal to the fake's %s: %s", after, show(want)),
		func(b exgate.OrderBook) bool { return sameBook(b, want) })
}

func testStreamBook(t *testing.T, s *streamSuite) {
	book := s.watchBook()
	i := s.waitBook(book, 0, "at the start")
	for _, b := range book.all() {
		for _, side := range [][]exgate.Level{b.Bids, b.Asks} {
			if len(side) > exgate.MaxStreamDepth {
				s.errorf("a book side of %d levels, more than %d", len(side), exgate.MaxStreamDepth)
			}
			for _, l := range side {
				s.decimalField("level price", l.Price)
				s.decimalField("level quantity", l.Quantity)
			}
		}
	}
	s.hooks.ChangeBook(t)
	s.waitBook(book, i+1, "after a change")
}

func testStreamBookGap(t *testing.T, s *streamSuite) {
	if s.hooks.SkipSequence == nil {
		t.Skipf("%s sends no sequence numbers", s.name)
	}
	book := s.watchBook()
	i := s.waitBook(book, 0, "at the start")
	s.hooks.SkipSequence(t)
	s.hooks.ChangeBook(t)
	j := s.waitBook(book, i+1, "after a skipped sequence number")
	book.lostBetween(i, j, "after the skipped sequence number")
}

func testStreamBookChecksum(t *testing.T, s *streamSuite) {
	if s.hooks.BadChecksum == nil {
		t.Skipf("%s sends no checksums", s.name)
	}
	book := s.watchBook()
	i := s.waitBook(book, 0, "at the start")
	s.hooks.BadChecksum(t)
	s.hooks.ChangeBook(t)
	j := s.waitBook(book, i+1, "after a bad checksum")
	book.lostBetween(i, j, "after the bad checksum")
}

func testStreamBookAfterOutage(t *testing.T, s *streamSuite) {
	book := s.watchBook()
	i := s.waitBook(book, 0, "at the start")
	resume := s.hooks.Pause(t)
	book.waitLost(i, reconnectWithin, "when the stream dropped")
	n := len(book.all())
	resume()
	s.waitBook(book, n, "after the reconnect, unchanged")
}

func testStreamKlines(t *testing.T, s *streamSuite) {
	klines := watch(s, "WatchKlines", func(ctx context.Context, emit func(exgate.KlineUpdate)) error {
		return s.streamer.WatchKlines(ctx, s.Credential, s.Symbol, exgate.Interval1m, emit)
	})
	klines.waitFor(0, deliveryWithin, "the current kline", func(exgate.KlineUpdate) bool { return true })
	first := klines.all()[0]
	if first.Closed {
		s.fatalf("first kline emission is closed: %s", show(first))
	}
	open := first.Kline.OpenTime
	s.hooks.TradeKline(t, false)
	i := klines.waitFor(1, deliveryWithin, "the changed current kline", func(exgate.KlineUpdate) bool { return true })
	s.hooks.TradeKline(t, true)
	klines.waitFor(i+1, deliveryWithin, "the next kline", func(u exgate.KlineUpdate) bool { return u.Kline.OpenTime > open })

	got := klines.all()
	var current, closed []exgate.KlineUpdate
	next := -1
	for k, u := range got {
		switch {
		case u.Kline.OpenTime == open && u.Closed:
			closed = append(closed, u)
		case u.Kline.OpenTime == open:
			current = append(current, u)
		case u.Kline.OpenTime > open && next < 0:
			next = k
		}
	}
	if len(current) != 2 || len(closed) != 1 {
		s.fatalf("kline %d: %d open and %d closed emissions, want 2 (the first, one change) and 1: %s",
			open, len(current), len(closed), show(got))
	}
	if show(current[0].Kline) == show(current[1].Kline) {
		s.errorf("the change of the current kline emitted it unchanged: %s", show(current))
	}
	if k := slices.IndexFunc(got, func(u exgate.KlineUpdate) bool { return u.Closed }); k > next {
		s.errorf("the closed kline came after the next one: %s", show(got))
	}
	for _, u := range got {
		iv := exgate.Interval1m.Duration().Milliseconds()
		if u.Kline.OpenTime%iv != 0 || u.Kline.CloseTime != u.Kline.OpenTime+iv-1 {
			s.errorf("kline times %d..%d are not a 1m interval", u.Kline.OpenTime, u.Kline.CloseTime)
		}
	}
}
