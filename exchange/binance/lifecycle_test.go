package binance

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/binance/binancefake"
)

func limitReq(t *testing.T, side exgate.Side, qty, price string, tif exgate.TimeInForce, id string) exgate.LimitOrderRequest {
	return exgate.LimitOrderRequest{Symbol: btcusdt, Side: side, Quantity: num(t, qty), Price: num(t, price), TimeInForce: tif, ClientOrderID: id}
}

// TestLimitOrderChecks: what is refused before anything is sent, and how
// the quantity is rounded.
func TestLimitOrderChecks(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name  string
		req   exgate.LimitOrderRequest
		code  exgate.Code
		param string
		in    string // in the detail
	}{
		{"off the tick", limitReq(t, exgate.SideBuy, "0.01", "50000.005", exgate.GTC, "c1"), exgate.CodeInvalidParameter, "price", "0.01"},
		{"under minQty", limitReq(t, exgate.SideBuy, "0.000009", "50000", exgate.GTC, "c2"), exgate.CodeQuantityTooSmall, "", "0.00001"},
		{"under minNotional", limitReq(t, exgate.SideBuy, "0.00009", "50000", exgate.GTC, "c3"), exgate.CodeQuantityTooSmall, "", "minimum order value 5 USDT"},
		{"bad client id", limitReq(t, exgate.SideBuy, "0.01", "50000", exgate.GTC, "a.b"), exgate.CodeInvalidParameter, "clientOrderId", ""},
		{"postOnly IOC", func() exgate.LimitOrderRequest {
			r := limitReq(t, exgate.SideBuy, "0.01", "50000", exgate.IOC, "c4")
			r.PostOnly = true
			return r
		}(), exgate.CodeInvalidParameter, "postOnly", ""},
		{"halted market", exgate.LimitOrderRequest{Symbol: exgate.Symbol{Base: "LTC", Quote: "USDT"}, Side: exgate.SideBuy,
			Quantity: num(t, "1"), Price: num(t, "70"), TimeInForce: exgate.GTC, ClientOrderID: "c5"}, exgate.CodeOrderRejected, "", "BREAK"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, tc.req)
			if code(err) != tc.code {
				t.Fatalf("err %v, want %s", err, tc.code)
			}
			if ee, ok := err.(*exgate.Error); ok && (ee.Param != tc.param || !strings.Contains(ee.Detail, tc.in)) {
				t.Errorf("param %q detail %q, want %q and %q", ee.Param, ee.Detail, tc.param, tc.in)
			}
		})
	}
	if n := e.fake.OrderCount(testKey); n != 0 {
		t.Errorf("%d orders reached the fake", n)
	}

	// The quantity is rounded down to LOT_SIZE's step, never up.
	o, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, limitReq(t, exgate.SideBuy, "0.0123456", "50000", exgate.GTC, "round1"))
	if err != nil {
		t.Fatal(err)
	}
	if p := e.fake.LastParams("POST", "/api/v3/order"); p.Get("quantity") != "0.01234" || p.Get("price") != "50000" || p.Get("newClientOrderId") != "round1" {
		t.Errorf("sent %v", p)
	}
	if !o.Quantity.Equal(num(t, "0.01234")) || o.QuantityIn != "BTC" {
		t.Errorf("order %+v", o)
	}
}

// TestCancelAnswers: Binance answers -2011 "Unknown order sent." both for
// an unknown order and for one already final; the adapter tells them
// apart by reading the order. An answer lost is EXCHANGE_TIMEOUT.
func TestCancelAnswers(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limitReq(t, exgate.SideBuy, "0.01", "70000", exgate.GTC, "filled1")); err != nil {
		t.Fatal(err)
	}
	o, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcusdt, ClientOrderID: "filled1"})
	if err != nil || o.Status != exgate.OrderFilled || o.ClientOrderID != "filled1" {
		t.Errorf("cancel of a filled order: %+v, %v", o, err)
	}
	if _, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcusdt, ClientOrderID: "nosuch"}); code(err) != exgate.CodeNotFound {
		t.Errorf("cancel of an unknown order: %v", err)
	}

	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limitReq(t, exgate.SideSell, "0.01", "90000", exgate.GTC, "rest1")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []binancefake.Fault{
		{Status: http.StatusInternalServerError, Body: `{"code":-1000,"msg":"An unknown error occurred while processing the request."}`},
		{Status: http.StatusBadRequest, Body: `{"code":-1007,"msg":"Timeout waiting for response from backend server. Send status unknown; execution status unknown."}`},
		{DropAfter: true},
	} {
		e.fake.SetFault(func(r *http.Request) binancefake.Fault {
			if r.Method == http.MethodDelete {
				return f
			}
			return binancefake.Fault{}
		})
		if _, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcusdt, ClientOrderID: "rest1"}); code(err) != exgate.CodeExchangeTimeout {
			t.Errorf("cancel with %+v: %v, want EXCHANGE_TIMEOUT", f, err)
		}
	}
	e.fake.SetFault(nil)
	// The last fault canceled the order and lost the answer: the next
	// cancel finds it CANCELED. No cancel is ever retried by the adapter.
	if n := e.fake.CancelsOf("rest1"); n != 1 {
		t.Errorf("%d cancels reached the order", n)
	}
	o, err = e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcusdt, ClientOrderID: "rest1"})
	if err != nil || o.Status != exgate.OrderCanceled {
		t.Errorf("cancel after a lost answer: %+v, %v", o, err)
	}
	if free, locked := e.fake.Balance(testKey, "BTC"); !free.Equal(num(t, "3.00999")) || !locked.IsZero() {
		t.Errorf("BTC free %s locked %s after the cancel", free, locked)
	}
}

func TestHistoryAndSymbols(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	id, cid := e.fake.PlaceOutside(testKey, "BTCUSDT", "SELL", "0.5", "80000.00")
	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limitReq(t, exgate.SideBuy, "0.01", "40000", exgate.GTC, "mine1")); err != nil {
		t.Fatal(err)
	}
	open, err := e.ex.OpenOrders(ctx, e.cred, exgate.OrderFilter{})
	if err != nil || len(open) != 2 {
		t.Fatalf("open %+v %v", open, err)
	}
	if open[0].ClientOrderID != "mine1" || open[1].ClientOrderID != cid || open[1].ExchangeOrderID != decimal.NewFromInt(id).String() {
		t.Errorf("open, newest first: %+v", open)
	}
	if p := e.fake.LastParams("GET", "/api/v3/openOrders"); p.Has("symbol") {
		t.Errorf("open orders of every pair sent %v", p)
	}
	recent, err := e.ex.RecentOrders(ctx, e.cred, exgate.OrderFilter{Symbol: btcusdt, Limit: 1})
	if err != nil || len(recent) != 1 || recent[0].ClientOrderID != "mine1" || recent[0].Price == nil || !recent[0].Price.Equal(num(t, "40000")) {
		t.Errorf("recent %+v %v", recent, err)
	}

	syms, err := e.ex.Symbols(ctx, e.cred, exgate.SymbolFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byPair := map[string]exgate.SymbolInfo{}
	for _, s := range syms {
		byPair[s.Asset1+"/"+s.Asset2] = s
	}
	if s := byPair["BTC/USDT"]; s.PriceStep != "0.01" || s.QuantityStep != "0.00001" || s.MinQuantity != "0.00001" || s.MinNotional != "5" || s.Status != exgate.SymbolTrading {
		t.Errorf("BTC/USDT %+v", s)
	}
	if s := byPair["LTC/USDT"]; s.Status != exgate.SymbolHalted {
		t.Errorf("LTC/USDT in BREAK: %+v", s)
	}
	if s := byPair["XRP/USDT"]; s.MinNotional != "5" || s.PriceStep != "0.0001" {
		t.Errorf("XRP/USDT (MIN_NOTIONAL) %+v", s)
	}
}

func TestRecentWithdrawals(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	for _, id := range []string{"w1", "w2"} {
		if _, err := e.ex.Withdraw(ctx, e.cred, exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9",
			Amount: num(t, "25"), ClientWithdrawalID: id}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
	}
	ws, err := e.ex.RecentWithdrawals(ctx, e.cred, exgate.WithdrawalFilter{Asset: "USDT"})
	if err != nil || len(ws) != 2 || ws[0].ClientWithdrawalID != "w2" {
		t.Fatalf("withdrawals %+v %v", ws, err)
	}
	if none, err := e.ex.RecentWithdrawals(ctx, e.cred, exgate.WithdrawalFilter{Asset: "USDT", Status: exgate.TransferFailed}); err != nil || len(none) != 0 {
		t.Errorf("failed withdrawals %+v %v", none, err)
	}
}

// BenchmarkLimitRoundTrip places a resting GTC order and cancels it,
// adapter to fake over loopback: the exchange side of POST /v1/order/limit
// and POST /v1/order/cancel.
func BenchmarkLimitRoundTrip(b *testing.B) {
	e := newEnv(b, func(o *Options) { o.Limiter = noLimit{} })
	e.fake.SetBalance(testKey, "USDT", "1000000000")
	ctx := b.Context()
	i := 0
	for b.Loop() {
		i++
		id := "bench" + strconv.Itoa(i)
		req := exgate.LimitOrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: decimal.RequireFromString("0.01"),
			Price: decimal.RequireFromString("40000"), TimeInForce: exgate.GTC, ClientOrderID: id}
		if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, req); err != nil {
			b.Fatal(err)
		}
		if _, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcusdt, ClientOrderID: id}); err != nil {
			b.Fatal(err)
		}
	}
}

// noLimit is a limiter that never waits: the benchmark measures the calls,
// not Binance's budgets.
type noLimit struct{}

func (noLimit) Reserve(context.Context, string, int, exgate.RateLimit) (time.Duration, error) {
	return 0, nil
}
func (noLimit) Pause(context.Context, string, time.Time) error { return nil }
func (noLimit) PausedUntil(context.Context, string) (time.Time, error) {
	return time.Time{}, nil
}
