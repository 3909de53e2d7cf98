package statetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// RunLimiter checks a Limiter: GCRA admission and waits, costs and
// bursts, invalid arguments, pauses, per-key isolation and, under
// concurrency, that it never admits more than the burst. newLimiter
// returns a fresh, empty limiter and the clock it runs on, once per
// subtest.
func RunLimiter(t *testing.T, newLimiter func(t *testing.T) (exgate.Limiter, Clock)) {
	t.Helper()
	tenPerSecond := exgate.RateLimit{Rate: 10, Period: time.Second, Burst: 5} // one unit per 100ms

	t.Run("burst then emission interval", func(t *testing.T) {
		ctx := t.Context()
		l, clk := newLimiter(t)
		// since: before the limiter held anything, for mustDeny.
		since := clk.Now()
		for i := range 5 {
			mustAdmit(t, l, "k", 1, tenPerSecond, "request %d of the burst", i+1)
		}
		wait := mustDeny(t, l, "k", 1, tenPerSecond, 100*time.Millisecond, clk, since, "over the burst")
		// A refused request takes nothing: asking again waits no longer.
		mustDeny(t, l, "k", 1, tenPerSecond, wait, clk, since, "refused again")
		// A real clock may let more than wait pass (a loaded machine
		// oversleeps); what passed beyond it has already earned part of
		// the next unit.
		start := clk.Now()
		clk.Advance(wait)
		over := clk.Now().Sub(start) - wait
		mustAdmit(t, l, "k", 1, tenPerSecond, "after the wait")
		if next := 100*time.Millisecond - over; next > clk.Tolerance() {
			mustDeny(t, l, "k", 1, tenPerSecond, next, clk, since, "one unit came back, and was taken")
		} else {
			t.Logf("the clock overslept by %v: the next unit may be back already", over)
		}
		if _, err := l.Reserve(ctx, "k", 0, tenPerSecond); err != nil {
			t.Fatalf("Reserve(cost 0) = %v", err)
		}
	})

	t.Run("costs", func(t *testing.T) {
		l, clk := newLimiter(t)
		// since: before the limiter held anything, for mustDeny.
		since := clk.Now()
		limit := exgate.RateLimit{Rate: 10, Period: time.Second, Burst: 10}
		mustAdmit(t, l, "k", 7, limit, "cost 7 of 10")
		mustDeny(t, l, "k", 4, limit, 100*time.Millisecond, clk, since, "cost 4 with 3 left")
		mustAdmit(t, l, "k", 3, limit, "cost 3 with 3 left")
		mustDeny(t, l, "k", 10, limit, time.Second, clk, since, "the whole burst when empty")
		mustAdmit(t, l, "k", 0, limit, "cost 0 when empty")
	})

	t.Run("burst below 1 counts as 1", func(t *testing.T) {
		l, clk := newLimiter(t)
		// since: before the limiter held anything, for mustDeny.
		since := clk.Now()
		limit := exgate.RateLimit{Rate: 10, Period: time.Second}
		mustAdmit(t, l, "k", 1, limit, "first")
		mustDeny(t, l, "k", 1, limit, 100*time.Millisecond, clk, since, "second")
	})

	t.Run("invalid arguments", func(t *testing.T) {
		tests := []struct {
			name  string
			cost  int
			limit exgate.RateLimit
		}{
			{"cost above burst", 6, tenPerSecond},
			{"negative cost", -1, tenPerSecond},
			{"zero rate", 1, exgate.RateLimit{Period: time.Second, Burst: 5}},
			{"negative rate", 1, exgate.RateLimit{Rate: -1, Period: time.Second, Burst: 5}},
			{"zero period", 1, exgate.RateLimit{Rate: 10, Burst: 5}},
		}
		l, _ := newLimiter(t)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if wait, err := l.Reserve(t.Context(), "k", tc.cost, tc.limit); err == nil {
					t.Fatalf("Reserve(cost %d, %+v) = %v, nil; want an error", tc.cost, tc.limit, wait)
				}
			})
		}
		// Refused arguments took nothing.
		for i := range 5 {
			mustAdmit(t, l, "k", 1, tenPerSecond, "request %d of the burst", i+1)
		}
	})

	t.Run("keys are isolated", func(t *testing.T) {
		ctx := t.Context()
		l, clk := newLimiter(t)
		// since: before the limiter held anything, for mustDeny.
		since := clk.Now()
		mustAdmit(t, l, "a", 5, tenPerSecond, "a's burst")
		mustDeny(t, l, "a", 1, tenPerSecond, 100*time.Millisecond, clk, since, "a over its burst")
		if err := l.Pause(ctx, "a", clk.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		mustAdmit(t, l, "b", 5, tenPerSecond, "b's burst")
		if until, err := l.PausedUntil(ctx, "b"); err != nil || !until.IsZero() {
			t.Fatalf("PausedUntil(b) = %v, %v; want zero, nil", until, err)
		}
	})

	t.Run("pause", func(t *testing.T) {
		ctx := t.Context()
		l, clk := newLimiter(t)
		// since: before the limiter held anything, for mustDeny.
		since := clk.Now()
		if until, err := l.PausedUntil(ctx, "k"); err != nil || !until.IsZero() {
			t.Fatalf("PausedUntil before any pause = %v, %v; want zero, nil", until, err)
		}
		until := clk.Now().Add(2 * time.Second).Truncate(time.Millisecond)
		if err := l.Pause(ctx, "k", until); err != nil {
			t.Fatalf("Pause = %v", err)
		}
		checkPausedUntil(t, l, "k", until)
		mustDeny(t, l, "k", 1, tenPerSecond, 2*time.Second, clk, since, "paused")
		mustDeny(t, l, "k", 0, tenPerSecond, 2*time.Second, clk, since, "paused, cost 0")

		if err := l.Pause(ctx, "k", until.Add(-time.Second)); err != nil {
			t.Fatalf("shorter Pause = %v", err)
		}
		checkPausedUntil(t, l, "k", until)
		if err := l.Pause(ctx, "k", clk.Now().Add(-time.Second)); err != nil {
			t.Fatalf("Pause in the past = %v", err)
		}
		checkPausedUntil(t, l, "k", until)
		longer := until.Add(time.Second)
		if err := l.Pause(ctx, "k", longer); err != nil {
			t.Fatalf("longer Pause = %v", err)
		}
		checkPausedUntil(t, l, "k", longer)
		mustDeny(t, l, "k", 1, tenPerSecond, 3*time.Second, clk, since, "pause extended")
	})

	t.Run("pause ends and took nothing", func(t *testing.T) {
		ctx := t.Context()
		l, clk := newLimiter(t)
		if err := l.Pause(ctx, "k", clk.Now().Add(-time.Millisecond)); err != nil {
			t.Fatalf("Pause in the past = %v", err)
		}
		checkPausedUntil(t, l, "k", time.Time{})
		pause := 150 * time.Millisecond
		if err := l.Pause(ctx, "k", clk.Now().Add(pause)); err != nil {
			t.Fatalf("Pause = %v", err)
		}
		clk.Advance(pause)
		checkPausedUntil(t, l, "k", time.Time{})
		for i := range 5 {
			mustAdmit(t, l, "k", 1, tenPerSecond, "request %d of the burst after the pause", i+1)
		}
	})

	t.Run("concurrent callers never exceed the burst", func(t *testing.T) {
		ctx := t.Context()
		l, _ := newLimiter(t)
		// One unit an hour: within the test, exactly the burst is admitted.
		limit := exgate.RateLimit{Rate: 1, Period: time.Hour, Burst: 20}
		keys := []string{"a", "a", "b", "c"} // a: 100 callers, b and c: 50 each
		admitted := map[string]*atomic.Int64{"a": {}, "b": {}, "c": {}}
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for i := range 200 {
			key := keys[i%len(keys)]
			wg.Go(func() {
				wait, err := l.Reserve(ctx, key, 1, limit)
				if err != nil {
					errs <- err
					return
				}
				if wait == 0 {
					admitted[key].Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("Reserve = %v", err)
		}
		for key, n := range admitted {
			if n.Load() != 20 {
				t.Errorf("key %s: admitted %d; want 20 (the burst)", key, n.Load())
			}
		}
	})
}

func mustAdmit(t *testing.T, l exgate.Limiter, key string, cost int, limit exgate.RateLimit, format string, args ...any) {
	t.Helper()
	wait, err := l.Reserve(t.Context(), key, cost, limit)
	if err != nil || wait != 0 {
		t.Fatalf("Reserve(%q, cost %d) = %v, %v; want 0, nil (%s)", key, cost, wait, err, fmt.Sprintf(format, args...))
	}
}

// mustDeny checks that Reserve takes nothing and asks to wait want, within
// clk's tolerance, and returns the wait. want is the wait as of since (a
// reading of clk before the limiter's state was set): on a real clock the
// time that passed since then may shorten it, never lengthen it (on a
// loaded machine the requests that fill a burst can take tens of
// milliseconds).
func mustDeny(t *testing.T, l exgate.Limiter, key string, cost int, limit exgate.RateLimit, want time.Duration, clk Clock, since time.Time, why string) time.Duration {
	t.Helper()
	tol := clk.Tolerance()
	wait, err := l.Reserve(t.Context(), key, cost, limit)
	passed := clk.Now().Sub(since)
	if err != nil || wait <= 0 || wait > want+tol || wait < want-passed-tol {
		t.Fatalf("Reserve(%q, cost %d) = %v, %v; want %v (−%v, ±%v), nil (%s)", key, cost, wait, err, want, passed, tol, why)
	}
	return wait
}

func checkPausedUntil(t *testing.T, l exgate.Limiter, key string, want time.Time) {
	t.Helper()
	got, err := l.PausedUntil(t.Context(), key)
	if err != nil || !got.Equal(want) {
		t.Fatalf("PausedUntil(%q) = %v, %v; want %v, nil", key, got, err, want)
	}
}
