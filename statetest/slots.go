package statetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Slots counts holders of a bounded number of slots per key.
type Slots interface {
	Acquire(ctx context.Context, key, id string, limit int, until time.Time) (bool, error)
	Renew(ctx context.Context, key, id string, until time.Time) error
	Release(ctx context.Context, key, id string) error
}

// RunSlots checks Slots: at most limit holders per key, a released or
// expired slot freed, a renewed one kept, keys isolated, and the limit
// held among concurrent callers. newSlots returns fresh, empty slots and
// the clock they run on, once per subtest.
func RunSlots(t *testing.T, newSlots func(t *testing.T) (Slots, Clock)) {
	t.Helper()
	t.Run("limit, release and expiry", func(t *testing.T) {
		s, clk := newSlots(t)
		ctx := t.Context()
		acquire := func(key, id string, ttl time.Duration, want bool) {
			t.Helper()
			got, err := s.Acquire(ctx, key, id, 2, clk.Now().Add(ttl))
			if err != nil || got != want {
				t.Fatalf("Acquire(%q, %q) = %v, %v; want %v", key, id, got, err, want)
			}
		}
		ttl := 150 * time.Millisecond
		acquire("k", "a", time.Minute, true)
		acquire("k", "b", ttl, true)
		acquire("k", "c", time.Minute, false) // full
		acquire("k", "a", time.Minute, true)  // a holder again
		acquire("other", "c", time.Minute, true)
		if err := s.Release(ctx, "k", "a"); err != nil {
			t.Fatal(err)
		}
		acquire("k", "c", time.Minute, true)
		acquire("k", "d", time.Minute, false)
		clk.Advance(ttl) // b expired
		acquire("k", "d", time.Minute, true)
		acquire("k", "e", time.Minute, false)
		if err := s.Renew(ctx, "k", "d", clk.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		acquire("k", "e", time.Minute, false)
		if err := s.Release(ctx, "k", "nobody"); err != nil {
			t.Fatalf("Release of no holder: %v", err)
		}
	})
	t.Run("limit among concurrent callers", func(t *testing.T) {
		s, clk := newSlots(t)
		var got atomic.Int64
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				ok, err := s.Acquire(t.Context(), "k", fmt.Sprint("h", i), 20, clk.Now().Add(time.Minute))
				if err != nil {
					t.Errorf("Acquire: %v", err)
				}
				if ok {
					got.Add(1)
				}
			})
		}
		wg.Wait()
		if got.Load() != 20 {
			t.Fatalf("%d slots taken of 20", got.Load())
		}
	})
}
