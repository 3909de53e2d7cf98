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
)

// The order lifecycle on Gate under injected faults (the helpers and
// fault mix of fault_test.go, on its gateio venue): limit orders placed
// while the fake times out, answers 5xx and resets connections, retried
// under the same client reference, are held at most once each; cancels
// under the same faults are never lost (every order ends canceled on the
// fake and in the journal) and never reach another order.

// settleUntil waits out requests still sleeping in the fake, then
// reconciles (moving the clock past the grace period) until at most
// want intents are left unfinished.
func settleUntil(t *testing.T, jr *journal.Service, clk *shiftClock, want int) {
	t.Helper()
	time.Sleep(2 * slowDelay)
	clk.Add(2 * time.Minute)
	left := -1
	for i := 0; i < 20 && left > want || left < 0; i++ {
		left = jr.ReconcileAll(t.Context())
		clk.Add(time.Minute)
	}
	if left > want {
		t.Fatalf("%d intents unfinished after reconciliation, want at most %d", left, want)
	}
}

var gateBTC = exgate.Symbol{Base: "BTC", Quote: "USDT"}

// unexpected reports whether an error of a call under faults is one the
// client should not see: anything but an unknown outcome, an exchange
// failure or a refusal.
func unexpected(err error) bool {
	switch exgate.ErrorCode(err) {
	case exgate.CodeExchangeTimeout, exgate.CodeExchangeError, exgate.CodeExchangeUnavailable, exgate.CodeOrderRejected:
		return false
	}
	return err != nil
}

func TestFaultInjectionGateioLimitOrders(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs hundreds of requests; skipped with -short")
	}
	t.Parallel()
	v := gateioVenue(t)
	jr, cred, clk, st := lifecycleJournal(t, v)
	ctx := t.Context()
	injectRandom(v, 11, v.isSubmit)

	// Crossing IOC buys fill at once (the fake's asks start at 60000.5):
	// each ends FILLED, or never placed.
	req := exgate.LimitOrderRequest{Symbol: gateBTC, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.01"),
		Price: decimal.RequireFromString("60001"), TimeInForce: exgate.IOC}
	attempts, distinct := 300, 120
	if raceEnabled {
		attempts, distinct = 90, 36
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for {
				n := int(next.Add(1)) - 1
				if n >= attempts {
					return
				}
				if _, err := jr.PlaceLimitOrder(ctx, cred, req, fmt.Sprintf("lim-%d", n%distinct)); unexpected(err) {
					t.Errorf("attempt %d: unexpected %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	v.inject(func(*http.Request) fault { return faultNone })
	settleUntil(t, jr, clk, 0)

	held := 0
	for i := range distinct {
		it, err := st.IntentByClientRef(ctx, "client", exgate.IntentOrder, fmt.Sprintf("lim-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		n := v.orders(it.ID)
		switch {
		case n > 1:
			t.Errorf("lim-%d (%s): the exchange holds %d orders for one client id", i, it.ID, n)
		case n == 1 && it.Answer == exgate.AnswerRecord:
			held++
			checkRecorded(t, exgate.IntentOrder, it)
		case n == 0 && it.Answer != exgate.AnswerRecord:
		default:
			t.Errorf("lim-%d (%s): the exchange holds %d, the journal says %q %s", i, it.ID, n, it.Answer, it.Response)
		}
	}
	t.Logf("gateio limit orders: %d attempts over %d client ids, %d held", attempts, distinct, held)
	if held == 0 {
		t.Error("no limit order reached the exchange")
	}
}

func TestFaultInjectionGateioCancels(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs hundreds of requests; skipped with -short")
	}
	t.Parallel()
	v := gateioVenue(t)
	jr, cred, clk, st := lifecycleJournal(t, v)
	ctx := t.Context()
	om, ok := exgate.Ability[exgate.OrderManager](v.ex)
	if !ok {
		t.Fatal("the gateio adapter does not implement exgate.OrderManager")
	}

	// Resting GTC buys, placed without faults; one more through the
	// journal that is never canceled, and one placed straight on the
	// exchange (not the journal's): neither may be hit by the cancels.
	n := 40
	if raceEnabled {
		n = 16
	}
	rest := func(ref string) {
		req := exgate.LimitOrderRequest{Symbol: gateBTC, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.01"),
			Price: decimal.RequireFromString("50000"), TimeInForce: exgate.GTC}
		if o, err := jr.PlaceLimitOrder(ctx, cred, req, ref); err != nil || o.Status != exgate.OrderPending {
			t.Fatalf("place %s: %+v, %v", ref, o, err)
		}
	}
	for i := range n {
		rest(fmt.Sprintf("can-%d", i))
	}
	rest("keep-1")
	outside, err := om.PlaceLimitOrder(ctx, cred, exgate.LimitOrderRequest{Symbol: gateBTC, Side: exgate.SideBuy,
		Quantity: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000"), TimeInForce: exgate.GTC, ClientOrderID: "outside-1"})
	if err != nil {
		t.Fatal(err)
	}

	// Cancels under faults: DELETEs always take one, reads one in four;
	// each order's cancel is tried three times, often concurrently.
	injectRandom(v, 23, func(r *http.Request) bool { return r.Method == http.MethodDelete })
	var next, unknown atomic.Int64
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= 3*n {
					return
				}
				_, err := jr.CancelOrder(ctx, cred, "", fmt.Sprintf("can-%d", i%n))
				if exgate.ErrorCode(err) == exgate.CodeExchangeTimeout {
					unknown.Add(1)
				}
				if unexpected(err) && exgate.ErrorCode(err) != exgate.CodeNotFound {
					t.Errorf("cancel can-%d: unexpected %v", i%n, err)
				}
			}
		})
	}
	wg.Wait()
	v.inject(func(*http.Request) fault { return faultNone })
	// keep-1 stays open (its intent accepted, not final).
	settleUntil(t, jr, clk, 1)

	open, err := om.OpenOrders(ctx, cred, exgate.OrderFilter{Symbol: gateBTC})
	if err != nil {
		t.Fatal(err)
	}
	keep, err := st.IntentByClientRef(ctx, "client", exgate.IntentOrder, "keep-1")
	if err != nil {
		t.Fatal(err)
	}
	still := map[string]bool{}
	for _, o := range open {
		still[o.ClientOrderID] = true
	}
	if len(open) != 2 || !still[keep.ID] || !still[outside.ClientOrderID] {
		t.Errorf("open after the cancels: %+v; want only %s and %s", open, keep.ID, outside.ClientOrderID)
	}
	t.Logf("gateio cancels: %d attempts over %d orders, %d answered with an unknown outcome", 3*n, n, unknown.Load())
	if unknown.Load() == 0 {
		t.Error("no cancel had an unknown outcome: the faults did not bite")
	}
	for i := range n {
		ref := fmt.Sprintf("can-%d", i)
		o, err := jr.Order(ctx, "client", "", ref)
		if err != nil || o.Status != exgate.OrderCanceled {
			t.Errorf("%s: %+v, %v; want CANCELED (a lost cancel?)", ref, o, err)
			continue
		}
		if v.orders(o.ID) != 1 {
			t.Errorf("%s: the exchange holds %d orders", ref, v.orders(o.ID))
		}
	}
}
