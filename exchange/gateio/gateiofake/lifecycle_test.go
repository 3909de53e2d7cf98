package gateiofake_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/exgate/exgate/exchange/gateio/gateiofake"
)

// The lifecycle endpoints check requests as every private endpoint does:
// signature, timestamp window, parameter names and values.
func TestLifecycleRequestChecks(t *testing.T) {
	limit := func(tif, price string) string {
		return `{"text":"t-l1","currency_pair":"BTC_USDT","type":"limit","account":"spot","side":"buy","amount":"0.01","price":"` + price + `","time_in_force":"` + tif + `"}`
	}
	tests := []struct {
		name      string
		req       signed
		status    int
		wantLabel string
	}{
		{name: "resting limit order", req: signed{method: "POST", path: "/api/v4/spot/orders", body: limit("gtc", "50000")}, status: 201},
		{name: "limit price off the precision", req: signed{method: "POST", path: "/api/v4/spot/orders", body: limit("gtc", "50000.05")}, status: 400, wantLabel: "INVALID_PRECISION"},
		{name: "limit without a price", req: signed{method: "POST", path: "/api/v4/spot/orders", body: `{"currency_pair":"BTC_USDT","type":"limit","side":"buy","amount":"0.01"}`}, status: 400, wantLabel: "MISSING_REQUIRED_PARAM"},
		{name: "unknown time in force", req: signed{method: "POST", path: "/api/v4/spot/orders", body: limit("gtd", "50000")}, status: 400, wantLabel: "INVALID_PARAM_VALUE"},
		{name: "post-only that would take", req: signed{method: "POST", path: "/api/v4/spot/orders", body: limit("poc", "60001")}, status: 400, wantLabel: "POC_FILL_IMMEDIATELY"},
		{name: "cancel without currency_pair", req: signed{method: "DELETE", path: "/api/v4/spot/orders/t-l1"}, status: 400, wantLabel: "MISSING_REQUIRED_PARAM"},
		{name: "cancel with a bad signature", req: signed{method: "DELETE", path: "/api/v4/spot/orders/t-l1", rawQuery: "currency_pair=BTC_USDT", signQuery: str("currency_pair=ETH_USDT")}, status: 401, wantLabel: "INVALID_SIGNATURE"},
		{name: "cancel with a stale timestamp", req: signed{method: "DELETE", path: "/api/v4/spot/orders/t-l1", rawQuery: "currency_pair=BTC_USDT", ts: strconv.FormatInt(now.Add(-2*time.Minute).Unix(), 10)}, status: 401, wantLabel: "REQUEST_EXPIRED"},
		{name: "cancel with an unknown parameter", req: signed{method: "DELETE", path: "/api/v4/spot/orders/t-l1", rawQuery: "currency_pair=BTC_USDT&text=x"}, status: 400, wantLabel: "INVALID_PARAM_VALUE"},
		{name: "cancel of an unknown text", req: signed{method: "DELETE", path: "/api/v4/spot/orders/t-nosuch", rawQuery: "currency_pair=BTC_USDT"}, status: 404, wantLabel: "CLIENT_ID_NOT_FOUND"},
		{name: "open orders over the page limit", req: signed{method: "GET", path: "/api/v4/spot/open_orders", rawQuery: "limit=101"}, status: 400, wantLabel: "INVALID_PARAM_VALUE"},
		{name: "trades of an order without the pair", req: signed{method: "GET", path: "/api/v4/spot/my_trades", rawQuery: "order_id=1"}, status: 400, wantLabel: "MISSING_REQUIRED_PARAM"},
		{name: "trades with an unknown parameter", req: signed{method: "GET", path: "/api/v4/spot/my_trades", rawQuery: "currency_pair=BTC_USDT&side=buy"}, status: 400, wantLabel: "INVALID_PARAM_VALUE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			status, m, raw := tc.req.send(t, s)
			if status != tc.status || (tc.wantLabel != "" && m["label"] != tc.wantLabel) {
				t.Fatalf("%d %s, want %d %s", status, raw, tc.status, tc.wantLabel)
			}
		})
	}
}

// A resting order holds its funds until canceled; the cancel answers the
// order cancelled and a second cancel by its numeric id ORDER_CANCELLED.
func TestRestCancelRelease(t *testing.T) {
	s := newServer(t)
	body := `{"text":"t-r1","currency_pair":"BTC_USDT","type":"limit","side":"buy","amount":"0.01","price":"50000"}`
	status, o, raw := signed{method: "POST", path: "/api/v4/spot/orders", body: body}.send(t, s)
	if status != 201 || o["status"] != "open" || o["type"] != "limit" || o["time_in_force"] != "gtc" {
		t.Fatalf("%d %s", status, raw)
	}
	if s.Locked("key", "USDT").String() != "500" || s.Balance("key", "USDT").String() != "500" {
		t.Fatalf("locked %s, available %s USDT", s.Locked("key", "USDT"), s.Balance("key", "USDT"))
	}
	status, c, raw := signed{method: "DELETE", path: "/api/v4/spot/orders/t-r1", rawQuery: "currency_pair=BTC_USDT"}.send(t, s)
	if status != 200 || c["status"] != "cancelled" || c["finish_as"] != "cancelled" {
		t.Fatalf("cancel: %d %s", status, raw)
	}
	if !s.Locked("key", "USDT").IsZero() || s.Balance("key", "USDT").String() != "1000" {
		t.Errorf("after the cancel: locked %s, available %s USDT", s.Locked("key", "USDT"), s.Balance("key", "USDT"))
	}
	status, e, raw := signed{method: "DELETE", path: "/api/v4/spot/orders/" + o["id"].(string), rawQuery: "currency_pair=BTC_USDT"}.send(t, s)
	if status != 400 || e["label"] != "ORDER_CANCELLED" {
		t.Errorf("second cancel: %d %s", status, raw)
	}
	if _, err := s.PlaceOutside("key", gateiofake.OutsideOrder{Pair: "BTC_USDT", Side: "sell", Amount: "0.5", Price: "70000"}); err != nil {
		t.Fatal(err)
	}
	if s.OpenOrderCount("key") != 1 || s.Locked("key", "BTC").String() != "0.5" {
		t.Errorf("outside order: %d open, %s BTC locked", s.OpenOrderCount("key"), s.Locked("key", "BTC"))
	}
}

// A held market order (HoldOrders) canceled gives its whole amount back.
func TestCancelHeldMarketOrder(t *testing.T) {
	s := newServer(t)
	s.HoldOrders(true)
	body := `{"text":"t-m1","currency_pair":"BTC_USDT","type":"market","side":"buy","amount":"100","time_in_force":"ioc"}`
	if status, _, raw := (signed{method: "POST", path: "/api/v4/spot/orders", body: body}).send(t, s); status != 201 {
		t.Fatalf("%d %s", status, raw)
	}
	if s.Balance("key", "USDT").String() != "900" {
		t.Fatalf("available %s USDT while held", s.Balance("key", "USDT"))
	}
	if status, _, raw := (signed{method: "DELETE", path: "/api/v4/spot/orders/t-m1", rawQuery: "currency_pair=BTC_USDT"}).send(t, s); status != 200 {
		t.Fatalf("cancel: %d %s", status, raw)
	}
	if s.Balance("key", "USDT").String() != "1000" || !s.Locked("key", "USDT").IsZero() {
		t.Errorf("after the cancel: available %s, locked %s USDT", s.Balance("key", "USDT"), s.Locked("key", "USDT"))
	}
}
