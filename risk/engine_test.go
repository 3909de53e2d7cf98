package risk_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/risk"
)

// memStore is a risk.Store whose halts a test changes.
type memStore struct {
	mu    sync.Mutex
	halts []exgate.RiskHalt
}

func (m *memStore) AllRiskLimits(context.Context) (map[string]exgate.RiskLimits, error) {
	return map[string]exgate.RiskLimits{}, nil
}

func (m *memStore) RiskHalts(context.Context) ([]exgate.RiskHalt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]exgate.RiskHalt(nil), m.halts...), nil
}

func (m *memStore) RiskUsage(_ context.Context, _, day string) (exgate.RiskUsage, error) {
	return exgate.RiskUsage{Day: day}, nil
}

func (m *memStore) set(hs ...exgate.RiskHalt) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.halts = hs
}

// TestRunAnnounces: Run tells of each halt that starts and each that
// ends, as it reads them from the store, and nothing for halts in force
// when it starts.
func TestRunAnnounces(t *testing.T) {
	st := &memStore{}
	st.set(exgate.RiskHalt{APIKey: "old", Reason: "before the start"})
	events := make(chan string, 10)
	eng := risk.New(risk.Options{Store: st, Poll: time.Millisecond,
		Halted:  func(h exgate.RiskHalt) { events <- "halted " + h.APIKey + " " + h.Reason },
		Resumed: func(k string) { events <- "resumed " + k },
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	next := func(want string) {
		t.Helper()
		select {
		case got := <-events:
			if got != want {
				t.Fatalf("event %q, want %q", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no event, want %q", want)
		}
	}
	// Wait for Run's first reading before changing anything.
	for deadline := time.Now().Add(5 * time.Second); eng.HaltCount() != 1; {
		if time.Now().After(deadline) {
			t.Fatal("Run did not read the halts")
		}
		time.Sleep(time.Millisecond)
	}
	st.set(exgate.RiskHalt{APIKey: "old", Reason: "before the start"}, exgate.RiskHalt{APIKey: "k1", Reason: "runaway"})
	next("halted k1 runaway")
	st.set(exgate.RiskHalt{APIKey: "k1", Reason: "runaway"})
	next("resumed old")
	st.set()
	next("resumed k1")
	if h, err := eng.Halted(t.Context(), "k1"); err != nil || h != nil {
		t.Fatalf("Halted(k1) = %v, %v after the resume", h, err)
	}
}
