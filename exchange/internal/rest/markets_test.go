package rest

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

type testPair struct {
	id  string
	sym exgate.Symbol
}

// testMarkets is a Markets over a list the test sets, with a clock the
// test moves; fetches counts the fetches.
type testMarkets struct {
	*Markets[testPair]
	mu      sync.Mutex
	pairs   []testPair
	fail    error
	now     time.Time
	fetches atomic.Int32
}

func newTestMarkets(pairs ...testPair) *testMarkets {
	m := &testMarkets{pairs: pairs, now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	m.Markets = &Markets[testPair]{
		Exchange: "ex", What: "ex pairs", TTL: 10 * time.Minute, MinRefresh: time.Minute,
		Now: func() time.Time { m.mu.Lock(); defer m.mu.Unlock(); return m.now },
		Log: slog.New(slog.DiscardHandler),
		Key: func(p testPair) (exgate.Symbol, string) { return p.sym, p.id },
		Fetch: func(context.Context) ([]testPair, error) {
			m.fetches.Add(1)
			m.mu.Lock()
			defer m.mu.Unlock()
			return append([]testPair(nil), m.pairs...), m.fail
		},
	}
	return m
}

func (m *testMarkets) set(fail error, pairs ...testPair) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pairs, m.fail = pairs, fail
}

func (m *testMarkets) advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
}

var (
	btcUSDT = testPair{"BTC-USDT", exgate.Symbol{Base: "BTC", Quote: "USDT"}}
	ethUSDT = testPair{"ETH-USDT", exgate.Symbol{Base: "ETH", Quote: "USDT"}}
	solUSDT = testPair{"SOL-USDT", exgate.Symbol{Base: "SOL", Quote: "USDT"}}
)

func TestMarketsLookup(t *testing.T) {
	ctx := t.Context()
	m := newTestMarkets(btcUSDT, ethUSDT)
	if p, err := m.Lookup(ctx, btcUSDT.sym); err != nil || p != btcUSDT {
		t.Fatalf("Lookup(BTC/USDT) = %v, %v", p, err)
	}
	if n := m.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches on first use, want 1", n)
	}
	// The inverse pair is named; a list younger than MinRefresh is not
	// fetched again for an unknown pair.
	_, err := m.Lookup(ctx, btcUSDT.sym.Inverse())
	if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Code != exgate.CodeUnknownSymbol || e.Detail != "ex does not list USDT/BTC; it lists the inverse pair BTC/USDT (asset1 BTC, asset2 USDT)" {
		t.Fatalf("Lookup(USDT/BTC) = %v", err)
	}
	m.set(nil, btcUSDT, ethUSDT, solUSDT)
	if _, err := m.Lookup(ctx, solUSDT.sym); exgate.ErrorCode(err) != exgate.CodeUnknownSymbol || m.fetches.Load() != 1 {
		t.Fatalf("Lookup(SOL/USDT) on a fresh list = %v after %d fetches; want UNKNOWN_SYMBOL and no fetch", err, m.fetches.Load())
	}
	// Older than MinRefresh: a new listing is found by fetching again.
	m.advance(time.Minute + time.Second)
	if p, err := m.Lookup(ctx, solUSDT.sym); err != nil || p != solUSDT || m.fetches.Load() != 2 {
		t.Fatalf("Lookup(SOL/USDT) on an older list = %v, %v after %d fetches", p, err, m.fetches.Load())
	}
	if p, found, err := m.ByID(ctx, "ETH-USDT"); err != nil || !found || p != ethUSDT {
		t.Fatalf("ByID(ETH-USDT) = %v, %v, %v", p, found, err)
	}
	if _, found, err := m.ByID(ctx, "DOGE-USDT"); err != nil || found {
		t.Fatalf("ByID(DOGE-USDT) = %v, %v; want not found", found, err)
	}
	// A failed fetch is the caller's error.
	m2 := newTestMarkets()
	m2.set(errors.New("down"))
	if _, err := m2.Lookup(ctx, btcUSDT.sym); err == nil || err.Error() != "down" {
		t.Fatalf("Lookup with the exchange down = %v", err)
	}
}

// TestMarketsOneFetch: while a fetch is in flight, the other first uses
// wait for it instead of fetching too.
func TestMarketsOneFetch(t *testing.T) {
	m := newTestMarkets(btcUSDT)
	release := make(chan struct{})
	var started atomic.Int32
	fetch := m.Fetch
	m.Fetch = func(ctx context.Context) ([]testPair, error) { started.Add(1); <-release; return fetch(ctx) }
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = m.Lookup(t.Context(), btcUSDT.sym) })
	}
	// The fetch in flight is held; the callers that come meanwhile must
	// not start another (a second would count here at once).
	deadline := time.Now().Add(10 * time.Second)
	for started.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no fetch started")
		}
		runtime.Gosched()
	}
	for range 10000 {
		runtime.Gosched()
		if n := started.Load(); n != 1 {
			open()
			wg.Wait()
			t.Fatalf("%d fetches in flight at once, want 1", n)
		}
	}
	open()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestMarketsRefresh: a list older than TTL is served while it is fetched
// again in the background; a failed refresh keeps it.
func TestMarketsRefresh(t *testing.T) {
	ctx := t.Context()
	m := newTestMarkets(btcUSDT)
	first, err := m.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitFetches := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for m.fetches.Load() < n || m.refreshing.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("%d fetches, want %d", m.fetches.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	m.set(errors.New("down"))
	m.advance(11 * time.Minute)
	if l, err := m.Current(ctx); err != nil || l != first {
		t.Fatalf("Current of an old list = %v, %v; want the cached list at once", l, err)
	}
	waitFetches(2)
	if l, _ := m.Current(ctx); l != first {
		// Still old: this call starts another refresh, which must not
		// have replaced the list when it failed.
		t.Fatal("a failed refresh replaced the list")
	}
	waitFetches(3)
	m.set(nil, btcUSDT, ethUSDT)
	if _, err := m.Current(ctx); err != nil {
		t.Fatal(err)
	}
	waitFetches(4)
	l, err := m.Current(ctx)
	if err != nil || l == first || len(l.BySym) != 2 {
		t.Fatalf("after a refresh: %+v, %v; want the new list of 2", l, err)
	}
}

func TestMarketsSymbols(t *testing.T) {
	ctx := t.Context()
	m := newTestMarkets(ethUSDT, btcUSDT)
	info := func(p testPair) exgate.SymbolInfo { return exgate.SymbolInfo{Asset1: p.sym.Base, Asset2: p.sym.Quote} }
	all, err := m.Symbols(ctx, exgate.Symbol{}, info)
	if err != nil || len(all) != 2 || all[0].Asset1 != "BTC" || all[1].Asset1 != "ETH" {
		t.Fatalf("Symbols() = %+v, %v; want BTC/USDT then ETH/USDT", all, err)
	}
	one, err := m.Symbols(ctx, ethUSDT.sym, info)
	if err != nil || len(one) != 1 || one[0].Asset1 != "ETH" {
		t.Fatalf("Symbols(ETH/USDT) = %+v, %v", one, err)
	}
	none, err := m.Symbols(ctx, ethUSDT.sym.Inverse(), info)
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("Symbols(USDT/ETH) = %#v, %v; want an empty list", none, err)
	}
}
