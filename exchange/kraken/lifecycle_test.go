package kraken_test

import (
	"errors"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
)

func limitReq(side exgate.Side, qty, price string, tif exgate.TimeInForce, id string) exgate.LimitOrderRequest {
	return exgate.LimitOrderRequest{Symbol: btcUSDT, Side: side, Quantity: dec(qty), Price: dec(price), TimeInForce: tif, ClientOrderID: id}
}

// The AddOrder form of a limit order: Kraken's parameter names, the
// volume rounded down to lot_decimals, post and fciq flags, cl_ord_id.
func TestLimitOrderForm(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	c := watch(e.srv, "/0/private/AddOrder", nil)
	req := limitReq(exgate.SideSell, "0.0123456789", "90000.5", exgate.GTC, "form-1")
	req.PostOnly = true
	o, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, req)
	if err != nil {
		t.Fatal(err)
	}
	f := c.last(t)
	want := map[string]string{"pair": "XBTUSDT", "type": "sell", "ordertype": "limit", "price": "90000.5",
		"volume": "0.01234567", "timeinforce": "GTC", "oflags": "post,fciq", "cl_ord_id": "form-1"}
	for k, v := range want {
		if got := f.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if f.Has("validate") {
		t.Error("a placed order carries validate")
	}
	if o.Status != exgate.OrderPending || !o.Quantity.Equal(dec("0.01234567")) || !o.PostOnly || o.Type != exgate.OrderTypeLimit {
		t.Errorf("order %+v", o)
	}
}

// Refusals before anything is sent: FOK (Kraken has none), a price off
// tick_size, a volume below ordermin, a cost below costmin.
func TestLimitOrderRefusedBeforeSending(t *testing.T) {
	tests := []struct {
		name    string
		req     exgate.LimitOrderRequest
		code    exgate.Code
		param   string
		mention []string
	}{
		{"FOK", limitReq(exgate.SideBuy, "0.01", "25000", exgate.FOK, "r1"), exgate.CodeInvalidParameter, "timeInForce", []string{"GTC, IOC or GTD"}},
		{"off the tick", limitReq(exgate.SideBuy, "0.01", "25000.05", exgate.GTC, "r2"), exgate.CodeInvalidParameter, "price", []string{"0.1"}},
		{"below ordermin", limitReq(exgate.SideBuy, "0.00009999", "25000", exgate.GTC, "r3"), exgate.CodeQuantityTooSmall, "", []string{"0.0001"}},
		{"below costmin", limitReq(exgate.SideBuy, "0.0001", "1", exgate.GTC, "r4"), exgate.CodeQuantityTooSmall, "", []string{"0.5 USDT"}},
		{"inverse pair", exgate.LimitOrderRequest{Symbol: exgate.Symbol{Base: "USDT", Quote: "BTC"}, Side: exgate.SideBuy, Quantity: dec("100"), Price: dec("0.00003"), TimeInForce: exgate.GTC, ClientOrderID: "r5"}, exgate.CodeUnknownSymbol, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, krakenfake.Options{}, nil)
			_, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, tc.req)
			xe := wantCode(t, err, tc.code, tc.mention...)
			if xe.Param != tc.param {
				t.Errorf("param %q, want %q", xe.Param, tc.param)
			}
			if _, err := e.ex.TestOrder(t.Context(), e.cred, exgate.TestOrderRequest{Limit: &tc.req}); exgate.ErrorCode(err) != tc.code {
				t.Errorf("TestOrder: %v, want %s", err, tc.code)
			}
			if n := e.srv.Requests("/0/private/AddOrder"); n != 0 {
				t.Errorf("%d AddOrder calls, want none", n)
			}
		})
	}
}

// A test order is AddOrder validate=true: Kraken checks it, nothing is
// placed, and its refusals come back as the order's would.
func TestTestOrderValidates(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	c := watch(e.srv, "/0/private/AddOrder", nil)
	req := limitReq(exgate.SideBuy, "0.01", "25000", exgate.GTC, "t1")
	o, err := e.ex.TestOrder(t.Context(), e.cred, exgate.TestOrderRequest{Limit: &req})
	if err != nil || o.Status != exgate.OrderTest {
		t.Fatalf("TestOrder = %+v, %v", o, err)
	}
	if got := c.last(t).Get("validate"); got != "true" {
		t.Errorf("validate = %q", got)
	}
	big := limitReq(exgate.SideBuy, "100", "25000", exgate.GTC, "t2") // 2.5M USDT, the account has 100k
	_, err = e.ex.TestOrder(t.Context(), e.cred, exgate.TestOrderRequest{Limit: &big})
	wantCode(t, err, exgate.CodeInsufficientFunds)
	if n := e.srv.Orders(testKey); n != 0 || e.srv.Validated(testKey) != 1 {
		t.Errorf("%d orders placed, %d validated; want 0 and 1", n, e.srv.Validated(testKey))
	}
}

// Cancels: by cl_ord_id; a filled order answers FILLED; an unknown one
// wraps ErrNotFound; a cancel whose answer is lost is EXCHANGE_TIMEOUT and
// not sent again.
func TestCancelOrder(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	ctx := t.Context()
	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limitReq(exgate.SideBuy, "0.01", "25000", exgate.GTC, "c1")); err != nil {
		t.Fatal(err)
	}
	c := watch(e.srv, "/0/private/CancelOrder", nil)
	o, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "c1"})
	if err != nil || o.Status != exgate.OrderCanceled || o.ClientOrderID != "c1" {
		t.Fatalf("cancel = %+v, %v", o, err)
	}
	if f := c.last(t); f.Get("cl_ord_id") != "c1" || f.Has("txid") {
		t.Errorf("CancelOrder form %v, want cl_ord_id only", f)
	}

	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limitReq(exgate.SideBuy, "0.01", "25000", exgate.GTC, "c2")); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.FillOrder(testKey, "c2"); err != nil {
		t.Fatal(err)
	}
	if o, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "c2"}); err != nil || o.Status != exgate.OrderFilled {
		t.Errorf("cancel of a filled order = %+v, %v; want FILLED", o, err)
	}
	if _, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "nope"}); !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("cancel of an unknown order: %v, want ErrNotFound", err)
	}

	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limitReq(exgate.SideBuy, "0.01", "25000", exgate.GTC, "c3")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []krakenfake.Fault{{DropAfter: true}, {Drop: true}, {Status: 502, Body: "Bad Gateway"}} {
		sent := e.srv.Requests("/0/private/CancelOrder")
		watch(e.srv, "/0/private/CancelOrder", func(int) krakenfake.Fault { return f })
		_, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "c3"})
		if exgate.ErrorCode(err) != exgate.CodeExchangeTimeout || errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("%+v: %v, want EXCHANGE_TIMEOUT", f, err)
		}
		if n := e.srv.Requests("/0/private/CancelOrder") - sent; n != 1 {
			t.Errorf("%+v: %d CancelOrder calls, want 1 (never re-sent)", f, n)
		}
	}
	e.srv.SetFault(nil)
	o, err = e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: "c3"})
	if err != nil || o.Status != exgate.OrderCanceled {
		t.Errorf("c3 after a lost cancel answer: %+v, %v; want CANCELED (the first fault processed it)", o, err)
	}
}

// Reads: AddOrder and CancelOrder count on the pair's trading counter,
// TradesHistory 2 on the REST call counter, other reads 1.
func TestLifecycleCallCounters(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	ctx := t.Context()
	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, limitReq(exgate.SideBuy, "0.01", "25000", exgate.GTC, "p1")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "p1"}); err != nil {
		t.Fatal(err)
	}
	trade := e.limiter.reserved["kraken:trade:"+testKey+":XBTUSDT"]
	if trade != 2 {
		t.Errorf("trading counter of XBTUSDT took %d, want 2 (AddOrder, CancelOrder)", trade)
	}
	restKey := "kraken:rest:" + testKey
	before := e.limiter.reserved[restKey]
	if _, err := e.ex.Fills(ctx, e.cred, exgate.OrderFilter{Symbol: btcUSDT}); err != nil {
		t.Fatal(err)
	}
	if got := e.limiter.reserved[restKey] - before; got != 2 {
		t.Errorf("Fills with no trades took %d of the REST counter, want 2 (TradesHistory)", got)
	}
}

// Symbols: Kraken's AssetPairs rules as plain decimals.
func TestSymbols(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	got, err := e.ex.Symbols(t.Context(), e.cred, exgate.SymbolFilter{Symbol: exgate.Symbol{Base: "ETH", Quote: "BTC"}})
	if err != nil || len(got) != 1 {
		t.Fatalf("Symbols = %+v, %v", got, err)
	}
	want := exgate.SymbolInfo{Asset1: "ETH", Asset2: "BTC", Status: exgate.SymbolTrading, QuantityStep: "0.00000001",
		PriceStep: "0.00001", MinQuantity: "0.002", MinNotional: "0.00002", OrderTypes: []string{exgate.OrderTypeMarket, exgate.OrderTypeLimit}}
	if g := got[0]; g.Asset1 != want.Asset1 || g.Asset2 != want.Asset2 || g.Status != want.Status || g.QuantityStep != want.QuantityStep ||
		g.PriceStep != want.PriceStep || g.MinQuantity != want.MinQuantity || g.MinNotional != want.MinNotional || len(g.OrderTypes) != 2 {
		t.Errorf("Symbols(ETH/BTC) = %+v, want %+v", g, want)
	}
}

// Recent withdrawals include those made outside the gateway, under
// Kraken's refid.
func TestRecentWithdrawals(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	w, err := e.ex.Withdraw(t.Context(), e.cred, exgate.WithdrawalRequest{Asset: "BTC", Network: "BTC", Address: btcAddress, Amount: dec("0.01"), ClientWithdrawalID: "w-1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.ex.RecentWithdrawals(t.Context(), e.cred, exgate.WithdrawalFilter{Asset: "BTC"})
	if err != nil || len(got) == 0 {
		t.Fatalf("RecentWithdrawals = %+v, %v", got, err)
	}
	if got[0].ID != "w-1" || got[0].ExchangeID != w.ExchangeID {
		t.Errorf("newest withdrawal %+v, want w-1 (%s)", got[0], w.ExchangeID)
	}
	if none, err := e.ex.RecentWithdrawals(t.Context(), e.cred, exgate.WithdrawalFilter{Asset: "BTC", Status: exgate.TransferFailed}); err != nil || len(none) != 0 {
		t.Errorf("failed BTC withdrawals = %+v, %v", none, err)
	}
}

// A pair in cancel_only is HALTED with no order types, and a limit order
// on it is refused before sending; a row without a status is online.
func TestPairStates(t *testing.T) {
	e := newEnv(t, krakenfake.Options{}, nil)
	dot := exgate.Symbol{Base: "DOT", Quote: "USD"}
	got, err := e.ex.Symbols(t.Context(), e.cred, exgate.SymbolFilter{Symbol: dot})
	if err != nil || len(got) != 1 || got[0].Status != exgate.SymbolHalted || got[0].OrderTypes == nil || len(got[0].OrderTypes) != 0 {
		t.Errorf("Symbols(DOT/USD) = %+v, %v; want HALTED, no order types", got, err)
	}
	doge, err := e.ex.Symbols(t.Context(), e.cred, exgate.SymbolFilter{Symbol: exgate.Symbol{Base: "DOGE", Quote: "USD"}})
	if err != nil || len(doge) != 1 || doge[0].Status != exgate.SymbolTrading {
		t.Errorf("Symbols(DOGE/USD) = %+v, %v; want TRADING (no status is online)", doge, err)
	}
	req := exgate.LimitOrderRequest{Symbol: dot, Side: exgate.SideBuy, Quantity: dec("1"), Price: dec("4"), TimeInForce: exgate.GTC, ClientOrderID: "dot-1"}
	_, err = e.ex.PlaceLimitOrder(t.Context(), e.cred, req)
	wantCode(t, err, exgate.CodeOrderRejected, "cancel_only")
	if n := e.srv.Requests("/0/private/AddOrder"); n != 0 {
		t.Errorf("%d AddOrder calls, want none", n)
	}
}
