package journal_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/journal"
)

// observer records what the journal reports to metrics.
type observer struct {
	mu     sync.Mutex
	events []string
}

func (o *observer) add(s string)                    { o.mu.Lock(); o.events = append(o.events, s); o.mu.Unlock() }
func (o *observer) IntentState(kind, state string)  { o.add("state " + kind + " " + state) }
func (o *observer) Reconciled(kind, outcome string) { o.add("reconciled " + kind + " " + outcome) }
func (o *observer) ReconcileBacklog(n int)          { o.add(fmt.Sprint("backlog ", n)) }

// Options.Metrics hears of each reconciliation read with its outcome and
// of the state it moved the intent to.
func TestMetricsObserver(t *testing.T) {
	ctx := t.Context()
	st, cred := openJournalStore(t)
	f := newHeldExchange()
	clk := newManualClock()
	obs := &observer{}
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{"binance": f},
		Now: clk.Now, ReconcileEvery: time.Second, MaxBackoff: time.Second, Metrics: obs})
	it := exgate.Intent{ID: "wmetrics", Kind: exgate.IntentWithdrawal, ClientAPIKey: "client", CredentialID: cred.ID,
		CredentialName: cred.Name, Exchange: "binance", Request: []byte(`{"Asset":"USDT"}`),
		State: exgate.IntentAccepted, CreatedAt: clk.Now()}
	if err := st.CreateIntent(ctx, it); err != nil {
		t.Fatal(err)
	}
	f.hold(it.ID, false)
	if left := jr.ReconcileAll(ctx); left != 1 {
		t.Fatalf("first pass left %d unfinished, want 1", left)
	}
	f.hold(it.ID, true)
	clk.Add(2 * time.Second)
	if left := jr.ReconcileAll(ctx); left != 0 {
		t.Fatalf("second pass left %d unfinished, want 0", left)
	}
	want := []string{"reconciled withdrawal unfinished", "reconciled withdrawal final", "state withdrawal final"}
	if !slices.Equal(obs.events, want) {
		t.Errorf("metrics heard %q, want %q", obs.events, want)
	}
}
