package kraken_test

import (
	"context"
	"encoding/base64"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/exchangetest"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// btcUSDTKey is the fake's pair key of btcUSDT.
const btcUSDTKey = "XBTUSDT"

func fakeBook(srv *krakenfake.Server, n int) exgate.OrderBook {
	bids, asks := srv.Book(btcUSDTKey, n)
	conv := func(ls []krakenfake.Level) []exgate.Level {
		out := make([]exgate.Level, len(ls))
		for i, l := range ls {
			out[i] = exgate.Level{Price: l.Price.String(), Quantity: l.Volume.String()}
		}
		return out
	}
	return exgate.OrderBook{Bids: conv(bids), Asks: conv(asks)}
}

func TestStreams(t *testing.T) {
	exchangetest.RunStreams(t, func(t *testing.T) exchangetest.StreamSetup {
		e := newEnv(t, krakenfake.Options{}, nil)
		return exchangetest.StreamSetup{
			Setup: conformanceSetup(e),
			Fill: func(t *testing.T, id string) {
				if err := e.srv.FillOrder(testKey, id); err != nil {
					t.Fatal(err)
				}
			},
			Pause: func(*testing.T) func() { return e.srv.PauseStreams() },
			Book:  func(*testing.T) exgate.OrderBook { return fakeBook(e.srv, exgate.MaxStreamDepth) },
			ChangeBook: func(t *testing.T) {
				if err := e.srv.ChangeBook(btcUSDTKey); err != nil {
					t.Fatal(err)
				}
			},
			// Kraken's book channel has no sequence numbers: its CRC32
			// is the check (BookChecksum).
			SkipSequence: nil,
			BadChecksum:  func(*testing.T) { e.srv.BadChecksum() },
			TradeKline: func(t *testing.T, next bool) {
				if err := e.srv.TradeKline(btcUSDTKey, next); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

// emissions collects what a Watch call emits.
type emissions[T any] struct {
	mu      sync.Mutex
	got     []T
	changed chan struct{}
}

func newEmissions[T any]() *emissions[T] { return &emissions[T]{changed: make(chan struct{})} }

func (e *emissions[T]) add(v T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, v)
	close(e.changed)
	e.changed = make(chan struct{})
}

func (e *emissions[T]) all() []T {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

// wait waits up to 5 s for an emission from index from on with ok.
func (e *emissions[T]) wait(t *testing.T, from int, what string, ok func(T) bool) int {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		e.mu.Lock()
		for i := from; i < len(e.got); i++ {
			if ok(e.got[i]) {
				e.mu.Unlock()
				return i
			}
		}
		from = max(from, len(e.got))
		changed := e.changed
		e.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no %s within 5 s", what)
		}
	}
}

// background runs watch until the test ends; it must return nil then.
func background(t *testing.T, watch func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Watch returned %v when its context ended", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Watch did not return within 5 s of its context ending")
		}
	})
}

func sameBookAs(want exgate.OrderBook) func(exgate.OrderBook) bool {
	return func(b exgate.OrderBook) bool { return reflect.DeepEqual(normBook(b), normBook(want)) }
}

func normBook(b exgate.OrderBook) [2][]string {
	var out [2][]string
	for i, side := range [][]exgate.Level{b.Bids, b.Asks} {
		for _, l := range side {
			out[i] = append(out[i], dec(l.Price).String()+"@"+dec(l.Quantity).String())
		}
	}
	return out
}

// TestWatchBookChecksumResubscribes: a wrong update is caught by the
// CRC32, the pair resubscribed on the same connection, and the wrong book
// never emitted.
func TestWatchBookChecksumResubscribes(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	got := newEmissions[exgate.OrderBook]()
	background(t, func(ctx context.Context) error { return e.ex.WatchBook(ctx, e.cred, btcUSDT, got.add) })
	before := fakeBook(e.srv, exgate.MaxStreamDepth)
	i := got.wait(t, 0, "the first book", sameBookAs(before))
	e.srv.BadChecksum()
	if err := e.srv.ChangeBook(btcUSDTKey); err != nil {
		t.Fatal(err)
	}
	after := fakeBook(e.srv, exgate.MaxStreamDepth)
	got.wait(t, i+1, "the book after the resync", sameBookAs(after))
	for k, b := range got.all() {
		if !sameBookAs(before)(b) && !sameBookAs(after)(b) {
			t.Errorf("emission %d is neither the book before nor after the change: %v", k, normBook(b))
		}
	}
	if n := e.srv.StreamConns(false); n != 1 {
		t.Errorf("%d connections; the resubscription should reuse the first", n)
	}
}

// TestWatchBookSilentConnection: a connection that stops sending (no
// heartbeat) is replaced after WSReadTimeout.
func TestWatchBookSilentConnection(t *testing.T) {
	e := newEnv(t, krakenfake.Options{Heartbeat: -1}, func(o *kraken.Options) { o.WSReadTimeout = 100 * time.Millisecond })
	got := newEmissions[exgate.OrderBook]()
	background(t, func(ctx context.Context) error { return e.ex.WatchBook(ctx, e.cred, btcUSDT, got.add) })
	got.wait(t, 0, "the first book", func(exgate.OrderBook) bool { return true })
	deadline := time.Now().Add(5 * time.Second)
	for e.srv.StreamConns(false) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections after 5 s of silence; want reconnects every 100 ms", e.srv.StreamConns(false))
		}
		time.Sleep(10 * time.Millisecond) // polling the fake's counter
	}
	// Each new connection starts with a snapshot: still the fake's book.
	got.wait(t, 1, "a book from a later connection", sameBookAs(fakeBook(e.srv, exgate.MaxStreamDepth)))
}

func TestWatchRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *env)
		watch func(e *env, ctx context.Context) error
		code  exgate.Code
	}{
		{"orders, wrong secret", func(e *env) { e.cred.Secret = base64.StdEncoding.EncodeToString([]byte("not the secret")) },
			func(e *env, ctx context.Context) error { return e.ex.WatchOrders(ctx, e.cred, func(exgate.Order) {}) },
			exgate.CodeExchangeAuthFailed},
		{"orders, token refused by the WebSocket", func(e *env) { e.srv.RefuseTokens(true) },
			func(e *env, ctx context.Context) error { return e.ex.WatchOrders(ctx, e.cred, func(exgate.Order) {}) },
			exgate.CodeExchangeAuthFailed},
		{"book, unknown pair", func(*env) {},
			func(e *env, ctx context.Context) error {
				return e.ex.WatchBook(ctx, e.cred, exgate.Symbol{Base: "BTC", Quote: "XYZ"}, func(exgate.OrderBook) {})
			},
			exgate.CodeUnknownSymbol},
		{"klines, a built interval", func(*env) {},
			func(e *env, ctx context.Context) error {
				return e.ex.WatchKlines(ctx, e.cred, btcUSDT, exgate.Interval3m, func(exgate.KlineUpdate) {})
			},
			exgate.CodeInvalidParameter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, krakenfake.Options{}, nil)
			tc.setup(e)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err := tc.watch(e, ctx)
			var xe *exgate.Error
			if !errors.As(err, &xe) || xe.Code != tc.code {
				t.Fatalf("Watch = %v, want %s", err, tc.code)
			}
		})
	}
}

// TestWatchKlinesClosesAtBoundary: with no later kline, the current one
// is closed once its interval (and the grace) has passed on the
// adapter's clock.
func TestWatchKlinesClosesAtBoundary(t *testing.T) {
	var mu sync.Mutex
	now := testNow
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, krakenfake.Options{}, func(o *kraken.Options) { o.Now = clock })
	got := newEmissions[exgate.KlineUpdate]()
	background(t, func(ctx context.Context) error {
		return e.ex.WatchKlines(ctx, e.cred, btcUSDT, exgate.Interval1m, got.add)
	})
	got.wait(t, 0, "the current kline", func(exgate.KlineUpdate) bool { return true })
	mu.Lock()
	now = testNow.Truncate(time.Minute).Add(time.Minute + 3*time.Second)
	mu.Unlock()
	i := got.wait(t, 1, "the closed kline", func(u exgate.KlineUpdate) bool { return u.Closed })
	first := got.all()[0]
	if c := got.all()[i]; c.Kline.OpenTime != first.Kline.OpenTime || len(got.all()) != 2 {
		t.Errorf("emissions %+v; want the kline then it closed", got.all())
	}
	// A later update of the closed kline is not emitted again; the next
	// kline is.
	if err := e.srv.TradeKline(btcUSDTKey, true); err != nil {
		t.Fatal(err)
	}
	got.wait(t, 2, "the next kline", func(u exgate.KlineUpdate) bool { return u.Kline.OpenTime > first.Kline.OpenTime && !u.Closed })
	for _, u := range got.all()[2:] {
		if u.Kline.OpenTime == first.Kline.OpenTime {
			t.Errorf("the closed kline was emitted again: %+v", u)
		}
	}
}

// TestWatchOrdersOutsideAndCancel: an order placed on the website (no
// client id) and a cancel reach the stream with Kraken's txid as ID.
func TestWatchOrdersOutsideAndCancel(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	got := newEmissions[exgate.Order]()
	background(t, func(ctx context.Context) error { return e.ex.WatchOrders(ctx, e.cred, got.add) })
	if err := e.srv.WaitStreams(t.Context(), true, 1); err != nil {
		t.Fatal(err)
	}
	txid, err := e.srv.PlaceOutside(testKey, btcUSDTKey, "sell", "0.01", "90000")
	if err != nil {
		t.Fatal(err)
	}
	i := got.wait(t, 0, "the outside order", func(o exgate.Order) bool { return o.ID == txid && o.Status == exgate.OrderPending })
	o := got.all()[i]
	if o.ClientOrderID != "" || o.Side != exgate.SideSell || o.Price == nil || o.Price.String() != "90000" || o.Quantity.String() != "0.01" {
		t.Errorf("outside order = %+v", o)
	}
	if _, err := e.ex.CancelOrder(t.Context(), e.cred, exgate.CancelRequest{Symbol: btcUSDT, ExchangeOrderID: txid}); err != nil {
		t.Fatal(err)
	}
	got.wait(t, i+1, "the canceled order", func(o exgate.Order) bool { return o.ID == txid && o.Status == exgate.OrderCanceled })
}
