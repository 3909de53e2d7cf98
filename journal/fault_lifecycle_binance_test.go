package journal_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/sqlite"
)

// The Binance order lifecycle under the faults of fault_test.go (answers
// too slow for the adapter, 5xx, connections reset before and after the
// request is processed), on the Binance fake through the journal: limit
// orders are never placed twice for one client id, and no cancel is lost.

// settleAll waits out requests still sleeping in the fake and reconciles
// (as runFaults does) until no intent's outcome is unknown: what is left
// unfinished is orders resting on the book (accepted).
func settleAll(t *testing.T, v venue, jr *journal.Service, clk *shiftClock, st *sqlite.Store) {
	t.Helper()
	v.inject(func(*http.Request) fault { return faultNone })
	time.Sleep(2 * slowDelay)
	clk.Add(2 * time.Minute)
	for range 20 {
		jr.ReconcileAll(t.Context())
		clk.Add(time.Minute)
	}
	its, err := st.UnfinishedIntents(t.Context(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range its {
		if it.State != exgate.IntentAccepted {
			t.Errorf("%s %s still %s after reconciliation: %s", it.Kind, it.ID, it.State, it.Response)
		}
	}
}

// binanceWrite is an order submission or cancel: it takes a fault every
// time.
func binanceWrite(r *http.Request) bool {
	return r.URL.Path == "/api/v3/order" && (r.Method == http.MethodPost || r.Method == http.MethodDelete)
}

var btcusdt = exgate.Symbol{Base: "BTC", Quote: "USDT"}

// restingBuy is a GTC buy far under the fake's BTCUSDT book (about
// 60000): it rests.
func restingBuy() exgate.LimitOrderRequest {
	return exgate.LimitOrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.001"),
		Price: decimal.RequireFromString("30000.00"), TimeInForce: exgate.GTC}
}

func TestFaultLimitOrdersBinance(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs many requests; skipped with -short")
	}
	t.Parallel()
	ctx := t.Context()
	v := binanceVenue(t)
	jr, cred, clk, st := lifecycleJournal(t, v)
	injectRandom(v, 1, binanceWrite)

	attempts, distinct := 300, 120
	if raceEnabled {
		attempts, distinct = 90, 36
	}
	// Even refs rest (GTC away from the market), odd ones cross and
	// fill at once (IOC above the best ask).
	order := func(i int) exgate.LimitOrderRequest {
		r := restingBuy()
		if i%2 == 1 {
			r.Price, r.TimeInForce = decimal.RequireFromString("61000.00"), exgate.IOC
		}
		return r
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= attempts {
					return
				}
				_, err := jr.PlaceLimitOrder(ctx, cred, order(n%distinct), fmt.Sprintf("ref-%d", n%distinct))
				if c := exgate.ErrorCode(err); err != nil && c != exgate.CodeExchangeTimeout && c != exgate.CodeExchangeError &&
					c != exgate.CodeExchangeUnavailable && c != exgate.CodeOrderRejected {
					t.Errorf("attempt %d: unexpected %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	settleAll(t, v, jr, clk, st)

	om, _ := exgate.Ability[exgate.OrderManager](v.ex)
	held := 0
	for i := range distinct {
		it, err := st.IntentByClientRef(ctx, "client", exgate.IntentOrder, fmt.Sprintf("ref-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		n := v.orders(it.ID)
		switch {
		case n > 1:
			t.Errorf("ref-%d (%s): Binance holds %d orders with its client id", i, it.ID, n)
		case it.State != exgate.IntentFinal && it.State != exgate.IntentAccepted:
			t.Errorf("ref-%d: state %s", i, it.State)
		case n == 1 && it.Answer == exgate.AnswerRecord:
			held++
			// The journal's record agrees with Binance's order.
			got, err := jr.Order(ctx, "client", it.ID, "")
			ex, qerr := om.OpenOrders(ctx, cred, exgate.OrderFilter{Symbol: btcusdt})
			if err != nil || qerr != nil {
				t.Fatalf("ref-%d: %v %v", i, err, qerr)
			}
			open := false
			for _, o := range ex {
				open = open || o.ClientOrderID == it.ID
			}
			if open != !got.Status.Final() || got.Type != exgate.OrderTypeLimit {
				t.Errorf("ref-%d: journal says %s %s, open on Binance: %v", i, got.Type, got.Status, open)
			}
		case n == 0 && it.Answer != exgate.AnswerRecord:
		default:
			t.Errorf("ref-%d (%s): Binance holds %d, the journal says %q %s", i, it.ID, n, it.Answer, it.Response)
		}
	}
	t.Logf("binance limit orders: %d attempts over %d client ids, %d held by Binance", attempts, distinct, held)
	if held == 0 {
		t.Error("no limit order reached Binance: the faults are too strong for the test to mean anything")
	}
}

func TestFaultCancelsBinance(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs many requests; skipped with -short")
	}
	t.Parallel()
	ctx := t.Context()
	v := binanceVenue(t)
	jr, cred, clk, st := lifecycleJournal(t, v)
	om, _ := exgate.Ability[exgate.OrderManager](v.ex)

	orders, attempts := 60, 150
	if raceEnabled {
		orders, attempts = 24, 60
	}
	// Resting orders placed without faults, and one more that nobody
	// cancels: no cancel may reach it.
	ids := make([]string, orders)
	for i := range ids {
		o, err := jr.PlaceLimitOrder(ctx, cred, restingBuy(), fmt.Sprintf("rest-%d", i))
		if err != nil || o.Status != exgate.OrderPending {
			t.Fatalf("place %d: %+v %v", i, o, err)
		}
		ids[i] = o.ID
	}
	bystander, err := jr.PlaceLimitOrder(ctx, cred, restingBuy(), "bystander")
	if err != nil {
		t.Fatal(err)
	}

	injectRandom(v, 2, binanceWrite)
	var next atomic.Int64
	var answered atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= attempts {
					return
				}
				o, err := jr.CancelOrder(ctx, cred, ids[n%orders], "")
				if err == nil {
					answered.Add(1)
					if o.Status != exgate.OrderCanceled {
						t.Errorf("cancel %d answered %s", n, o.Status)
					}
					continue
				}
				if c := exgate.ErrorCode(err); c != exgate.CodeExchangeTimeout && c != exgate.CodeExchangeError && c != exgate.CodeExchangeUnavailable {
					t.Errorf("cancel %d: unexpected %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	settleAll(t, v, jr, clk, st)

	// Every order a cancel was asked for is CANCELED on Binance and in
	// the journal, whatever happened to the cancel's answer.
	open, err := om.OpenOrders(ctx, cred, exgate.OrderFilter{Symbol: btcusdt})
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || open[0].ClientOrderID != bystander.ID {
		t.Errorf("open on Binance after the cancels: %+v, want only the bystander %s", open, bystander.ID)
	}
	for i, id := range ids {
		ex, err := v.ex.QueryOrder(ctx, cred, exgate.OrderQuery{Symbol: btcusdt, ClientOrderID: id})
		if err != nil || ex.Status != exgate.OrderCanceled {
			t.Errorf("rest-%d on Binance: %s %v, want CANCELED", i, ex.Status, err)
		}
		got, err := jr.Order(ctx, "client", id, "")
		if err != nil || got.Status != exgate.OrderCanceled {
			t.Errorf("rest-%d in the journal: %s %v, want CANCELED", i, got.Status, err)
		}
	}
	t.Logf("binance cancels: %d attempts over %d orders, %d answered at once", attempts, orders, answered.Load())
}
