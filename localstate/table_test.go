package localstate

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

var epoch = time.Unix(1_700_000_000, 0)

func TestTableSweepsExpiredEntries(t *testing.T) {
	tb := newTable[struct{}](1 << 20)
	now := epoch
	for i := range 10 * minSweep {
		tb.put(strconv.Itoa(i), struct{}{}, now.Add(time.Second), now)
		now = now.Add(time.Millisecond)
	}
	// Inserted over 10s, each live for 1s: the map holds about the last
	// second's worth, at most twice over between sweeps.
	if n := len(tb.entries); n > 2*minSweep+1000 {
		t.Errorf("%d entries after sweeps; want at most %d", n, 2*minSweep+1000)
	}
	for i := 10*minSweep - 999; i < 10*minSweep; i++ {
		if _, ok := tb.get(strconv.Itoa(i), now); !ok {
			t.Fatalf("live entry %d was swept", i)
		}
	}
}

func TestTableFull(t *testing.T) {
	tb := newTable[int](4)
	for i := range 4 {
		if !tb.put(strconv.Itoa(i), i, epoch.Add(time.Duration(i+1)*time.Second), epoch) {
			t.Fatalf("put %d refused below the cap", i)
		}
	}
	if tb.put("new", 0, epoch.Add(time.Minute), epoch) {
		t.Fatal("put accepted beyond the cap")
	}
	if !tb.put("0", 10, epoch.Add(time.Minute), epoch) {
		t.Fatal("replacing a live key refused at the cap")
	}
	// Key "1" expires at epoch+2s: then there is room again.
	if tb.put("new", 0, epoch.Add(time.Minute), epoch.Add(1999*time.Millisecond)) {
		t.Fatal("put accepted before anything expired")
	}
	if !tb.put("new", 0, epoch.Add(time.Minute), epoch.Add(2*time.Second)) {
		t.Fatal("put refused after an entry expired")
	}
}

func TestLimiterFull(t *testing.T) {
	ctx := t.Context()
	now := func() time.Time { return epoch }
	l := NewLimiter(now)
	l.tat = newTable[struct{}](2)
	l.paused = newTable[time.Time](2)
	limit := exgate.RateLimit{Rate: 1, Period: time.Minute, Burst: 1}
	for _, k := range []string{"a", "b"} {
		if wait, err := l.Reserve(ctx, k, 1, limit); err != nil || wait != 0 {
			t.Fatalf("Reserve(%s) = %v, %v", k, wait, err)
		}
		if err := l.Pause(ctx, k, epoch.Add(time.Second)); err != nil {
			t.Fatalf("Pause(%s) = %v", k, err)
		}
	}
	if _, err := l.Reserve(ctx, "c", 1, limit); !errors.Is(err, errLimiterFull) {
		t.Errorf("Reserve on a full limiter = %v; want errLimiterFull", err)
	}
	if err := l.Pause(ctx, "c", epoch.Add(time.Second)); !errors.Is(err, errLimiterFull) {
		t.Errorf("Pause on a full limiter = %v; want errLimiterFull", err)
	}
}

func TestReplayGuardFull(t *testing.T) {
	ctx := t.Context()
	now := epoch
	g := NewReplayGuard(func() time.Time { return now })
	g.seen = newTable[struct{}](2)
	for _, k := range []string{"a", "b"} {
		if ok, err := g.FirstUse(ctx, k, epoch.Add(time.Second)); err != nil || !ok {
			t.Fatalf("FirstUse(%s) = %v, %v", k, ok, err)
		}
	}
	if ok, err := g.FirstUse(ctx, "c", epoch.Add(time.Second)); err == nil || ok {
		t.Fatalf("FirstUse on a full guard = %v, %v; want false and an error", ok, err)
	}
	if ok, err := g.FirstUse(ctx, "a", epoch.Add(time.Second)); err != nil || ok {
		t.Fatalf("replay on a full guard = %v, %v; want false, nil", ok, err)
	}
	now = epoch.Add(time.Second)
	if ok, err := g.FirstUse(ctx, "c", epoch.Add(2*time.Second)); err != nil || !ok {
		t.Fatalf("FirstUse after expiry = %v, %v; want true, nil", ok, err)
	}
}

func TestCacheStaysBounded(t *testing.T) {
	ctx := t.Context()
	c := NewCache(func() time.Time { return epoch })
	for i := range 3 * maxCacheEntries {
		if err := c.Set(ctx, strconv.Itoa(i), []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if n := len(c.entries.entries); n > maxCacheEntries {
			t.Fatalf("%d entries; want at most %d", n, maxCacheEntries)
		}
	}
	last := strconv.Itoa(3*maxCacheEntries - 1)
	if v, err := c.Get(ctx, last); err != nil || string(v) != "v" {
		t.Fatalf("Get(last set) = %q, %v", v, err)
	}
}
