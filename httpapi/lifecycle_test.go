package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/coalesce"
)

// post sends a signed POST with a timestamp (which the gateway will soon
// require); the clock moves a millisecond so that every signature differs.
func (g *gateway) post(path, members string) response {
	g.t.Helper()
	g.clock.Add(time.Millisecond)
	ts := strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
	if members != "" {
		members += ","
	}
	return g.do(request{method: "POST", path: path, body: members + `"timestamp":` + ts})
}

func decodeAs[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

// bestBidAsk reads the top of the BTC/USDT book through the API.
func (g *gateway) bestBidAsk(t *testing.T) (bid, ask decimal.Decimal) {
	t.Helper()
	book := decodeAs[exgate.OrderBook](t, g.do(request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT&limit=1"}))
	return decimal.RequireFromString(book.Bids[0].Price), decimal.RequireFromString(book.Asks[0].Price)
}

func limitBody(side, qty, price, extra string) string {
	b := fmt.Sprintf(`"asset1":"BTC","asset2":"USDT","side":%q,"quantity":%q,"price":%q`, side, qty, price)
	if extra != "" {
		b += "," + extra
	}
	return b
}

func TestLimitOrderLifecycle(t *testing.T) {
	g := newGateway(t, options{})
	bid, ask := g.bestBidAsk(t)
	away := bid.Mul(decimal.RequireFromString("0.95")).Round(2).String()
	before := balances(t, g)

	// A GTC order away from the market rests, holding its funds.
	placed := decodeAs[exgate.Order](t, g.post("/v1/order/limit", limitBody("BUY", "0.1", away, `"clientOrderId":"rest-1"`)))
	if placed.Status != exgate.OrderPending || placed.Type != exgate.OrderTypeLimit || placed.ClientOrderID != "rest-1" ||
		placed.TimeInForce != exgate.GTC || placed.Price == nil || placed.Price.String() != away {
		t.Fatalf("placed %+v", placed)
	}
	open := decodeAs[[]exgate.Order](t, g.do(request{path: "/v1/order/open", query: "asset1=BTC&asset2=USDT"}))
	if len(open) != 1 || open[0].ID != placed.ID || open[0].ClientOrderID != "rest-1" {
		t.Fatalf("open orders %+v", open)
	}
	held := decimal.RequireFromString(away).Mul(decimal.RequireFromString("0.1"))
	if got := balances(t, g)["USDT"]; !got.Equal(before["USDT"].Sub(held)) {
		t.Errorf("USDT available %s while resting, want %s held", got, held)
	}

	// Cancel by the client's id: CANCELED, funds back, CANCELED in recent.
	canceled := decodeAs[exgate.Order](t, g.post("/v1/order/cancel", `"clientOrderId":"rest-1"`))
	if canceled.Status != exgate.OrderCanceled || canceled.ID != placed.ID {
		t.Fatalf("canceled %+v", canceled)
	}
	if got := balances(t, g)["USDT"]; !got.Equal(before["USDT"]) {
		t.Errorf("USDT after cancel %s, want %s", got, before["USDT"])
	}
	recent := decodeAs[[]exgate.Order](t, g.do(request{path: "/v1/order/recent", query: "asset1=BTC&asset2=USDT"}))
	if len(recent) != 1 || recent[0].Status != exgate.OrderCanceled || recent[0].ClientOrderID != "rest-1" {
		t.Fatalf("recent %+v", recent)
	}
	if o := decodeAs[exgate.Order](t, g.do(request{path: "/v1/order", query: "clientOrderId=rest-1"})); o.Status != exgate.OrderCanceled {
		t.Errorf("GET /v1/order after cancel: %s", o.Status)
	}
	if open := decodeAs[[]exgate.Order](t, g.do(request{path: "/v1/order/open"})); len(open) != 0 {
		t.Errorf("still open: %+v", open)
	}

	// A crossing order fills, with its fills listed.
	cross := ask.Mul(decimal.RequireFromString("1.001")).Round(2).String()
	filled := decodeAs[exgate.Order](t, g.post("/v1/order/limit", limitBody("BUY", "0.01", cross, `"clientOrderId":"cross-1"`)))
	if filled.Status != exgate.OrderFilled || !filled.ExecutedQuantity.Equal(decimal.RequireFromString("0.01")) {
		t.Fatalf("crossing order %+v", filled)
	}
	fills := decodeAs[[]exgate.Fill](t, g.do(request{path: "/v1/order/fills", query: "asset1=BTC&asset2=USDT"}))
	sum := decimal.Zero
	for _, f := range fills {
		if f.OrderID != filled.ID || f.ClientOrderID != "cross-1" || f.Maker {
			t.Errorf("fill %+v", f)
		}
		sum = sum.Add(f.Quantity.Decimal)
	}
	if len(fills) == 0 || !sum.Equal(filled.ExecutedQuantity.Decimal) {
		t.Errorf("fills %+v add up to %s, want %s", fills, sum, filled.ExecutedQuantity)
	}

	// Cancel of a filled order answers the order, FILLED.
	if o := decodeAs[exgate.Order](t, g.post("/v1/order/cancel", `"clientOrderId":"cross-1"`)); o.Status != exgate.OrderFilled {
		t.Errorf("cancel of a filled order: %+v", o)
	}
}

func TestLimitOrderTimeInForceThroughTheAPI(t *testing.T) {
	g := newGateway(t, options{})
	bid, ask := g.bestBidAsk(t)
	away := bid.Mul(decimal.RequireFromString("0.95")).Round(2).String()
	cross := ask.Mul(decimal.RequireFromString("1.001")).Round(2).String()
	tests := []struct {
		name       string
		body       string
		wantStatus exgate.OrderStatus
		wantCode   string
	}{
		{"IOC away expires", limitBody("BUY", "0.01", away, `"timeInForce":"IOC"`), exgate.OrderExpired, ""},
		{"IOC crossing fills", limitBody("BUY", "0.01", cross, `"timeInForce":"ioc"`), exgate.OrderFilled, ""},
		{"FOK larger than the top level expires", limitBody("BUY", "1", ask.String(), `"timeInForce":"FOK"`), exgate.OrderExpired, ""},
		{"FOK crossing fills", limitBody("BUY", "0.01", cross, `"timeInForce":"FOK"`), exgate.OrderFilled, ""},
		{"postOnly crossing refused", limitBody("BUY", "0.01", cross, `"postOnly":true`), "", "ORDER_REJECTED"},
		{"postOnly away rests", limitBody("BUY", "0.01", away, `"postOnly":true`), exgate.OrderPending, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.post("/v1/order/limit", tc.body)
			if tc.wantCode != "" {
				if p := r.problem(t); p["code"] != tc.wantCode || r.status != 422 {
					t.Fatalf("%d %s, want %s", r.status, r.body, tc.wantCode)
				}
				return
			}
			o := decodeAs[exgate.Order](t, r)
			if o.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s: %s", o.Status, tc.wantStatus, r.body)
			}
			if tc.wantStatus == exgate.OrderExpired && o.TimeInForce == exgate.FOK && !o.ExecutedQuantity.IsZero() {
				t.Errorf("FOK expired having executed %s", o.ExecutedQuantity)
			}
		})
	}
}

// TestLifecycleBadInput: every refusal is a problem naming the parameter,
// and changes nothing.
func TestLifecycleBadInput(t *testing.T) {
	g := newGateway(t, options{})
	bid, _ := g.bestBidAsk(t)
	away := bid.Mul(decimal.RequireFromString("0.95")).Round(2).String()
	mine := decodeAs[exgate.Order](t, g.post("/v1/order/limit", limitBody("BUY", "0.01", away, `"clientOrderId":"mine"`)))
	before := balances(t, g)

	other, otherSecret := g.addClient("client-o")
	g.addCredential(other, "demo", exgate.PermissionTrade)
	tests := []struct {
		name       string
		path       string
		body       string
		wantStatus int
		wantCode   string
		wantParam  string
	}{
		{"missing price", "/v1/order/limit", `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"0.01"`, 400, "INVALID_PARAMETER", "price"},
		{"zero price", "/v1/order/limit", limitBody("BUY", "0.01", "0", ""), 400, "INVALID_PARAMETER", "price"},
		{"negative price", "/v1/order/limit", limitBody("BUY", "0.01", "-5", ""), 400, "INVALID_PARAMETER", "price"},
		{"price with too many decimals", "/v1/order/limit", limitBody("BUY", "0.01", "50000.001", ""), 400, "INVALID_PARAMETER", "price"},
		{"price not a number", "/v1/order/limit", limitBody("BUY", "0.01", "cheap", ""), 400, "INVALID_PARAMETER", "price"},
		{"postOnly with IOC", "/v1/order/limit", limitBody("BUY", "0.01", away, `"timeInForce":"IOC","postOnly":true`), 400, "INVALID_PARAMETER", "postOnly"},
		{"postOnly as a string", "/v1/order/limit", limitBody("BUY", "0.01", away, `"postOnly":"yes"`), 400, "INVALID_PARAMETER", "postOnly"},
		{"unknown timeInForce", "/v1/order/limit", limitBody("BUY", "0.01", away, `"timeInForce":"GTD"`), 400, "INVALID_PARAMETER", "timeInForce"},
		{"inverse pair", "/v1/order/limit", `"asset1":"USDT","asset2":"BTC","side":"BUY","quantity":"100","price":"0.00001"`, 400, "UNKNOWN_SYMBOL", ""},
		{"cancel of an unknown id", "/v1/order/cancel", `"clientOrderId":"nobody"`, 404, "NOT_FOUND", ""},
		{"cancel of an unknown gateway id", "/v1/order/cancel", `"id":"oaaaaaaaaaaaaaaaaa"`, 404, "NOT_FOUND", ""},
		{"cancel with both ids", "/v1/order/cancel", `"id":"` + mine.ID + `","clientOrderId":"mine"`, 400, "INVALID_PARAMETER", "id"},
		{"cancel-all without a pair", "/v1/order/cancel-all", ``, 400, "INVALID_PARAMETER", "asset1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.post(tc.path, tc.body)
			p := r.problem(t)
			if r.status != tc.wantStatus || p["code"] != tc.wantCode || (tc.wantParam != "" && p["param"] != tc.wantParam) {
				t.Fatalf("%d %s, want %d %s param %q", r.status, r.body, tc.wantStatus, tc.wantCode, tc.wantParam)
			}
		})
	}
	// Another client cannot cancel the order, by either id.
	for _, body := range []string{`"id":"` + mine.ID + `"`, `"clientOrderId":"mine"`} {
		g.clock.Add(time.Millisecond)
		r := g.do(request{method: "POST", path: "/v1/order/cancel", apiKey: &other, secret: otherSecret,
			body: body + `,"timestamp":` + strconv.FormatInt(g.clock.Now().UnixMilli(), 10)})
		if p := r.problem(t); r.status != 404 || p["code"] != "NOT_FOUND" {
			t.Errorf("another client's cancel %s: %d %s", body, r.status, r.body)
		}
	}
	if after := balances(t, g); !after["USDT"].Equal(before["USDT"]) || !after["BTC"].Equal(before["BTC"]) {
		t.Errorf("refused requests moved balances: %v -> %v", before, after)
	}
	if open := decodeAs[[]exgate.Order](t, g.do(request{path: "/v1/order/open"})); len(open) != 1 || open[0].Status != exgate.OrderPending {
		t.Errorf("open orders after refusals: %+v", open)
	}
}

func TestTestOrdersPlaceNothing(t *testing.T) {
	g := newGateway(t, options{})
	bid, ask := g.bestBidAsk(t)
	before := balances(t, g)
	cross := ask.Mul(decimal.RequireFromString("1.001")).Round(2).String()
	for _, c := range []struct{ path, body string }{
		{"/v1/order/limit", limitBody("BUY", "0.01", cross, `"test":true`)},
		{"/v1/order/limit", limitBody("SELL", "0.123456789", bid.String(), `"test":true,"clientOrderId":"t-1"`)},
		{"/v1/order/market", `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"USDT","test":true`},
	} {
		o := decodeAs[exgate.Order](t, g.post(c.path, c.body))
		if o.Status != exgate.OrderTest {
			t.Errorf("%s %s: status %s", c.path, c.body, o.Status)
		}
		if c.body == limitBody("SELL", "0.123456789", bid.String(), `"test":true,"clientOrderId":"t-1"`) && o.Quantity.String() != "0.12345" {
			t.Errorf("test order quantity %s, want it rounded down to the step: 0.12345", o.Quantity)
		}
	}
	if r := g.post("/v1/order/limit", limitBody("BUY", "0.01", "100.001", `"test":true`)); r.status != 400 {
		t.Errorf("a test order off the tick: %d %s", r.status, r.body)
	}
	if after := balances(t, g); !after["USDT"].Equal(before["USDT"]) || !after["BTC"].Equal(before["BTC"]) {
		t.Errorf("test orders moved balances: %v -> %v", before, after)
	}
	if recent := decodeAs[[]exgate.Order](t, g.do(request{path: "/v1/order/recent", query: "asset1=BTC&asset2=USDT"})); len(recent) != 0 {
		t.Errorf("test orders were placed: %+v", recent)
	}
	if r := g.do(request{path: "/v1/order", query: "clientOrderId=t-1"}); r.status != 404 {
		t.Errorf("a test order was journaled: %d %s", r.status, r.body)
	}
}

// TestRefusedOrderReadsAsRejected: GET /v1/order answers an order the
// exchange refused as an Order REJECTED with its reason, 200.
func TestRefusedOrderReadsAsRejected(t *testing.T) {
	g := newGateway(t, options{})
	r := g.post("/v1/order/market", `"asset1":"BTC","asset2":"USDT","side":"SELL","quantity":"11","quantityIn":"BTC","clientOrderId":"too-much"`)
	if p := r.problem(t); r.status != 422 || p["code"] != "INSUFFICIENT_FUNDS" {
		t.Fatalf("placing: %d %s", r.status, r.body)
	}
	o := decodeAs[exgate.Order](t, g.do(request{path: "/v1/order", query: "clientOrderId=too-much"}))
	if o.Status != exgate.OrderRejected || o.Reason == nil || o.Reason.Code != exgate.CodeInsufficientFunds || o.Reason.Detail == "" ||
		o.ClientOrderID != "too-much" || o.Asset1 != "BTC" || o.Side != exgate.SideSell {
		t.Fatalf("refused order reads as %+v", o)
	}
}

// TestInvertedPairMarketOrder is the original service's own example: BUY
// BTC/ETH spending 0.1 ETH is SELL 0.1 ETH on ETH/BTC, answered as a BUY
// of BTC/ETH.
func TestInvertedPairMarketOrder(t *testing.T) {
	g := newGateway(t, options{})
	before := balances(t, g)
	r := g.post("/v1/order/market", `"asset1":"BTC","asset2":"ETH","side":"BUY","quantity":"0.1","quantityIn":"ETH","clientOrderId":"inv-1"`)
	o := decodeAs[exgate.Order](t, r)
	if o.Asset1 != "BTC" || o.Asset2 != "ETH" || o.Side != exgate.SideBuy || o.QuantityIn != "ETH" ||
		o.Quantity.String() != "0.1" || o.Status != exgate.OrderFilled || o.ClientOrderID != "inv-1" {
		t.Fatalf("answer %s", r.body)
	}
	after := balances(t, g)
	if spent := before["ETH"].Sub(after["ETH"]); !spent.Equal(decimal.RequireFromString("0.1")) || !spent.Equal(o.QuoteQuantity.Decimal) {
		t.Errorf("ETH spent %s, want 0.1 = quoteQuantity %s", spent, o.QuoteQuantity)
	}
	if got := after["BTC"].Sub(before["BTC"]); !got.Equal(o.ExecutedQuantity.Sub(o.Fees.Decimal)) || o.FeesIn != "BTC" {
		t.Errorf("BTC received %s, want executedQuantity %s - fees %s %s", got, o.ExecutedQuantity, o.Fees, o.FeesIn)
	}
	// The listed pair's order, read back, stays in the client's orientation.
	again := decodeAs[exgate.Order](t, g.do(request{path: "/v1/order", query: "clientOrderId=inv-1"}))
	if again.Asset1 != "BTC" || again.Side != exgate.SideBuy || !again.ExecutedQuantity.Equal(o.ExecutedQuantity.Decimal) {
		t.Errorf("read back as %+v", again)
	}
	// BUY 0.01 BTC paying ETH: SELL ETH on ETH/BTC for 0.01 BTC of proceeds.
	o2 := decodeAs[exgate.Order](t, g.post("/v1/order/market", `"asset1":"BTC","asset2":"ETH","side":"BUY","quantity":"0.01","quantityIn":"asset1"`))
	if o2.Side != exgate.SideBuy || o2.QuantityIn != "BTC" || o2.ExecutedQuantity.GreaterThan(decimal.RequireFromString("0.01")) ||
		o2.ExecutedQuantity.LessThan(decimal.RequireFromString("0.0099")) {
		t.Errorf("BUY 0.01 BTC/ETH in BTC: %+v", o2)
	}
}

func TestSymbolsAndRecentWithdrawals(t *testing.T) {
	g := newGateway(t, options{})
	all := decodeAs[[]exgate.SymbolInfo](t, g.do(request{path: "/v1/market/symbols"}))
	if len(all) < 6 {
		t.Fatalf("%d symbols", len(all))
	}
	one := decodeAs[[]exgate.SymbolInfo](t, g.do(request{path: "/v1/market/symbols", query: "asset1=btc&asset2=usdt"}))
	if len(one) != 1 || one[0].PriceStep != "0.01" || one[0].QuantityStep != "0.00001" || one[0].Status != exgate.SymbolTrading {
		t.Fatalf("BTC/USDT %+v", one)
	}
	wd := decodeAs[exgate.Withdrawal](t, g.post("/v1/wallet/withdraw", `"asset":"ETH","network":"ETH","address":"0x52908400098527886E0F7030069857D2E4169EE7","amount":"1","clientWithdrawalId":"my-w-2"`))
	list := decodeAs[[]exgate.Withdrawal](t, g.do(request{path: "/v1/wallet/recent-withdraws", query: "asset=ETH"}))
	if len(list) != 1 || list[0].ExchangeID != wd.ExchangeID {
		t.Fatalf("recent withdrawals %+v, want %+v", list, wd)
	}
	// The list names a withdrawal as the client knows it, as
	// GET /v1/wallet/withdrawal does: the gateway's id and the client's
	// own clientWithdrawalId, not the gateway's id in its place.
	if list[0].ID != wd.ID || list[0].ClientWithdrawalID != "my-w-2" || wd.ClientWithdrawalID != "my-w-2" {
		t.Errorf("listed as id %q clientWithdrawalId %q; answered as id %q clientWithdrawalId %q; want the answer's ids, my-w-2",
			list[0].ID, list[0].ClientWithdrawalID, wd.ID, wd.ClientWithdrawalID)
	}
	if none := decodeAs[[]exgate.Withdrawal](t, g.do(request{path: "/v1/wallet/recent-withdraws", query: "asset=BTC"})); len(none) != 0 {
		t.Errorf("BTC withdrawals %+v", none)
	}
}

// marketOnly hides the sim's order lifecycle, as an adapter without it.
type marketOnly struct{ exgate.Exchange }

func TestLifecycleNotImplemented(t *testing.T) {
	g := newGateway(t, options{wrap: func(e exgate.Exchange) exgate.Exchange { return marketOnly{e} }})
	for _, r := range []response{
		g.post("/v1/order/limit", limitBody("BUY", "0.01", "100", "")),
		g.do(request{path: "/v1/order/open"}),
		g.do(request{path: "/v1/market/symbols"}),
		g.post("/v1/order/market", `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"USDT","test":true`),
	} {
		if p := r.problem(t); r.status != 501 || p["code"] != "NOT_IMPLEMENTED" {
			t.Errorf("%d %s, want 501 NOT_IMPLEMENTED", r.status, r.body)
		}
	}
}

// lostCancel cancels on the sim but reports a timeout, as when the
// exchange canceled and its answer was lost.
type lostCancel struct{ exgate.Exchange }

func (l lostCancel) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, error) {
	return l.Exchange.(exgate.OrderManager).PlaceLimitOrder(ctx, cred, req)
}
func (l lostCancel) TestOrder(ctx context.Context, cred exgate.Credential, req exgate.TestOrderRequest) (exgate.Order, error) {
	return l.Exchange.(exgate.OrderManager).TestOrder(ctx, cred, req)
}
func (l lostCancel) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	if _, err := l.Exchange.(exgate.OrderManager).CancelOrder(ctx, cred, req); err != nil {
		return exgate.Order{}, err
	}
	return exgate.Order{}, exgate.Errorf(exgate.CodeExchangeTimeout, "answer lost")
}
func (l lostCancel) OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	return l.Exchange.(exgate.OrderManager).OpenOrders(ctx, cred, f)
}
func (l lostCancel) RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	return l.Exchange.(exgate.OrderManager).RecentOrders(ctx, cred, f)
}
func (l lostCancel) Fills(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	return l.Exchange.(exgate.OrderManager).Fills(ctx, cred, f)
}
func (l lostCancel) Symbols(ctx context.Context, cred exgate.Credential, f exgate.SymbolFilter) ([]exgate.SymbolInfo, error) {
	return l.Exchange.(exgate.OrderManager).Symbols(ctx, cred, f)
}
func (l lostCancel) RecentWithdrawals(ctx context.Context, cred exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error) {
	return l.Exchange.(exgate.OrderManager).RecentWithdrawals(ctx, cred, f)
}

// TestLostCancelIsReconciled: a cancel whose answer is lost answers 504
// with the order, and reading the order shows it CANCELED; the funds come
// back once.
func TestLostCancelIsReconciled(t *testing.T) {
	g := newGateway(t, options{wrap: func(e exgate.Exchange) exgate.Exchange { return lostCancel{e} }})
	bid, _ := g.bestBidAsk(t)
	before := balances(t, g)
	away := bid.Mul(decimal.RequireFromString("0.95")).Round(2).String()
	placed := decodeAs[exgate.Order](t, g.post("/v1/order/limit", limitBody("BUY", "0.01", away, `"clientOrderId":"lc-1"`)))
	r := g.post("/v1/order/cancel", `"clientOrderId":"lc-1"`)
	p := r.problem(t)
	if r.status != 504 || p["code"] != "EXCHANGE_TIMEOUT" || p["id"] != placed.ID {
		t.Fatalf("lost cancel: %d %s", r.status, r.body)
	}
	o := decodeAs[exgate.Order](t, g.do(request{path: "/v1/order", query: "clientOrderId=lc-1"}))
	if o.Status != exgate.OrderCanceled {
		t.Fatalf("after a lost cancel the order reads %s", o.Status)
	}
	// A second cancel answers the order as it is and releases nothing more.
	if again := decodeAs[exgate.Order](t, g.post("/v1/order/cancel", `"clientOrderId":"lc-1"`)); again.Status != exgate.OrderCanceled {
		t.Errorf("second cancel: %+v", again)
	}
	if after := balances(t, g); !after["USDT"].Equal(before["USDT"]) {
		t.Errorf("USDT %s after the cancel, want %s", after["USDT"], before["USDT"])
	}
}

// TestLifecycleThroughTheMarketDataCache: the gateway serves every
// exchange through the market-data cache (exgate serve); the order
// lifecycle is found through it.
func TestLifecycleThroughTheMarketDataCache(t *testing.T) {
	g := newGateway(t, options{wrap: func(e exgate.Exchange) exgate.Exchange { return coalesce.New(e, coalesce.Options{}) }})
	bid, _ := g.bestBidAsk(t)
	away := bid.Mul(decimal.RequireFromString("0.95")).Round(2).String()
	if o := decodeAs[exgate.Order](t, g.post("/v1/order/limit", limitBody("BUY", "0.01", away, `"clientOrderId":"c-1"`))); o.Status != exgate.OrderPending {
		t.Fatalf("placed %+v", o)
	}
	all := decodeAs[[]exgate.Order](t, g.post("/v1/order/cancel-all", `"asset1":"BTC","asset2":"USDT"`))
	if len(all) != 1 || all[0].Status != exgate.OrderCanceled || all[0].ClientOrderID != "c-1" {
		t.Fatalf("cancel-all %+v", all)
	}
	if open := decodeAs[[]exgate.Order](t, g.do(request{path: "/v1/order/open"})); len(open) != 0 {
		t.Errorf("open after cancel-all: %+v", open)
	}
	if none := decodeAs[[]exgate.Order](t, g.post("/v1/order/cancel-all", `"asset1":"BTC","asset2":"USDT"`)); len(none) != 0 {
		t.Errorf("second cancel-all: %+v", none)
	}
}

// TestRefusedWithdrawalReadBack: a withdrawal with a malformed address is
// refused before anything is recorded, and one the exchange's rules
// refuse reads back as a record (status failed, with the refusal as its
// reason), as a refused order reads back REJECTED, not as the POST's
// error again.
func TestRefusedWithdrawalReadBack(t *testing.T) {
	g := newGateway(t, options{})
	bad := g.post("/v1/wallet/withdraw", `"asset":"ETH","network":"ETH","address":"0x1234","amount":"1","clientWithdrawalId":"wbad-1"`)
	if p := bad.problem(t); bad.status != 400 || p["code"] != "INVALID_PARAMETER" || p["param"] != "address" {
		t.Fatalf("malformed address: %d %s, want 400 naming address", bad.status, bad.body)
	}
	if _, err := g.store.IntentByClientRef(t.Context(), g.apiKey, exgate.IntentWithdrawal, "wbad-1"); !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("the refused withdrawal was recorded in the journal (%v)", err)
	}
	if r := g.do(request{path: "/v1/wallet/withdrawal", query: "clientWithdrawalId=wbad-1"}); r.status != 404 {
		t.Errorf("reading the withdrawal refused before it was recorded: %d %s, want 404", r.status, r.body)
	}

	// Below the network's minimum: the exchange's rule, checked by the
	// adapter once the withdrawal is recorded.
	small := g.post("/v1/wallet/withdraw", `"asset":"ETH","network":"ETH","address":"0x52908400098527886E0F7030069857D2E4169EE7","amount":"0.001","clientWithdrawalId":"wsmall-1"`)
	p := small.problem(t)
	if small.status != 422 || p["code"] != "WITHDRAWAL_REJECTED" {
		t.Fatalf("below the minimum: %d %s, want 422 WITHDRAWAL_REJECTED", small.status, small.body)
	}
	r := g.do(request{path: "/v1/wallet/withdrawal", query: "clientWithdrawalId=wsmall-1"})
	if r.status != 200 {
		t.Fatalf("reading the refused withdrawal: %d %s, want 200 with status failed", r.status, r.body)
	}
	w := decodeAs[exgate.Withdrawal](t, r)
	if w.Status != exgate.TransferFailed || w.Reason == nil || w.Reason.Code != exgate.CodeWithdrawalRejected || w.Reason.Detail != p["detail"] ||
		w.ClientWithdrawalID != "wsmall-1" || w.Asset != "ETH" || w.ToAddress != "0x52908400098527886E0F7030069857D2E4169EE7" ||
		!w.Amount.Equal(decimal.RequireFromString("0.001")) || !w.TotalAmount.IsZero() {
		t.Errorf("refused withdrawal read back as %s", r.body)
	}
}
