package journal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// countingStore counts the journal's writes of outcomes.
type countingStore struct {
	*sqlite.Store
	updates atomic.Int32
}

func (s *countingStore) UpdateIntent(ctx context.Context, id string, o exgate.IntentOutcome) error {
	s.updates.Add(1)
	return s.Store.UpdateIntent(ctx, id, o)
}

// TestStreamedOrder: an update pushed by a stream is recorded as the
// reconciler records a read, only when it advances the order: a repeat
// writes nothing, an older state or a change after a final one is
// ignored, and the answer carries the ids the client knows.
func TestStreamedOrder(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	st := &countingStore{Store: sq}
	for _, k := range []string{"client", "other"} {
		if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: k, Secret: "x", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	cred, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client", Name: "paper", Exchange: "sim", Permissions: []exgate.Permission{exgate.PermissionTrade}})
	if err != nil {
		t.Fatal(err)
	}
	otherCred, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "other", Name: "paper", Exchange: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	ex := sim.New(sim.Options{Ledger: sq, Now: clock})
	jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{"sim": ex}, Now: clock})
	book, err := ex.OrderBook(ctx, cred, exgate.OrderBookRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	price := decimal.RequireFromString(book.Bids[0].Price).Mul(decimal.RequireFromString("0.9")).Round(2)
	placed, err := jr.PlaceLimitOrder(ctx, cred, exgate.LimitOrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"},
		Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.1"), Price: price, TimeInForce: exgate.GTC}, "lim-1")
	if err != nil {
		t.Fatal(err)
	}
	// As the exchange reports it: its client order id is the gateway's id.
	upd := func(status exgate.OrderStatus, executed string) exgate.Order {
		o := placed
		o.ID, o.ClientOrderID, o.Status = placed.ID, placed.ID, status
		o.ExecutedQuantity = exgate.NumberPtr(decimal.RequireFromString(executed))
		return o
	}
	recorded := func() (exgate.IntentState, exgate.OrderStatus) {
		t.Helper()
		it, err := st.Intent(ctx, placed.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Read from the store: jr.Order would read the sim, which knows
		// nothing of these made-up fills.
		var o exgate.Order
		if err := json.Unmarshal(it.Response, &o); err != nil {
			t.Fatal(err)
		}
		return it.State, o.Status
	}

	for _, step := range []struct {
		name   string
		in     exgate.Order
		writes int32
		state  exgate.IntentState
		status exgate.OrderStatus
	}{
		{"partly filled", upd(exgate.OrderPartiallyFilled, "0.04"), 1, exgate.IntentAccepted, exgate.OrderPartiallyFilled},
		{"the same again", upd(exgate.OrderPartiallyFilled, "0.04"), 0, exgate.IntentAccepted, exgate.OrderPartiallyFilled},
		{"older", upd(exgate.OrderPending, "0"), 0, exgate.IntentAccepted, exgate.OrderPartiallyFilled},
		{"more filled", upd(exgate.OrderPartiallyFilled, "0.06"), 1, exgate.IntentAccepted, exgate.OrderPartiallyFilled},
		{"filled", upd(exgate.OrderFilled, "0.1"), 1, exgate.IntentFinal, exgate.OrderFilled},
		{"filled again", upd(exgate.OrderFilled, "0.1"), 0, exgate.IntentFinal, exgate.OrderFilled},
		{"canceled after filled", upd(exgate.OrderCanceled, "0.1"), 0, exgate.IntentFinal, exgate.OrderFilled},
	} {
		before := st.updates.Load()
		got := jr.StreamedOrder(ctx, cred, step.in)
		if got.ID != placed.ID || got.ClientOrderID != "lim-1" {
			t.Errorf("%s: answered ids %q %q", step.name, got.ID, got.ClientOrderID)
		}
		if n := st.updates.Load() - before; n != step.writes {
			t.Errorf("%s: %d writes, want %d", step.name, n, step.writes)
		}
		if state, status := recorded(); state != step.state || status != step.status {
			t.Errorf("%s: recorded %s %s, want %s %s", step.name, state, status, step.state, step.status)
		}
	}

	// Final now: GET /v1/order answers it from the journal.
	if o, err := jr.Order(ctx, "client", "", "lim-1"); err != nil || o.Status != exgate.OrderFilled {
		t.Errorf("GET /v1/order after the stream: %+v %v", o, err)
	}

	// An order placed outside the gateway carries the exchange's id; an
	// update naming another client's order is not recorded for it.
	outside := jr.StreamedOrder(ctx, cred, exgate.Order{ClientOrderID: "web-123", ExchangeOrderID: "987", Status: exgate.OrderPending})
	if outside.ID != "987" || outside.ClientOrderID != "" {
		t.Errorf("outside order labeled %q %q", outside.ID, outside.ClientOrderID)
	}
	before := st.updates.Load()
	foreign := jr.StreamedOrder(ctx, otherCred, upd(exgate.OrderCanceled, "0"))
	if st.updates.Load() != before || foreign.ClientOrderID != "" {
		t.Errorf("another client's update recorded or labeled: %+v", foreign)
	}
}
