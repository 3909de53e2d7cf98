package journal_test

import (
	"bytes"
	"context"
	"errors"
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

// cancelFault is the sim with a cancel that times out: applied on the
// exchange or not (lost on the way), per the test.
type cancelFault struct {
	*sim.Exchange
	apply   bool
	cancels atomic.Int32
	faulty  atomic.Bool
}

func (f *cancelFault) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	f.cancels.Add(1)
	if !f.faulty.Load() {
		return f.Exchange.CancelOrder(ctx, cred, req)
	}
	if f.apply {
		if _, err := f.Exchange.CancelOrder(ctx, cred, req); err != nil {
			return exgate.Order{}, err
		}
	}
	return exgate.Order{}, exgate.Errorf(exgate.CodeExchangeTimeout, "no answer")
}

// TestCancelReconciled: a cancel whose answer is lost is settled by the
// reconciler reading the order; one that never reached the exchange is
// sent again by the order's client id, once, and the order ends CANCELED
// with its funds released exactly once.
func TestCancelReconciled(t *testing.T) {
	for _, applied := range []bool{true, false} {
		name := map[bool]string{true: "answer lost", false: "cancel lost"}[applied]
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{1}, 32))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client", Secret: "x", CreatedAt: now}); err != nil {
				t.Fatal(err)
			}
			cred, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client", Name: "paper", Exchange: "sim",
				Permissions: []exgate.Permission{exgate.PermissionTrade}})
			if err != nil {
				t.Fatal(err)
			}
			ex := &cancelFault{Exchange: sim.New(sim.Options{Ledger: st, Now: clock}), apply: applied}
			jr := journal.New(journal.Options{Store: st, Exchanges: map[string]exgate.Exchange{"sim": ex}, Now: clock})

			book, err := ex.OrderBook(ctx, cred, exgate.OrderBookRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			price := decimal.RequireFromString(book.Bids[0].Price).Mul(decimal.RequireFromString("0.9")).Round(2)
			before, _ := st.SimBalances(ctx, cred.ID)
			o, err := jr.PlaceLimitOrder(ctx, cred, exgate.LimitOrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"},
				Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.1"), Price: price, TimeInForce: exgate.GTC}, "lim-1")
			if err != nil || o.Status != exgate.OrderPending {
				t.Fatalf("place: %+v %v", o, err)
			}
			if before == nil {
				before = map[string]decimal.Decimal{"USDT": decimal.RequireFromString("100000")}
			}

			ex.faulty.Store(true)
			_, err = jr.CancelOrder(ctx, cred, "", "lim-1")
			if e, ok := errors.AsType[*exgate.Error](err); !ok || e.Code != exgate.CodeExchangeTimeout {
				t.Fatalf("cancel: %v, want EXCHANGE_TIMEOUT", err)
			}
			ex.faulty.Store(false)
			// The cancel is settled; the order's own intent (accepted,
			// not yet due again) is refreshed by the read below.
			if left := jr.ReconcileAll(ctx); left > 1 {
				t.Fatalf("%d intents unfinished after reconciling, want at most the order's", left)
			}
			got, err := jr.Order(ctx, "client", "", "lim-1")
			if err != nil || got.Status != exgate.OrderCanceled {
				t.Fatalf("order after reconciling: %+v %v", got, err)
			}
			wantCancels := int32(1)
			if !applied {
				wantCancels = 2 // read, found open, sent again
			}
			if n := ex.cancels.Load(); n != wantCancels {
				t.Errorf("%d cancels reached the exchange, want %d", n, wantCancels)
			}
			after, _ := st.SimBalances(ctx, cred.ID)
			if !after["USDT"].Equal(before["USDT"]) {
				t.Errorf("USDT %s after the cancel, want %s back", after["USDT"], before["USDT"])
			}
		})
	}
}
