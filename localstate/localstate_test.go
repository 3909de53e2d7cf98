package localstate_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/statetest"
)

func TestLimiter(t *testing.T) {
	statetest.RunLimiter(t, func(*testing.T) (exgate.Limiter, statetest.Clock) {
		clk := statetest.NewFakeClock()
		return localstate.NewLimiter(clk.Now), clk
	})
}

func TestNonces(t *testing.T) {
	statetest.RunNonces(t, func(*testing.T) statetest.Nonces { return localstate.NewNonces() })
}

func TestReplayGuard(t *testing.T) {
	statetest.RunReplayGuard(t, func(*testing.T) (statetest.ReplayGuard, statetest.Clock) {
		clk := statetest.NewFakeClock()
		return localstate.NewReplayGuard(clk.Now), clk
	})
}

func TestCache(t *testing.T) {
	statetest.RunCache(t, func(*testing.T) (statetest.Cache, statetest.Clock) {
		clk := statetest.NewFakeClock()
		return localstate.NewCache(clk.Now), clk
	})
}

// TestNilClock checks that the constructors default to time.Now.
func TestNilClock(t *testing.T) {
	ctx := t.Context()
	l := localstate.NewLimiter(nil)
	if wait, err := l.Reserve(ctx, "k", 1, exgate.RateLimit{Rate: 1, Period: time.Second, Burst: 1}); err != nil || wait != 0 {
		t.Errorf("Reserve = %v, %v", wait, err)
	}
	if ok, err := localstate.NewReplayGuard(nil).FirstUse(ctx, "k", time.Now().Add(time.Minute)); err != nil || !ok {
		t.Errorf("FirstUse = %v, %v", ok, err)
	}
	c := localstate.NewCache(nil)
	if err := c.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k"); err != nil || string(v) != "v" {
		t.Errorf("Get = %q, %v", v, err)
	}
}

// TestHotPathAllocations keeps the calls every request makes free of
// allocations.
func TestHotPathAllocations(t *testing.T) {
	ctx := t.Context()
	clk := statetest.NewFakeClock()
	limit := exgate.RateLimit{Rate: 1000, Period: time.Second, Burst: 1000}
	l := localstate.NewLimiter(clk.Now)
	if _, err := l.Reserve(ctx, "k", 1, limit); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = l.Reserve(ctx, "k", 1, limit) }); n != 0 {
		t.Errorf("Reserve: %v allocations; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = l.Reserve(ctx, "k", 1000, limit) }); n != 0 {
		t.Errorf("Reserve refused: %v allocations; want 0", n)
	}
	g := localstate.NewReplayGuard(clk.Now)
	expiry := clk.Now().Add(time.Minute)
	if _, err := g.FirstUse(ctx, "k", expiry); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = g.FirstUse(ctx, "k", expiry) }); n != 0 {
		t.Errorf("FirstUse replayed: %v allocations; want 0", n)
	}
}

func BenchmarkLimiterReserve(b *testing.B) {
	ctx := b.Context()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "client:" + strconv.Itoa(i)
	}
	// One unit a nanosecond: never refused, so the admitting path is measured.
	limit := exgate.RateLimit{Rate: 1 << 30, Period: 1 << 30, Burst: 1 << 20}
	b.Run("one key", func(b *testing.B) {
		l := localstate.NewLimiter(nil)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := l.Reserve(ctx, keys[0], 1, limit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("1000 keys parallel", func(b *testing.B) {
		l := localstate.NewLimiter(nil)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := l.Reserve(ctx, keys[i%len(keys)], 1, limit); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	})
}

func BenchmarkReplayGuardFirstUse(b *testing.B) {
	ctx := b.Context()
	// Distinct keys, as signatures are; built beforehand so that only
	// FirstUse is measured.
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = "sig:" + strconv.Itoa(i)
	}
	clk := statetest.NewFakeClock()
	g := localstate.NewReplayGuard(clk.Now)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i%len(keys) == 0 {
			// A new round of keys, after the last round expired.
			clk.Advance(2 * time.Second)
		}
		if _, err := g.FirstUse(ctx, keys[i%len(keys)], clk.Now().Add(time.Second)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func TestSlots(t *testing.T) {
	statetest.RunSlots(t, func(*testing.T) (statetest.Slots, statetest.Clock) {
		clk := statetest.NewFakeClock()
		return localstate.NewSlots(clk.Now), clk
	})
}
