package kraken_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

// sharedLocks is a KeyLocks for two adapters in one test standing for two
// instances: one channel per key, and a record of what was asked.
type sharedLocks struct {
	mu    sync.Mutex
	chans map[string]chan struct{}
	keys  []string
	ttls  []time.Duration
	fail  error
}

func (l *sharedLocks) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	l.mu.Lock()
	if l.fail != nil {
		l.mu.Unlock()
		return nil, l.fail
	}
	if l.chans == nil {
		l.chans = map[string]chan struct{}{}
	}
	ch := l.chans[key]
	if ch == nil {
		ch = make(chan struct{}, 1)
		l.chans[key] = ch
	}
	l.keys = append(l.keys, key)
	l.ttls = append(l.ttls, ttl)
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestSharedKeyLocks: two adapters ("instances") sharing nonces and
// KeyLocks send 40 concurrent private calls on one key and the fake, which
// refuses a nonce not above the last one, refuses none; every call took
// the shared lock for the key with a ttl covering the call.
func TestSharedKeyLocks(t *testing.T) {
	nonces, locks := &testNonces{}, &sharedLocks{}
	e := newEnv(t, krakenfake.Options{}, func(o *kraken.Options) { o.Nonces, o.KeyLocks = nonces, locks })
	other := kraken.New(kraken.Options{BaseURL: e.srv.URL, Now: fixedNow, Limiter: newTestLimiter(),
		Nonces: nonces, KeyLocks: locks, RetryDelay: time.Millisecond})
	const calls = 40
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		ex := e.ex
		if i%2 == 1 {
			ex = other
		}
		wg.Go(func() { _, errs[i] = ex.Balances(t.Context(), e.cred) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if n := e.srv.Refused("EAPI:Invalid nonce"); n != 0 {
		t.Errorf("%d calls refused for their nonce; want none", n)
	}
	locks.mu.Lock()
	defer locks.mu.Unlock()
	if len(locks.keys) != e.srv.Requests("/0/private/BalanceEx") {
		t.Errorf("%d shared locks taken for %d calls; want one each", len(locks.keys), e.srv.Requests("/0/private/BalanceEx"))
	}
	for i, k := range locks.keys {
		if k != "kraken:"+testKey || locks.ttls[i] < 2*time.Second || locks.ttls[i] > 40*time.Second {
			t.Fatalf("lock %d: key %q ttl %s; want kraken:%s and a ttl covering the call", i, k, locks.ttls[i], testKey)
		}
	}
}

// TestSharedKeyLockUnavailable: when the shared lock cannot be taken,
// nothing is sent and the order is refused as EXCHANGE_UNAVAILABLE (a
// definite refusal: it was never placed).
func TestSharedKeyLockUnavailable(t *testing.T) {
	locks := &sharedLocks{fail: errors.New("redis down")}
	e := newEnv(t, krakenfake.Options{}, func(o *kraken.Options) { o.KeyLocks = locks })
	_, err := e.ex.Balances(t.Context(), e.cred)
	wantCode(t, err, exgate.CodeExchangeUnavailable, "nothing was sent")
	if n := e.srv.Requests("/0/private/BalanceEx"); n != 0 {
		t.Errorf("%d BalanceEx calls reached the fake; want none", n)
	}
}
