package journal_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/okx"
	"github.com/exgate/exgate/exchange/okx/okxfake"
)

// okxVenue is OKX's fake with an adapter pointed at it: orders from the
// trading account, withdrawals from the funding account.
func okxVenue(t *testing.T) venue {
	fake := okxfake.New(okxfake.Options{NoRateLimits: true})
	t.Cleanup(fake.Close)
	if err := fake.AddAccount(okxfake.Account{APIKey: "k", Secret: "s", Passphrase: "p",
		Balances: map[string]string{"USDT": "10000000", "BTC": "1000"}, Funding: map[string]string{"USDT": "10000000"}}); err != nil {
		t.Fatal(err)
	}
	ex := okx.New(okx.Options{BaseURL: fake.URL, HTTPClient: &http.Client{Timeout: callTimeout}, Limiter: unlimited{}})
	return venue{
		name:  "okx",
		ex:    ex,
		cred:  exgate.Credential{Exchange: okx.Name, Key: "k", Secret: "s", Passphrase: "p", Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}},
		order: exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("20"), QuantityIn: exgate.InQuote},
		wd:    exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: decimal.RequireFromString("100")},
		inject: func(f func(r *http.Request) fault) {
			fake.SetFault(func(r *http.Request) okxfake.Fault {
				switch f(r) {
				case faultSlow:
					return okxfake.Fault{Delay: slowDelay}
				case faultSlowOK:
					return okxfake.Fault{Delay: slowOKDelay}
				case faultStatus500:
					return okxfake.Fault{Status: 500, Body: `{"code":"50026","msg":"System error","data":[]}`}
				case faultDrop:
					return okxfake.Fault{Drop: true}
				case faultDropAfter:
					return okxfake.Fault{DropAfter: true}
				}
				return okxfake.Fault{}
			})
		},
		orders:  func(id string) int { return fake.OrdersByClOrdID("k", id) },
		withdrs: func(it exgate.Intent) int { return fake.Withdrawals("k", it.ID) },
		isSubmit: func(r *http.Request) bool {
			return r.Method == http.MethodPost && (r.URL.Path == "/api/v5/trade/order" || r.URL.Path == "/api/v5/asset/withdrawal")
		},
	}
}

// The order lifecycle on OKX under injected faults, as on Gate.io
// (fault_lifecycle_gateio_test.go): limit orders retried under one client
// reference are held at most once; cancels are never lost and never reach
// another order.

func TestFaultInjectionOKXLimitOrders(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs hundreds of requests; skipped with -short")
	}
	t.Parallel()
	v := okxVenue(t)
	jr, cred, clk, st := lifecycleJournal(t, v)
	ctx := t.Context()
	injectRandom(v, 11, v.isSubmit)

	// Crossing IOC buys fill at once (the fake's asks start at 60000.5).
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
	t.Logf("okx limit orders: %d attempts over %d client ids, %d held", attempts, distinct, held)
	if held == 0 {
		t.Error("no limit order reached the exchange")
	}
}

func TestFaultInjectionOKXCancels(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs hundreds of requests; skipped with -short")
	}
	t.Parallel()
	v := okxVenue(t)
	jr, cred, clk, st := lifecycleJournal(t, v)
	ctx := t.Context()
	om, ok := exgate.Ability[exgate.OrderManager](v.ex)
	if !ok {
		t.Fatal("the okx adapter does not implement exgate.OrderManager")
	}
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
		Quantity: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000"), TimeInForce: exgate.GTC, ClientOrderID: "outside1"})
	if err != nil {
		t.Fatal(err)
	}

	// Cancels under faults: POST cancel-order always takes one, reads one
	// in four; each order's cancel is tried three times, often
	// concurrently.
	injectRandom(v, 23, func(r *http.Request) bool { return r.URL.Path == "/api/v5/trade/cancel-order" })
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
	t.Logf("okx cancels: %d attempts over %d orders, %d answered with an unknown outcome", 3*n, n, unknown.Load())
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
