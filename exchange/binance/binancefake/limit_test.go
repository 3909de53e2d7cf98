package binancefake

import (
	"testing"
)

// TestLimitChecks: the lifecycle endpoints refuse what Binance refuses,
// with Binance's codes, and order/test places nothing.
func TestLimitChecks(t *testing.T) {
	s, clk := newServer(t, Options{})
	now := "timestamp=" + ts(clk, 0)
	post := func(body string) req {
		return req{method: "POST", path: "/api/v3/order", body: body + "&" + now, apiKey: key, sign: true}
	}
	tests := []struct {
		name       string
		r          req
		wantStatus int
		wantCode   int
	}{
		{"resting LIMIT", post("symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=0.01&price=50000.00&newClientOrderId=rest1"), 200, 0},
		{"LIMIT without timeInForce", post("symbol=BTCUSDT&side=BUY&type=LIMIT&quantity=0.01&price=50000"), 400, -1102},
		{"LIMIT without price", post("symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=0.01"), 400, -1102},
		{"bad timeInForce", post("symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTX&quantity=0.01&price=50000"), 400, -1115},
		{"LIMIT_MAKER with timeInForce", post("symbol=BTCUSDT&side=BUY&type=LIMIT_MAKER&timeInForce=GTC&quantity=0.01&price=50000"), 400, -1106},
		{"LIMIT_MAKER that would take", post("symbol=BTCUSDT&side=BUY&type=LIMIT_MAKER&quantity=0.01&price=70000"), 400, -2010},
		{"price off the tick", post("symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=0.01&price=50000.001"), 400, -1013},
		{"under the notional", post("symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=0.00001&price=50000"), 400, -1013},
		{"duplicate open client id", post("symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=0.01&price=50000&newClientOrderId=rest1"), 400, -2010},
		{"over the balance with what rests", post("symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=50000"), 400, -2010},
		{"test order", req{method: "POST", path: "/api/v3/order/test", body: "symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=50000&" + now, apiKey: key, sign: true}, 200, 0},
		{"test order off the tick", req{method: "POST", path: "/api/v3/order/test", body: "symbol=BTCUSDT&side=BUY&type=LIMIT&timeInForce=GTC&quantity=0.01&price=50000.001&" + now, apiKey: key, sign: true}, 400, -1013},
		{"cancel of an unknown order", req{method: "DELETE", path: "/api/v3/order", query: "symbol=BTCUSDT&origClientOrderId=nosuch&" + now, apiKey: key, sign: true}, 400, -2011},
		{"cancel without an id", req{method: "DELETE", path: "/api/v3/order", query: "symbol=BTCUSDT&" + now, apiKey: key, sign: true}, 400, -1102},
		{"cancel, unknown parameter", req{method: "DELETE", path: "/api/v3/order", query: "symbol=BTCUSDT&origClientOrderId=rest1&clientOrderId=x&" + now, apiKey: key, sign: true}, 400, -1104},
		{"cancel", req{method: "DELETE", path: "/api/v3/order", query: "symbol=BTCUSDT&origClientOrderId=rest1&" + now, apiKey: key, sign: true}, 200, 0},
		{"cancel again", req{method: "DELETE", path: "/api/v3/order", query: "symbol=BTCUSDT&origClientOrderId=rest1&" + now, apiKey: key, sign: true}, 400, -2011},
		{"allOrders without symbol", req{method: "GET", path: "/api/v3/allOrders", query: now, apiKey: key, sign: true}, 400, -1102},
		{"openOrders of every symbol", req{method: "GET", path: "/api/v3/openOrders", query: now, apiKey: key, sign: true}, 200, 0},
	}
	for _, tc := range tests {
		a := s.send(t, tc.r)
		if a.status != tc.wantStatus || a.code != tc.wantCode {
			t.Errorf("%s: HTTP %d code %d %q, want HTTP %d code %d", tc.name, a.status, a.code, a.msg, tc.wantStatus, tc.wantCode)
		}
	}
	if n := s.OrderCount(key); n != 1 {
		t.Errorf("%d orders placed, want the one resting order", n)
	}
	if free, locked := s.Balance(key, "USDT"); !free.Equal(dec("10000")) || !locked.IsZero() {
		t.Errorf("USDT free %s locked %s after the cancel", free, locked)
	}
	if a := s.send(t, req{method: "GET", path: "/api/v3/openOrders", query: "symbol=BTCUSDT&" + now, apiKey: key, sign: true}); string(a.body) != "[]" {
		t.Errorf("open orders after the cancel: %s", a.body)
	}
}
