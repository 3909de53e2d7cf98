package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// testInstances: a single instance refuses to start while another is live
// on the store (docs/contract.md section 4), and an instance that stopped
// beating stops counting.
func (s suite) testInstances(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	other := e.reopen(t)
	liveAfter := func() time.Time { return e.clock.Now().Add(-exgate.InstanceLiveFor) }
	start := func(st exgate.Store, in exgate.Instance, wantConflict bool) []exgate.Instance {
		t.Helper()
		live, err := st.StartInstance(ctx, in, liveAfter())
		if got := errors.Is(err, exgate.ErrConflict); got != wantConflict || (err != nil && !got) {
			t.Fatalf("StartInstance(%s) = %v; want a conflict: %v", in.ID, err, wantConflict)
		}
		return live
	}
	a := exgate.Instance{ID: "a", Host: "h1", PID: 10, SharedState: "redis"}
	b := exgate.Instance{ID: "b", Host: "h2", PID: 11, SharedState: "redis"}
	solo := exgate.Instance{ID: "solo", Host: "h3", PID: 12, Single: true, SharedState: "in-process"}

	start(e, a, false)
	start(other, b, false) // two instances sharing Redis run together
	if live := start(other, solo, true); len(live) != 2 {
		t.Fatalf("live instances named by the refusal: %+v; want a and b", live)
	}
	if err := e.StopInstance(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	start(e, solo, true) // b is still live
	e.clock.Advance(exgate.InstanceLiveFor)
	start(e, solo, false) // b stopped beating: it no longer counts
	start(other, a, true) // a live single instance keeps every other out
	got, err := other.LiveInstances(ctx, liveAfter())
	if err != nil || len(got) != 1 || got[0].ID != "solo" || !got[0].Single || got[0].Host != "h3" || got[0].PID != 12 ||
		got[0].SharedState != "in-process" || !got[0].HeartbeatAt.Equal(e.clock.Now().Truncate(0)) {
		t.Fatalf("LiveInstances = %+v, %v; want solo", got, err)
	}
	e.clock.Advance(exgate.InstanceLiveFor - time.Second)
	if err := e.BeatInstance(ctx, solo); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Second)
	start(other, b, true) // the beat kept solo live
	if err := e.StopInstance(ctx, "solo"); err != nil {
		t.Fatal(err)
	}
	start(other, b, false)
	if err := e.StopInstance(ctx, "nobody"); err != nil {
		t.Fatalf("StopInstance of no instance: %v", err)
	}

	// Two single instances starting together: exactly one wins.
	e.clock.Advance(exgate.InstanceLiveFor)
	var won atomic.Int64
	var wg sync.WaitGroup
	for i, st := range []exgate.Store{e, other, e, other} {
		wg.Go(func() {
			in := exgate.Instance{ID: string(rune('p' + i)), Single: true}
			if _, err := st.StartInstance(ctx, in, liveAfter()); err == nil {
				won.Add(1)
			} else if !errors.Is(err, exgate.ErrConflict) {
				t.Errorf("StartInstance: %v", err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d single instances started together; want 1", won.Load())
	}
}
