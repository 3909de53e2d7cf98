package journal_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
)

// Bybit under the fault mix of fault_test.go: market orders and
// withdrawals (runFaults), then limit orders and cancels as on the other
// exchanges (fault_lifecycle_gateio_test.go). Withdrawals of each client
// id differ in amount: Bybit's records carry no requestId, so a lost
// answer is matched by its details (exchange/bybit QueryWithdrawal).

func bybitVenue(t *testing.T) venue {
	fake := bybitfake.New(bybitfake.Options{NoRateLimits: true})
	t.Cleanup(fake.Close)
	const addr = "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf"
	if err := fake.AddAccount(bybitfake.Account{APIKey: "k", Secret: "s",
		Unified: map[string]string{"USDT": "10000000", "BTC": "1000"}, Fund: map[string]string{"USDT": "10000000"},
		AddressBook: []bybitfake.BookAddress{{Coin: "USDT", Chain: "TRX", Address: addr}}}); err != nil {
		t.Fatal(err)
	}
	ex := bybit.New(bybit.Options{BaseURL: fake.URL, HTTPClient: &http.Client{Timeout: callTimeout}, Limiter: unlimited{}})
	return venue{
		name:  "bybit",
		ex:    ex,
		cred:  exgate.Credential{Exchange: bybit.Name, Key: "k", Secret: "s", Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}},
		order: exgate.OrderRequest{Symbol: exgate.Symbol{Base: "BTC", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("20"), QuantityIn: exgate.InQuote},
		wdFor: func(i int) exgate.WithdrawalRequest {
			return exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: addr,
				Amount: decimal.RequireFromString("100").Add(decimal.New(int64(i), -4))}
		},
		inject: func(f func(r *http.Request) fault) {
			fake.SetFault(func(r *http.Request) bybitfake.Fault {
				switch f(r) {
				case faultSlow:
					return bybitfake.Fault{Delay: slowDelay}
				case faultSlowOK:
					return bybitfake.Fault{Delay: slowOKDelay}
				case faultStatus500:
					return bybitfake.Fault{Status: 500, Body: "Internal Server Error"}
				case faultDrop:
					return bybitfake.Fault{Drop: true}
				case faultDropAfter:
					return bybitfake.Fault{DropAfter: true}
				}
				return bybitfake.Fault{}
			})
		},
		orders:  func(id string) int { return fake.OrdersByLinkID("k", id) },
		withdrs: func(it exgate.Intent) int { return fake.WithdrawalsByRequestID("k", it.ID) },
		isSubmit: func(r *http.Request) bool {
			return r.URL.Path == "/v5/order/create" || r.URL.Path == "/v5/asset/withdraw/create"
		},
	}
}

func TestFaultInjectionBybit(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs thousands of requests; skipped with -short")
	}
	for _, kind := range []exgate.IntentKind{exgate.IntentOrder, exgate.IntentWithdrawal} {
		v := bybitVenue(t)
		t.Run(v.name+"/"+string(kind), func(t *testing.T) { runFaults(t, v, kind) })
	}
}

func TestFaultInjectionBybitLimitOrders(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs hundreds of requests; skipped with -short")
	}
	v := bybitVenue(t)
	jr, cred, clk, st := lifecycleJournal(t, v)
	ctx := t.Context()
	injectRandom(v, 11, v.isSubmit)

	// Crossing IOC buys fill at once (the fake's asks start at 60000.5):
	// each ends FILLED, or never placed.
	req := exgate.LimitOrderRequest{Symbol: gateBTC, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.01"),
		Price: decimal.RequireFromString("60001.5"), TimeInForce: exgate.IOC}
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
	t.Logf("bybit limit orders: %d attempts over %d client ids, %d held", attempts, distinct, held)
	if held == 0 {
		t.Error("no limit order reached the exchange")
	}
}

func TestFaultInjectionBybitCancels(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection runs hundreds of requests; skipped with -short")
	}
	v := bybitVenue(t)
	jr, cred, clk, st := lifecycleJournal(t, v)
	ctx := t.Context()
	om, ok := exgate.Ability[exgate.OrderManager](v.ex)
	if !ok {
		t.Fatal("the bybit adapter does not implement exgate.OrderManager")
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
		Quantity: decimal.RequireFromString("0.01"), Price: decimal.RequireFromString("50000"), TimeInForce: exgate.GTC, ClientOrderID: "outside-1"})
	if err != nil {
		t.Fatal(err)
	}

	// Cancels under faults: cancels always take one, reads one in four;
	// each order's cancel is tried three times, often concurrently.
	injectRandom(v, 23, func(r *http.Request) bool { return r.URL.Path == "/v5/order/cancel" })
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
	t.Logf("bybit cancels: %d attempts over %d orders, %d answered with an unknown outcome", 3*n, n, unknown.Load())
	if unknown.Load() == 0 {
		t.Error("no cancel had an unknown outcome: the faults did not bite")
	}
	for i := range n {
		ref := fmt.Sprintf("can-%d", i)
		o, err := jr.Order(ctx, "client", "", ref)
		if err != nil || o.Status != exgate.OrderCanceled {
			t.Errorf("%s: %+v, %v; want CANCELED (a lost cancel?)", ref, o, err)
		}
	}
}
