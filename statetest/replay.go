package statetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
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

	// Issue 13: one owner (a client key) cannot fill the guard.
	t.Run("owner quota", func(t *testing.T) {
		g, clk := newGuard(t)
		ttl := 150 * time.Millisecond
		by := func(owner, key string, expiry time.Time, want bool, wantErr error) {
			t.Helper()
			got, err := g.FirstUseBy(t.Context(), owner, key, expiry, 3)
			if got != want || (wantErr == nil) != (err == nil) || (wantErr != nil && !errors.Is(err, wantErr)) {
				t.Fatalf("FirstUseBy(%q, %q) = %v, %v; want %v, %v", owner, key, got, err, want, wantErr)
			}
		}
		by("a", "a:1", clk.Now().Add(ttl), true, nil)
		by("a", "a:2", clk.Now().Add(time.Minute), true, nil)
		by("a", "a:3", clk.Now().Add(time.Minute), true, nil)
		by("a", "a:4", clk.Now().Add(time.Minute), false, exgate.ErrOverQuota)
		by("a", "a:2", clk.Now().Add(time.Minute), false, nil) // a replay, whatever the quota
		by("b", "b:1", clk.Now().Add(time.Minute), true, nil)  // another owner is unaffected
		by("b", "b:1", clk.Now().Add(time.Minute), false, nil)
		clk.Advance(ttl)
		by("a", "a:4", clk.Now().Add(time.Minute), true, nil) // a:1 expired, freeing a place
		by("a", "a:5", clk.Now().Add(time.Minute), false, exgate.ErrOverQuota)
		by("a", "a:4", clk.Now().Add(time.Minute), false, nil)
	})

	t.Run("owner quota among concurrent callers", func(t *testing.T) {
		ctx := t.Context()
		g, clk := newGuard(t)
		expiry := clk.Now().Add(time.Minute)
		var first, over atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for i := range 50 {
			wg.Go(func() {
				ok, err := g.FirstUseBy(ctx, "flood", "flood:"+string(rune('A'+i)), expiry, 10)
				switch {
				case errors.Is(err, exgate.ErrOverQuota):
					over.Add(1)
				case err != nil:
					errs <- err
				case ok:
					first.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("FirstUseBy = %v", err)
		}
		if first.Load() != 10 || over.Load() != 40 {
			t.Fatalf("%d recorded, %d over quota; want 10 and 40", first.Load(), over.Load())
		}
		if ok, err := g.FirstUseBy(ctx, "other", "other:1", expiry, 10); err != nil || !ok {
			t.Fatalf("another owner: %v, %v", ok, err)
		}
	})

	// Issue 23: a signature opens one door once. A key claimed on one
	// route is refused on every other, released or not; released, it may
	// be claimed again on its own route only.
	t.Run("claim bound to its route", func(t *testing.T) {
		g, clk := newGuard(t)
		ttl := time.Minute
		claim := func(key, route string, want bool, wantBound string) {
			t.Helper()
			first, bound, err := g.Claim(t.Context(), "o", key, route, clk.Now().Add(ttl), 10)
			if err != nil || first != want || bound != wantBound {
				t.Fatalf("Claim(%q, %q) = %v, %q, %v; want %v, %q", key, route, first, bound, err, want, wantBound)
			}
		}
		release := func(key, route string) {
			t.Helper()
			if err := g.Release(t.Context(), "o", key, route); err != nil {
				t.Fatalf("Release(%q, %q) = %v", key, route, err)
			}
		}
		get, cancel := "GET /v1/order ro", "POST /v1/order/cancel ro"
		claim("s1", get, true, get)
		claim("s1", get, false, get)    // a replay on the same route
		claim("s1", cancel, false, get) // and on another
		release("s1", cancel)           // another route cannot release it
		claim("s1", get, false, get)
		release("s1", get)              // refused before it was served (429)
		claim("s1", cancel, false, get) // still bound to its route
		claim("s1", get, true, get)     // the same request again
		claim("s1", get, false, get)
		release("unknown", get) // nothing to release
		claim("unknown", cancel, true, cancel)
		ttl = 150 * time.Millisecond
		claim("short", get, true, get)
		claim("short", cancel, false, get)
		clk.Advance(ttl)
		claim("short", cancel, true, cancel) // forgotten after its expiry
	})

	t.Run("one claim among concurrent callers on two routes", func(t *testing.T) {
		ctx := t.Context()
		g, clk := newGuard(t)
		expiry := clk.Now().Add(time.Minute)
		var first atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for i := range 100 {
			wg.Go(func() {
				ok, _, err := g.Claim(ctx, "o", "k", []string{"a", "b"}[i%2], expiry, 1000)
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
			t.Fatalf("Claim = %v", err)
		}
		if first.Load() != 1 {
			t.Fatalf("%d first claims of one key; want 1", first.Load())
		}
	})
}
