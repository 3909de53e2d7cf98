package statetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// RunReplayGuard checks a ReplayGuard: a key is a first use once, then
// remembered until its expiry and forgotten after it; keys are isolated,
// and among concurrent callers exactly one gets the first use.
// newGuard returns a fresh, empty guard and the clock it runs on, once
// per subtest.
func RunReplayGuard(t *testing.T, newGuard func(t *testing.T) (ReplayGuard, Clock)) {
	t.Helper()
	firstUse := func(t *testing.T, g ReplayGuard, key string, expiry time.Time, want bool) {
		t.Helper()
		got, err := g.FirstUse(t.Context(), key, expiry)
		if err != nil || got != want {
			t.Fatalf("FirstUse(%q) = %v, %v; want %v, nil", key, got, err, want)
		}
	}

	t.Run("remembered until expiry", func(t *testing.T) {
		g, clk := newGuard(t)
		firstUse(t, g, "k", clk.Now().Add(time.Minute), true)
		firstUse(t, g, "k", clk.Now().Add(time.Minute), false)
		firstUse(t, g, "k", clk.Now().Add(time.Hour), false)
		firstUse(t, g, "other", clk.Now().Add(time.Minute), true)
		firstUse(t, g, "k", clk.Now().Add(time.Minute), false)
	})

	t.Run("forgotten after expiry", func(t *testing.T) {
		g, clk := newGuard(t)
		ttl := 150 * time.Millisecond
		firstUse(t, g, "k", clk.Now().Add(ttl), true)
		firstUse(t, g, "long", clk.Now().Add(time.Minute), true)
		firstUse(t, g, "k", clk.Now().Add(time.Minute), false)
		clk.Advance(ttl)
		firstUse(t, g, "k", clk.Now().Add(time.Minute), true)
		firstUse(t, g, "k", clk.Now().Add(time.Minute), false)
		firstUse(t, g, "long", clk.Now().Add(time.Minute), false)
	})

	t.Run("expiry already passed", func(t *testing.T) {
		g, clk := newGuard(t)
		firstUse(t, g, "k", clk.Now().Add(-time.Second), true)
		firstUse(t, g, "k", clk.Now().Add(-time.Second), true)
		firstUse(t, g, "k", clk.Now().Add(time.Minute), true)
		firstUse(t, g, "k", clk.Now().Add(time.Minute), false)
	})

	t.Run("one first use among concurrent callers", func(t *testing.T) {
		ctx := t.Context()
		g, clk := newGuard(t)
		expiry := clk.Now().Add(time.Minute)
		var first atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for range 100 {
			wg.Go(func() {
				ok, err := g.FirstUse(ctx, "k", expiry)
				if err != nil {
					errs <- err
				}
				if ok {
					first.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("FirstUse = %v", err)
		}
		if first.Load() != 1 {
			t.Fatalf("%d first uses of one key; want 1", first.Load())
		}
	})
}
