package gateio_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
)

// streamOptions make the streams notice a dead connection within a
// second and never close a kline at the boundary during a test (the
// Klines case closes it with the next kline).
func streamOptions(o *gateio.Options) {
	o.WSPingInterval = 500 * time.Millisecond
	o.KlineCloseGrace = time.Minute
}

func TestStreams(t *testing.T) {
	exchangetest.RunStreams(t, func(t *testing.T) exchangetest.StreamSetup {
		e := newEnv(t, envOptions{adapter: streamOptions})
		const pair = "BTC_USDT"
		return exchangetest.StreamSetup{
			Setup: conformanceSetup(e),
			Fill: func(t *testing.T, id string) {
				must(t, e.srv.FillOrder("gate-key", "t-"+id))
			},
			Pause: func(*testing.T) func() { return e.srv.PauseStreams() },
			Book: func(*testing.T) exgate.OrderBook {
				bids, asks := e.srv.BookLevels(pair, exgate.MaxStreamDepth)
				return exgate.OrderBook{Bids: levels(bids), Asks: levels(asks)}
			},
			ChangeBook:   func(t *testing.T) { must(t, e.srv.ChangeBook(pair)) },
			SkipSequence: func(t *testing.T) { must(t, e.srv.SkipBookUpdate(pair)) },
			TradeKline:   func(t *testing.T, next bool) { must(t, e.srv.TradeCandle(pair, "1m", next)) },
		}
	})
}

func levels(ls []gateiofake.Level) []exgate.Level {
	out := make([]exgate.Level, len(ls))
	for i, l := range ls {
		out[i] = exgate.Level{Price: l.Price, Quantity: l.Amount}
	}
	return out
}

// A wrong secret is refused by spot.orders (code 4): WatchOrders ends at
// once with EXCHANGE_AUTH_FAILED instead of reconnecting.
func TestWatchOrdersAuthRefused(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	cred := e.cred
	cred.Secret = "wrong-secret"
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := e.ex.WatchOrders(ctx, cred, func(o exgate.Order) { t.Errorf("emitted %+v with a refused key", o) })
	if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != exgate.CodeExchangeAuthFailed {
		t.Fatalf("WatchOrders = %v, want EXCHANGE_AUTH_FAILED", err)
	}
	if n := e.srv.StreamAuthFailures(); n != 1 {
		t.Errorf("the fake refused %d subscriptions, want 1 (no retry)", n)
	}
}

// collector gathers what a Watch call emits, for waits with a deadline.
type collector[T any] struct {
	mu      sync.Mutex
	got     []T
	changed chan struct{}
}

func newCollector[T any]() *collector[T] { return &collector[T]{changed: make(chan struct{})} }

func (c *collector[T]) add(v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, v)
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *collector[T]) all() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

// waitFor waits up to within for an emission from index from on that
// satisfies ok and returns its index.
func (c *collector[T]) waitFor(t *testing.T, from int, within time.Duration, what string, ok func(T) bool) int {
	t.Helper()
	deadline := time.After(within)
	for {
		c.mu.Lock()
		for i := from; i < len(c.got); i++ {
			if ok(c.got[i]) {
				c.mu.Unlock()
				return i
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no %s within %v", what, within)
		}
	}
}

// run calls watch in the background until the test ends; it must then
// return nil.
func run(t *testing.T, watch func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch returned %v when its context ended", err)
		}
	})
}

// A connection that goes silent without closing is noticed within twice
// the ping interval and replaced; the book is then read again.
func TestStreamSilentConnection(t *testing.T) {
	const ping = 100 * time.Millisecond
	e := newEnv(t, envOptions{adapter: func(o *gateio.Options) { o.WSPingInterval = ping }})
	books := newCollector[exgate.OrderBook]()
	run(t, func(ctx context.Context) error { return e.ex.WatchBook(ctx, e.cred, btcUSDT, books.add) })
	i := books.waitFor(t, 0, 5*time.Second, "first book", func(exgate.OrderBook) bool { return true })
	conns := e.srv.StreamConnections()
	e.srv.SilenceStreams(true)
	silenced := time.Now()
	deadline := time.Now().Add(5 * time.Second)
	for e.srv.StreamConnections() == conns {
		if time.Now().After(deadline) {
			t.Fatal("the silent connection was not replaced within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	noticed := time.Since(silenced)
	t.Logf("silent connection replaced %v after it went silent (ping %v)", noticed.Round(time.Millisecond), ping)
	if noticed < 2*ping-ping/2 {
		t.Errorf("replaced after %v, before twice the ping interval: a healthy quiet connection would be dropped", noticed)
	}
	e.srv.SilenceStreams(false)
	must(t, e.srv.ChangeBook("BTC_USDT"))
	bids, asks := e.srv.BookLevels("BTC_USDT", exgate.MaxStreamDepth)
	want := exgate.OrderBook{Bids: levels(bids), Asks: levels(asks)}
	books.waitFor(t, i+1, 5*time.Second, "the book after the reconnect", func(b exgate.OrderBook) bool { return reflect.DeepEqual(b, want) })
}

// A kline that ends while the stream is down is emitted closed once after
// the reconnect, then the new one.
func TestStreamKlinesAcrossReconnect(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	klines := newCollector[exgate.KlineUpdate]()
	run(t, func(ctx context.Context) error {
		return e.ex.WatchKlines(ctx, e.cred, btcUSDT, exgate.Interval1m, klines.add)
	})
	klines.waitFor(t, 0, 5*time.Second, "the current kline", func(exgate.KlineUpdate) bool { return true })
	open := klines.all()[0].Kline.OpenTime
	resume := e.srv.PauseStreams()
	must(t, e.srv.TradeCandle("BTC_USDT", "1m", true))
	resume()
	klines.waitFor(t, 1, 10*time.Second, "the next kline", func(u exgate.KlineUpdate) bool { return u.Kline.OpenTime > open })
	closed := 0
	for _, u := range klines.all() {
		if u.Closed {
			closed++
			if u.Kline.OpenTime != open {
				t.Errorf("closed emission of %d, want %d", u.Kline.OpenTime, open)
			}
		}
	}
	if closed != 1 {
		t.Errorf("%d closed emissions, want 1: %+v", closed, klines.all())
	}
}

func TestWatchKlinesUnknownInterval(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	err := e.ex.WatchKlines(t.Context(), e.cred, btcUSDT, "2m", func(exgate.KlineUpdate) {})
	if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != exgate.CodeInvalidParameter {
		t.Fatalf("WatchKlines(2m) = %v, want INVALID_PARAMETER", err)
	}
}

// A built interval (3m from 1m) starts from the kline RecentKlines
// builds, follows every push of its source and closes when the source
// moves to the next bucket.
func TestWatchKlinesBuilt(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	ctx := t.Context()
	rest, err := e.ex.RecentKlines(ctx, e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: exgate.Interval3m, Limit: 1})
	must(t, err)
	src, err := e.ex.RecentKlines(ctx, e.cred, exgate.KlineRequest{Symbol: btcUSDT, Interval: exgate.Interval1m, Limit: 1})
	must(t, err)
	klines := newCollector[exgate.KlineUpdate]()
	run(t, func(ctx context.Context) error {
		return e.ex.WatchKlines(ctx, e.cred, btcUSDT, exgate.Interval3m, klines.add)
	})
	klines.waitFor(t, 0, 5*time.Second, "the current 3m kline", func(exgate.KlineUpdate) bool { return true })
	if first := klines.all()[0]; first.Closed || !reflect.DeepEqual(first.Kline, rest[0]) {
		t.Fatalf("first emission %+v, want RecentKlines' %+v", first, rest[0])
	}
	must(t, e.srv.TradeCandle("BTC_USDT", "1m", false))
	i := klines.waitFor(t, 1, 5*time.Second, "the 3m kline after a trade", func(exgate.KlineUpdate) bool { return true })
	traded := e.srv.Candle("BTC_USDT", "1m", time.UnixMilli(src[0].OpenTime)) // the pure function: before the trade
	if got := klines.all()[i]; got.Closed || got.Kline.OpenTime != rest[0].OpenTime || got.Kline.ClosePrice == traded.Close {
		t.Fatalf("after a trade: %+v, want the same open 3m kline with a new close", got)
	}
	// Next 1m candles until one opens the next 3m bucket: those before it
	// update the same 3m kline, that one closes it.
	for n := int64(1); ; n++ {
		must(t, e.srv.TradeCandle("BTC_USDT", "1m", true))
		open := src[0].OpenTime + n*time.Minute.Milliseconds()
		if open%(3*time.Minute.Milliseconds()) == 0 {
			klines.waitFor(t, i+1, 5*time.Second, "the next 3m kline", func(u exgate.KlineUpdate) bool { return u.Kline.OpenTime == open })
			break
		}
		i = klines.waitFor(t, i+1, 5*time.Second, "the 3m kline after the next 1m", func(u exgate.KlineUpdate) bool {
			return u.Kline.OpenTime == rest[0].OpenTime && !u.Closed && u.Kline.OpenPrice == rest[0].OpenPrice
		})
	}
	closed := 0
	for _, u := range klines.all() {
		if u.Closed {
			closed++
		}
	}
	if closed != 1 {
		t.Errorf("%d closed emissions, want 1: %+v", closed, klines.all())
	}
}

func TestWatchBookUnknownSymbol(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	err := e.ex.WatchBook(t.Context(), e.cred, exgate.Symbol{Base: "NOPE", Quote: "USDT"}, func(exgate.OrderBook) {})
	if xe, ok := errors.AsType[*exgate.Error](err); !ok || xe.Code != exgate.CodeUnknownSymbol {
		t.Fatalf("WatchBook(NOPE/USDT) = %v, want UNKNOWN_SYMBOL", err)
	}
}

// Orders placed outside the gateway are streamed with Gate's id, and the
// open orders come first.
func TestWatchOrdersOutsideAndOpen(t *testing.T) {
	e := newEnv(t, envOptions{adapter: streamOptions})
	first, err := e.srv.PlaceOutside("gate-key", gateiofake.OutsideOrder{Pair: "ETH_USDT", Side: "buy", Amount: "0.1", Price: "2000"})
	must(t, err)
	orders := newCollector[exgate.Order]()
	run(t, func(ctx context.Context) error { return e.ex.WatchOrders(ctx, e.cred, orders.add) })
	orders.waitFor(t, 0, 5*time.Second, "the open order placed before", func(o exgate.Order) bool {
		return o.ID == first && o.ExchangeOrderID == first && o.ClientOrderID == "" && o.Status == exgate.OrderPending
	})
	if err := e.srv.WaitStreams(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	second, err := e.srv.PlaceOutside("gate-key", gateiofake.OutsideOrder{Pair: "ETH_USDT", Side: "sell", Amount: "0.1", Price: "4000"})
	must(t, err)
	orders.waitFor(t, 0, 5*time.Second, "the order placed on the site", func(o exgate.Order) bool {
		return o.ID == second && o.Asset1 == "ETH" && o.Side == exgate.SideSell && o.Status == exgate.OrderPending
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
