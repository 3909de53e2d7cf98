package coalesce_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/coalesce"
)

// slowMarket counts calls and holds each one until released, so that
// concurrent requests certainly overlap.
type slowMarket struct {
	exgate.Exchange
	calls   atomic.Int64
	release chan struct{}
	err     error
}

func (s *slowMarket) RecentKlines(ctx context.Context, _ exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	s.calls.Add(1)
	<-s.release
	if s.err != nil {
		return nil, s.err
	}
	return make([]exgate.Kline, req.Limit), nil
}

// releaseWhenCalled lets the callers reach the shared call, then releases
// it.
func (s *slowMarket) releaseWhenCalled() {
	for s.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(s.release)
}

func (s *slowMarket) OrderBook(ctx context.Context, _ exgate.Credential, req exgate.OrderBookRequest) (exgate.OrderBook, error) {
	s.calls.Add(1)
	<-s.release
	return exgate.OrderBook{Bids: make([]exgate.Level, req.Limit)}, s.err
}

func TestThousandIdenticalRequestsShareOneCall(t *testing.T) {
	up := &slowMarket{release: make(chan struct{})}
	ex := coalesce.New(up, coalesce.Options{})
	req := exgate.KlineRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Interval: exgate.Interval1m, Limit: 500}
	const n = 1000
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(n)
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			started.Done()
			ks, err := ex.RecentKlines(t.Context(), exgate.Credential{}, req)
			if err == nil && len(ks) != 500 {
				err = errors.New("wrong length")
			}
			errs <- err
		})
	}
	started.Wait()
	up.releaseWhenCalled()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if c := up.calls.Load(); c > 5 {
		t.Fatalf("%d upstream calls for %d identical concurrent requests, want at most a handful", c, n)
	}
	t.Logf("%d upstream calls for %d requests", up.calls.Load(), n)
}

func TestDifferentRequestsAreNotShared(t *testing.T) {
	up := &slowMarket{release: make(chan struct{})}
	close(up.release)
	ex := coalesce.New(up, coalesce.Options{})
	sym := exgate.Symbol{Base: "BTC", Quote: "USDT"}
	for _, req := range []exgate.KlineRequest{
		{Symbol: sym, Interval: exgate.Interval1m, Limit: 10},
		{Symbol: sym, Interval: exgate.Interval1h, Limit: 10},
		{Symbol: sym, Interval: exgate.Interval1m, Limit: 11},
		{Symbol: exgate.Symbol{Base: "ETH", Quote: "USDT"}, Interval: exgate.Interval1m, Limit: 10},
	} {
		if _, err := ex.RecentKlines(t.Context(), exgate.Credential{}, req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ex.OrderBook(t.Context(), exgate.Credential{}, exgate.OrderBookRequest{Symbol: sym, Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if c := up.calls.Load(); c != 5 {
		t.Fatalf("%d calls, want 5 (one per distinct request)", c)
	}
}

func TestMaxAge(t *testing.T) {
	up := &slowMarket{release: make(chan struct{})}
	close(up.release)
	now := time.Unix(1000, 0)
	ex := coalesce.New(up, coalesce.Options{MaxAge: 100 * time.Millisecond, Now: func() time.Time { return now }})
	req := exgate.OrderBookRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Limit: 5}
	for range 3 {
		if _, err := ex.OrderBook(t.Context(), exgate.Credential{}, req); err != nil {
			t.Fatal(err)
		}
	}
	if c := up.calls.Load(); c != 1 {
		t.Fatalf("%d calls inside MaxAge, want 1", c)
	}
	now = now.Add(100 * time.Millisecond)
	if _, err := ex.OrderBook(t.Context(), exgate.Credential{}, req); err != nil {
		t.Fatal(err)
	}
	if c := up.calls.Load(); c != 2 {
		t.Fatalf("%d calls after MaxAge, want 2", c)
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	up := &slowMarket{release: make(chan struct{}), err: exgate.Errorf(exgate.CodeExchangeUnavailable, "down")}
	close(up.release)
	ex := coalesce.New(up, coalesce.Options{MaxAge: time.Hour})
	req := exgate.KlineRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Interval: exgate.Interval1m, Limit: 1}
	for range 2 {
		if _, err := ex.RecentKlines(t.Context(), exgate.Credential{}, req); exgate.ErrorCode(err) != exgate.CodeExchangeUnavailable {
			t.Fatalf("err = %v", err)
		}
	}
	if c := up.calls.Load(); c != 2 {
		t.Fatalf("%d calls, want 2: an error must not be served again", c)
	}
}

func TestCallerDeadline(t *testing.T) {
	up := &slowMarket{release: make(chan struct{})}
	defer close(up.release)
	ex := coalesce.New(up, coalesce.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := ex.RecentKlines(ctx, exgate.Credential{}, exgate.KlineRequest{Symbol: exgate.Symbol{Base: "A", Quote: "B"}, Interval: exgate.Interval1m, Limit: 1})
	if exgate.ErrorCode(err) != exgate.CodeExchangeTimeout {
		t.Fatalf("err = %v", err)
	}
}

func TestJSONIsEncodedOnceAndMatches(t *testing.T) {
	up := &slowMarket{release: make(chan struct{})}
	close(up.release)
	ex := coalesce.New(up, coalesce.Options{MaxAge: time.Minute})
	req := exgate.KlineRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Interval: exgate.Interval1m, Limit: 3}
	a, err := ex.AppendRecentKlinesJSON(t.Context(), nil, exgate.Credential{}, req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ex.AppendRecentKlinesJSON(t.Context(), []byte("x"), exgate.Credential{}, req)
	if c := up.calls.Load(); c != 1 {
		t.Errorf("%d upstream calls for an answer kept for a minute, want 1", c)
	}
	if string(b) != "x"+string(a) {
		t.Errorf("appended %s to x, want x%s", b, a)
	}
	ks, _ := ex.RecentKlines(t.Context(), exgate.Credential{}, req)
	if want := exgate.AppendKlinesJSON(nil, ks); string(a) != string(want) {
		t.Fatalf("JSON %s, want %s", a, want)
	}
	breq := exgate.OrderBookRequest{Symbol: req.Symbol, Limit: 2}
	bj, _ := ex.OrderBookJSON(t.Context(), exgate.Credential{}, breq)
	book, _ := ex.OrderBook(t.Context(), exgate.Credential{}, breq)
	if want := exgate.AppendOrderBookJSON(nil, book); string(bj) != string(want) {
		t.Fatalf("book JSON %s, want %s", bj, want)
	}
}

// jsonMarket is a slowMarket that also answers klines in JSON, as the
// Binance adapter does.
type jsonMarket struct {
	*slowMarket
	jsonCalls atomic.Int64
}

func (j *jsonMarket) AppendRecentKlinesJSON(ctx context.Context, dst []byte, cred exgate.Credential, req exgate.KlineRequest) ([]byte, error) {
	j.jsonCalls.Add(1)
	ks, err := j.RecentKlines(ctx, cred, req)
	if err != nil {
		return dst, err
	}
	return exgate.AppendKlinesJSON(dst, ks), nil
}

// TestJSONFromTheAdapter checks that an adapter's own JSON is what is
// shared, from one call for concurrent identical requests, and that the
// klines form is still served.
func TestJSONFromTheAdapter(t *testing.T) {
	up := &jsonMarket{slowMarket: &slowMarket{release: make(chan struct{})}}
	ex := coalesce.New(up, coalesce.Options{})
	req := exgate.KlineRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Interval: exgate.Interval1m, Limit: 3}
	const n = 50
	answers := make(chan []byte, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			b, err := ex.AppendRecentKlinesJSON(t.Context(), nil, exgate.Credential{}, req)
			if err != nil {
				t.Error(err)
			}
			answers <- b
		})
	}
	up.releaseWhenCalled()
	wg.Wait()
	close(answers)
	want := exgate.AppendKlinesJSON(nil, make([]exgate.Kline, 3))
	for b := range answers {
		if string(b) != string(want) {
			t.Fatalf("JSON %s, want %s", b, want)
		}
	}
	if c := up.jsonCalls.Load(); c == 0 || c > 5 {
		t.Errorf("%d JSON calls to the adapter for %d identical requests", c, n)
	}
	if ks, err := ex.RecentKlines(t.Context(), exgate.Credential{}, req); err != nil || len(ks) != 3 {
		t.Errorf("RecentKlines: %d klines, %v", len(ks), err)
	}
}

// pacedMarket refuses, as an adapter's pacing does, a wait for its budget
// that would not end before the call's deadline, and otherwise holds the
// call for the wait.
type pacedMarket struct {
	exgate.Exchange
	wait time.Duration
}

func (p *pacedMarket) RecentKlines(ctx context.Context, _ exgate.Credential, req exgate.KlineRequest) ([]exgate.Kline, error) {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < p.wait {
		return nil, &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "budget in use", RetryAfter: p.wait}
	}
	select {
	case <-time.After(p.wait):
		return make([]exgate.Kline, req.Limit), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestPacingPastTheDeadlineIsUnavailable: the shared call keeps the
// deadline of the request that started it, so pacing that cannot finish
// before it says so (503 with Retry-After) instead of the request ending in
// 504 EXCHANGE_TIMEOUT while the call still waits for its budget.
func TestPacingPastTheDeadlineIsUnavailable(t *testing.T) {
	// The budget's wait is far past the deadline, and the deadline far
	// enough that both calls start before it even on a busy machine (with
	// 50 ms the second call could find it passed and answer 504).
	ex := coalesce.New(&pacedMarket{wait: time.Hour}, coalesce.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req := exgate.KlineRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Interval: exgate.Interval1m, Limit: 5}
	for _, call := range []func() error{
		func() error { _, err := ex.RecentKlines(ctx, exgate.Credential{}, req); return err },
		func() error { _, err := ex.AppendRecentKlinesJSON(ctx, nil, exgate.Credential{}, req); return err },
	} {
		err := call()
		e, ok := errors.AsType[*exgate.Error](err)
		if !ok || e.Code != exgate.CodeExchangeUnavailable || e.RetryAfter != time.Hour {
			t.Fatalf("err = %v; want EXCHANGE_UNAVAILABLE with Retry-After 1h", err)
		}
	}
}

// Options.Hit hears of every request answered by another's call: shared
// in flight, or reused within MaxAge; never of the call's own starter.
func TestHitsAreReported(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	hit := func(kind string) { mu.Lock(); hits[kind]++; mu.Unlock() }

	up := &slowMarket{release: make(chan struct{})}
	ex := coalesce.New(up, coalesce.Options{Hit: hit})
	req := exgate.KlineRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Interval: exgate.Interval1m, Limit: 5}
	const n = 50
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { _, _ = ex.RecentKlines(t.Context(), exgate.Credential{}, req) })
	}
	up.releaseWhenCalled()
	wg.Wait()
	if got, want := hits["klines"], n-int(up.calls.Load()); got != want {
		t.Errorf("%d klines hits for %d requests and %d calls, want %d", got, n, up.calls.Load(), want)
	}

	cached := &slowMarket{release: make(chan struct{})}
	close(cached.release)
	now := time.Unix(1000, 0)
	ex = coalesce.New(cached, coalesce.Options{MaxAge: time.Second, Now: func() time.Time { return now }, Hit: hit})
	book := exgate.OrderBookRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Limit: 5}
	for range 3 {
		if _, err := ex.OrderBook(t.Context(), exgate.Credential{}, book); err != nil {
			t.Fatal(err)
		}
	}
	if hits["book"] != 2 {
		t.Errorf("%d book hits for 3 requests inside MaxAge, want 2", hits["book"])
	}
}
