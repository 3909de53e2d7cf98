package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
)

// streamed runs a Watch of the sim in the background with a tick the test
// gives; what it emits arrives on out.
type streamed[T any] struct {
	ticks chan time.Time
	out   chan T
}

func watch[T any](t *testing.T, w func(e *sim.Exchange, ctx context.Context, emit func(T)) error) (*streamed[T], *sim.Exchange, *clock) {
	t.Helper()
	s := &streamed[T]{ticks: make(chan time.Time), out: make(chan T, 1000)}
	clk := &clock{t: testNow}
	l := sim.NewMemoryLedger()
	l.Now = clk.Now
	e := sim.New(sim.Options{Ledger: l, Now: clk.Now, Tick: func(time.Duration) (<-chan time.Time, func()) { return s.ticks, func() {} }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w(e, ctx, func(v T) { s.out <- v }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch returned %v", err)
		}
	})
	return s, e, clk
}

func (s *streamed[T]) tick(t *testing.T) {
	t.Helper()
	select {
	case s.ticks <- time.Time{}:
	case <-time.After(5 * time.Second):
		t.Fatal("the Watch took no tick")
	}
	// A second tick returns once the first one's work is done.
	select {
	case s.ticks <- time.Time{}:
	case <-time.After(5 * time.Second):
		t.Fatal("the Watch took no tick")
	}
}

func (s *streamed[T]) next(t *testing.T) T {
	t.Helper()
	select {
	case v := <-s.out:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("nothing emitted")
		var zero T
		return zero
	}
}

func (s *streamed[T]) none(t *testing.T) {
	t.Helper()
	select {
	case v := <-s.out:
		t.Fatalf("unexpected %+v", v)
	default:
	}
}

// TestWatchOrdersSeesFillsOnThePricePath: a resting order is emitted when
// placed (the notice), and its fill, which happens on the price path with
// no call to the sim, is found by the scan of a later tick.
func TestWatchOrdersSeesFillsOnThePricePath(t *testing.T) {
	cred := testCredential()
	s, e, clk := watch(t, func(e *sim.Exchange, ctx context.Context, emit func(exgate.Order)) error {
		return e.WatchOrders(ctx, cred, emit)
	})
	ctx := t.Context()
	// Just above the market, which rises by 0.3 % within the hour on the
	// default seed.
	_, ask := bestPrices(t, e, btcUSDT)
	price := ask.Mul(dec("1.001")).Round(2)
	if _, err := e.PlaceLimitOrder(ctx, cred, limitReq("near", exgate.SideSell, "0.01", price.String(), exgate.GTC, false)); err != nil {
		t.Fatal(err)
	}
	if o := s.next(t); o.ClientOrderID != "near" || o.Status != exgate.OrderPending {
		t.Fatalf("placed: %+v", o)
	}
	s.tick(t)
	s.none(t) // nothing changed
	for step := range 2000 {
		clk.Add(10 * time.Second)
		s.tick(t)
		select {
		case o := <-s.out:
			if o.Status != exgate.OrderFilled && o.Status != exgate.OrderPartiallyFilled {
				t.Fatalf("step %d: %+v", step, o)
			}
			q, err := e.QueryOrder(ctx, cred, exgate.OrderQuery{ClientOrderID: "near"})
			if err != nil || (o.Status == exgate.OrderFilled && q.Status != exgate.OrderFilled) {
				t.Fatalf("emitted %s, the sim says %+v %v", o.Status, q, err)
			}
			if o.Status == exgate.OrderFilled {
				s.tick(t)
				s.none(t) // emitted once
				return
			}
		default:
		}
	}
	t.Fatal("the order never filled in 2000 steps of 10 s")
}

// TestWatchOrdersCancelOnce: a cancel is emitted once, though both the
// notice and the scan see it.
func TestWatchOrdersCancelOnce(t *testing.T) {
	cred := testCredential()
	s, e, _ := watch(t, func(e *sim.Exchange, ctx context.Context, emit func(exgate.Order)) error {
		return e.WatchOrders(ctx, cred, emit)
	})
	ctx := t.Context()
	bid, _ := bestPrices(t, e, btcUSDT)
	if _, err := e.PlaceLimitOrder(ctx, cred, limitReq("far", exgate.SideBuy, "0.01", bid.Mul(dec("0.5")).Round(2).String(), exgate.GTC, false)); err != nil {
		t.Fatal(err)
	}
	s.next(t)
	if _, err := e.CancelOrder(ctx, cred, exgate.CancelRequest{ClientOrderID: "far"}); err != nil {
		t.Fatal(err)
	}
	if o := s.next(t); o.Status != exgate.OrderCanceled {
		t.Fatalf("canceled: %+v", o)
	}
	s.tick(t)
	s.none(t)
}

// TestWatchBookEachSecond: the book of each second, 100 levels a side,
// once per second.
func TestWatchBookEachSecond(t *testing.T) {
	cred := testCredential()
	s, e, clk := watch(t, func(e *sim.Exchange, ctx context.Context, emit func(exgate.OrderBook)) error {
		return e.WatchBook(ctx, cred, btcUSDT, emit)
	})
	first := s.next(t)
	want, err := e.OrderBook(t.Context(), cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: exgate.MaxStreamDepth})
	if err != nil || len(first.Bids) != exgate.MaxStreamDepth || first.Bids[0] != want.Bids[0] || first.Asks[99] != want.Asks[99] {
		t.Fatalf("first book %d levels, %v", len(first.Bids), err)
	}
	s.tick(t)
	s.none(t) // the same second
	clk.Add(time.Second)
	s.tick(t)
	if b := s.next(t); b.Bids[0] == first.Bids[0] && b.Asks[0] == first.Asks[0] && b.Bids[1] == first.Bids[1] {
		t.Fatal("the next second's book is the same")
	}
	s.none(t)
}

func TestWatchUnknownPair(t *testing.T) {
	e, _, _ := newSim(t)
	err := e.WatchBook(t.Context(), testCredential(), exgate.Symbol{Base: "FOO", Quote: "USDT"}, func(exgate.OrderBook) {})
	wantCode(t, err, exgate.CodeUnknownSymbol, "")
}
