package bybit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
)

// A burst of 20 times Bybit's per-UID limit of order/create (20 a second)
// through the gateway's HTTP API: the adapter's pacing holds what fits
// before each request's deadline and refuses the rest with 503
// EXCHANGE_UNAVAILABLE and Retry-After, so the fake, which answers 10006
// past 20 in any rolling second and HTTP 403 past 600 in 5 s as Bybit
// does, never has to refuse one.
func TestBurstThroughTheGatewayStaysWithinBybitLimits(t *testing.T) {
	a := newAPIEnv(t, envOptions{callTimeout: 2 * time.Second, adapter: func(o *bybit.Options) { o.Limiter = nil }})
	// The gateway's widest window: 400 requests at once on a busy machine
	// (-race) may wait seconds for the CPU before they are checked.
	a.c = client.New(a.URL, "client-a", "secret-a", "bybit", client.WithTimestamps(nil, time.Minute))
	const burst = 20 * 20
	// unknown counts orders sent whose answer came after the deadline
	// (EXCHANGE_TIMEOUT, reconciled by the journal): on a busy machine a
	// call paced to the end of its deadline may not finish in time.
	var placed, refused, unknown atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, burst)
	for i := range burst {
		wg.Go(func() {
			{
				_, err := a.c.PlaceLimitOrder(t.Context(), client.LimitOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "0.001",
					Price: "50000", ClientOrderID: "burst-" + strconv.Itoa(i)})
				ce, _ := errors.AsType[*client.Error](err)
				switch {
				case err == nil:
					placed.Add(1)
				case ce != nil && ce.Status == http.StatusServiceUnavailable && ce.Code == "EXCHANGE_UNAVAILABLE":
					refused.Add(1)
				case ce != nil && ce.Code == "EXCHANGE_TIMEOUT":
					unknown.Add(1)
				default:
					errs <- fmt.Errorf("order %d: %w", i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := a.srv.TooManyVisits(); n != 0 {
		t.Errorf("the fake answered 10006 %d times", n)
	}
	if n := a.srv.IPBans(); n != 0 {
		t.Errorf("the fake answered 403 %d times", n)
	}
	sent := a.srv.Requests("/v5/order/create")
	if int64(sent) != placed.Load()+unknown.Load() || placed.Load() == 0 || placed.Load()+refused.Load()+unknown.Load() != burst {
		t.Errorf("%d placed, %d late, %d refused by the gateway, %d reached the fake; want some placed and every other refused before it was sent",
			placed.Load(), unknown.Load(), refused.Load(), sent)
	}
	t.Logf("burst of %d: %d placed, %d answered late, %d refused with 503, %d order/create requests reached the fake, 0 refused by it",
		burst, placed.Load(), unknown.Load(), refused.Load(), sent)
}

// The per-IP limit, scaled down tenfold (the fake allows 60 requests in 5
// s, the adapter budgets 50): a burst of 20 times that of public reads
// never earns the 403 ban.
func TestIPBudgetNeverBanned(t *testing.T) {
	e := newEnv(t, envOptions{
		fake:    func(o *bybitfake.Options) { o.IPLimit = 60 },
		adapter: func(o *bybit.Options) { o.Limiter = nil; o.IPBudget = 50 },
	})
	var wg sync.WaitGroup
	var ok, refused atomic.Int64
	for range 20 * 60 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_, err := e.ex.OrderBook(ctx, e.cred, exgate.OrderBookRequest{Symbol: btcUSDT, Limit: 5})
			switch {
			case err == nil:
				ok.Add(1)
			case exgate.ErrorCode(err) == exgate.CodeExchangeUnavailable:
				refused.Add(1)
			default:
				t.Errorf("book: %v", err)
			}
		})
	}
	wg.Wait()
	if n := e.srv.IPBans(); n != 0 {
		t.Fatalf("the fake banned the address: %d answers 403", n)
	}
	if ok.Load() == 0 || ok.Load() > 60 {
		t.Errorf("%d reads answered, %d refused by the adapter", ok.Load(), refused.Load())
	}
}

// Bybit's own signals stop the adapter: 10006 pauses the endpoint until
// X-Bapi-Limit-Reset-Timestamp, X-Bapi-Limit-Status 0 does the same before
// Bybit has to refuse anything, and a 403 stops every call for the ban.
func TestBybitLimitSignalsPause(t *testing.T) {
	tests := []struct {
		name     string
		fault    func(now time.Time) bybitfake.Fault
		wantCode exgate.Code
	}{
		{"10006", func(now time.Time) bybitfake.Fault {
			return bybitfake.Fault{Status: 200, Header: map[string]string{"X-Bapi-Limit": "50", "X-Bapi-Limit-Status": "0",
				"X-Bapi-Limit-Reset-Timestamp": strconv.FormatInt(now.Add(5*time.Second).UnixMilli(), 10)},
				Body: `{"retCode":10006,"retMsg":"Too many visits!","result":{},"retExtInfo":{},"time":1}`}
		}, exgate.CodeExchangeUnavailable},
		{"remaining 0", func(now time.Time) bybitfake.Fault {
			return bybitfake.Fault{Status: 200, Header: map[string]string{"X-Bapi-Limit": "50", "X-Bapi-Limit-Status": "0",
				"X-Bapi-Limit-Reset-Timestamp": strconv.FormatInt(now.Add(5*time.Second).UnixMilli(), 10)},
				Body: `{"retCode":0,"retMsg":"OK","result":{"list":[{"accountType":"UNIFIED","coin":[{"coin":"BTC","walletBalance":"1","locked":"0"}]}]},"retExtInfo":{},"time":1}`}
		}, ""},
		{"403 ban", func(time.Time) bybitfake.Fault {
			return bybitfake.Fault{Status: 403, Body: "access too frequent"}
		}, exgate.CodeExchangeUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{adapter: func(o *bybit.Options) { o.Limiter = nil }})
			ctx := t.Context()
			once := atomic.Bool{}
			e.srv.SetFault(func(r *http.Request) bybitfake.Fault {
				if r.URL.Path == "/v5/account/wallet-balance" && once.CompareAndSwap(false, true) {
					return tc.fault(time.Now())
				}
				return bybitfake.Fault{}
			})
			_, err := e.ex.Balances(ctx, e.cred)
			if (tc.wantCode == "") != (err == nil) || (err != nil && exgate.ErrorCode(err) != tc.wantCode) {
				t.Fatalf("first call: %v, want code %q", err, tc.wantCode)
			}
			if tc.wantCode != "" {
				if ee, _ := errors.AsType[*exgate.Error](err); ee.RetryAfter <= 0 {
					t.Errorf("no Retry-After: %+v", ee)
				}
			}
			// The next call is held back by the adapter: nothing is sent.
			e.srv.ResetCounters()
			short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			_, err = e.ex.Balances(short, e.cred)
			if exgate.ErrorCode(err) != exgate.CodeExchangeUnavailable {
				t.Fatalf("second call: %v, want EXCHANGE_UNAVAILABLE", err)
			}
			if n := e.srv.Requests("/v5/account/wallet-balance"); n != 0 {
				t.Errorf("the paused call reached Bybit %d times", n)
			}
		})
	}
}
