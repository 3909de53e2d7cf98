package binance_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// apiGateway is the HTTP API with the journal in front of the Binance
// adapter, pointed at the fake: the path a client's request takes.
type apiGateway struct {
	t    *testing.T
	fake *binancefake.Server
	cl   *client.Client
}

const (
	fakeKey    = "binance-api-key"
	fakeSecret = "binance-api-secret"
)

func newAPIGateway(t *testing.T) *apiGateway {
	t.Helper()
	ctx := t.Context()
	fake := binancefake.New(binancefake.Options{WeightLimit: -1})
	t.Cleanup(fake.Close)
	fake.AddAccount(binancefake.Account{APIKey: fakeKey, Secret: fakeSecret, Balances: map[string]string{
		"BTC": "3", "ETH": "40", "USDT": "250000",
	}})
	ex := binance.New(binance.Options{BaseURL: fake.URL, HTTPClient: fake.Client(), Limiter: localstate.NewLimiter(time.Now), RetryBackoff: time.Millisecond})
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	exchanges := map[string]exgate.Exchange{binance.Name: ex}
	srv := httpapi.New(httpapi.Config{
		Keys:      st,
		Exchanges: exchanges,
		Ledger:    journal.New(journal.Options{Store: st, Exchanges: exchanges}),
		Replay:    localstate.NewReplayGuard(time.Now),
		Limiter:   localstate.NewLimiter(time.Now),
		OpenAPI:   api.Spec(),
	})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client-key", Secret: "client-secret", Label: "bot", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "client-key", Name: "main", Exchange: binance.Name,
		Key: fakeKey, Secret: fakeSecret, Permissions: []exgate.Permission{exgate.PermissionRead, exgate.PermissionTrade}}); err != nil {
		t.Fatal(err)
	}
	// The SDK signs every call and puts a signed timestamp in every POST;
	// every answer is checked against the OpenAPI document.
	hc := &http.Client{Transport: validating{t: t, v: openapitest.New(t), next: hs.Client().Transport}}
	return &apiGateway{t: t, fake: fake, cl: client.New(hs.URL, "client-key", "client-secret", "main", client.WithHTTPClient(hc))}
}

// validating checks every answer against the OpenAPI document.
type validating struct {
	t    *testing.T
	v    *openapitest.Validator
	next http.RoundTripper
}

func (vt validating) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := vt.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	vt.v.Check(vt.t, req, resp, b)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// reply is an answer of the gateway.
type reply struct {
	status int
	body   []byte
}

// call sends a signed request and returns the status and body.
func (g *apiGateway) call(method, path string, kv ...string) reply {
	g.t.Helper()
	var ps []client.Param
	for i := 0; i+1 < len(kv); i += 2 {
		ps = append(ps, client.Param{Name: kv[i], Value: kv[i+1]})
	}
	status, body, err := g.cl.Do(g.t.Context(), method, path, ps)
	if err != nil && status == 0 {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	return reply{status, body}
}

func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	status, body := r.status, r.body
	var v T
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

// problem checks an error answer's status, code and param.
func problem(t *testing.T, r reply, wantStatus int, wantCode exgate.Code, wantParam string) {
	t.Helper()
	status, body := r.status, r.body
	var p struct {
		Code  exgate.Code `json:"code"`
		Param string      `json:"param"`
	}
	_ = json.Unmarshal(body, &p)
	if status != wantStatus || p.Code != wantCode || (wantParam != "" && p.Param != wantParam) {
		t.Errorf("answer %d %s, want %d %s naming %q", status, body, wantStatus, wantCode, wantParam)
	}
}

// top reads the best bid and ask of BTC/USDT and the ask's size.
func (g *apiGateway) top() (bid, ask, askQty decimal.Decimal) {
	g.t.Helper()
	book := decode[exgate.OrderBook](g.t, g.call("GET", "/v1/market/order-book", "asset1", "BTC", "asset2", "USDT", "limit", "1"))
	return decimal.RequireFromString(book.Bids[0].Price), decimal.RequireFromString(book.Asks[0].Price), decimal.RequireFromString(book.Asks[0].Quantity)
}

func (g *apiGateway) limit(side, qty string, price decimal.Decimal, kv ...string) reply {
	g.t.Helper()
	return g.call("POST", "/v1/order/limit", append([]string{"asset1", "BTC", "asset2", "USDT", "side", side, "quantity", qty, "price", price.String()}, kv...)...)
}

func TestLifecycleThroughTheAPI(t *testing.T) {
	g := newAPIGateway(t)
	bid, ask, askQty := g.top()
	away := bid.Mul(decimal.RequireFromString("0.8")).Round(2)

	// GTC away from the market rests (the gateway's id for the order,
	// placed.ID, is the newClientOrderId Binance gets), is open, is canceled by the
	// client's id and is CANCELED in recent.
	placed := decode[exgate.Order](t, g.limit("BUY", "0.01", away, "clientOrderId", "rest-1"))
	if placed.Status != exgate.OrderPending || placed.Type != exgate.OrderTypeLimit || placed.TimeInForce != exgate.GTC ||
		placed.Price == nil || !placed.Price.Equal(away) || placed.ClientOrderID != "rest-1" {
		t.Fatalf("placed %+v", placed)
	}
	if p := g.fake.LastParams("POST", "/api/v3/order"); p.Get("type") != "LIMIT" || p.Get("timeInForce") != "GTC" || p.Get("price") != away.String() {
		t.Errorf("sent %v", p)
	}
	open := decode[[]exgate.Order](t, g.call("GET", "/v1/order/open", "asset1", "BTC", "asset2", "USDT"))
	if len(open) != 1 || open[0].ClientOrderID != "rest-1" || open[0].ID != placed.ID {
		t.Fatalf("open %+v", open)
	}
	canceled := decode[exgate.Order](t, g.call("POST", "/v1/order/cancel", "clientOrderId", "rest-1"))
	if canceled.Status != exgate.OrderCanceled || canceled.ID != placed.ID {
		t.Fatalf("canceled %+v", canceled)
	}
	if p := g.fake.LastParams("DELETE", "/api/v3/order"); p.Get("origClientOrderId") != placed.ID || p.Get("orderId") != "" {
		t.Errorf("cancel sent %v", p)
	}
	recent := decode[[]exgate.Order](t, g.call("GET", "/v1/order/recent", "asset1", "BTC", "asset2", "USDT"))
	if len(recent) != 1 || recent[0].Status != exgate.OrderCanceled || recent[0].ClientOrderID != "rest-1" {
		t.Fatalf("recent %+v", recent)
	}
	if free, locked := g.fake.Balance(fakeKey, "USDT"); !free.Equal(decimal.RequireFromString("250000")) || !locked.IsZero() {
		t.Errorf("USDT after the cancel: free %s locked %s", free, locked)
	}

	// A crossing GTC order fills; its fills are listed.
	cross := ask.Mul(decimal.RequireFromString("1.001")).Round(2)
	filled := decode[exgate.Order](t, g.limit("BUY", "0.01", cross, "clientOrderId", "cross-1"))
	if filled.Status != exgate.OrderFilled || !filled.ExecutedQuantity.Equal(decimal.RequireFromString("0.01")) {
		t.Fatalf("crossing %+v", filled)
	}
	fills := decode[[]exgate.Fill](t, g.call("GET", "/v1/order/fills", "asset1", "BTC", "asset2", "USDT"))
	sum := decimal.Zero
	for _, f := range fills {
		if f.OrderID != filled.ID || f.ClientOrderID != "cross-1" || f.Maker || f.Side != exgate.SideBuy || f.FeeIn != "BTC" {
			t.Errorf("fill %+v", f)
		}
		sum = sum.Add(f.Quantity.Decimal)
	}
	if len(fills) == 0 || !sum.Equal(filled.ExecutedQuantity.Decimal) {
		t.Errorf("fills %+v add up to %s", fills, sum)
	}
	// Cancel of a filled order: the order, FILLED. Of an unknown one: 404.
	if o := decode[exgate.Order](t, g.call("POST", "/v1/order/cancel", "clientOrderId", "cross-1")); o.Status != exgate.OrderFilled {
		t.Errorf("cancel of a filled order %+v", o)
	}
	r := g.call("POST", "/v1/order/cancel", "clientOrderId", "never-placed")
	problem(t, r, 404, exgate.CodeNotFound, "")

	// IOC fills what the best level holds and expires the rest (enums.md:
	// EXPIRED); FOK for more than that expires unfilled; FOK for what is
	// there fills.
	twice := askQty.Mul(decimal.NewFromInt(2)).String()
	ioc := decode[exgate.Order](t, g.limit("BUY", twice, ask, "timeInForce", "IOC", "clientOrderId", "ioc-1"))
	if ioc.Status != exgate.OrderExpired || !ioc.ExecutedQuantity.Equal(askQty) || ioc.TimeInForce != exgate.IOC {
		t.Errorf("IOC %+v, want EXPIRED with %s executed", ioc, askQty)
	}
	fok := decode[exgate.Order](t, g.limit("BUY", twice, ask, "timeInForce", "FOK", "clientOrderId", "fok-1"))
	if fok.Status != exgate.OrderExpired || !fok.ExecutedQuantity.IsZero() {
		t.Errorf("FOK %+v, want EXPIRED unfilled", fok)
	}
	fok2 := decode[exgate.Order](t, g.limit("BUY", askQty.String(), ask, "timeInForce", "FOK", "clientOrderId", "fok-2"))
	if fok2.Status != exgate.OrderFilled || !fok2.ExecutedQuantity.Equal(askQty) {
		t.Errorf("FOK within the level %+v, want FILLED", fok2)
	}
	iocAway := decode[exgate.Order](t, g.limit("BUY", "0.01", away, "timeInForce", "IOC", "clientOrderId", "ioc-2"))
	if iocAway.Status != exgate.OrderExpired || !iocAway.ExecutedQuantity.IsZero() {
		t.Errorf("IOC away from the market %+v, want EXPIRED unfilled", iocAway)
	}
	if n := g.fake.OpenOrderCount(fakeKey); n != 0 {
		t.Errorf("%d orders left open", n)
	}

	// postOnly that would trade: Binance's LIMIT_MAKER refusal, 422.
	placedBefore := g.fake.OrderCount(fakeKey)
	r = g.limit("BUY", "0.01", cross, "postOnly", "true", "clientOrderId", "post-1")
	problem(t, r, 422, exgate.CodeOrderRejected, "")
	if p := g.fake.LastParams("POST", "/api/v3/order"); p.Get("type") != "LIMIT_MAKER" || p.Has("timeInForce") {
		t.Errorf("postOnly sent %v", p)
	}
	// A price off the tick (0.01): 400 naming price, nothing sent.
	requests := g.fake.Requests("/api/v3/order")
	r = g.limit("BUY", "0.01", away.Add(decimal.RequireFromString("0.005")), "clientOrderId", "tick-1")
	problem(t, r, 400, exgate.CodeInvalidParameter, "price")
	if g.fake.Requests("/api/v3/order") != requests {
		t.Error("an order off the tick reached Binance")
	}
	// Under the minimum quantity: QUANTITY_TOO_SMALL with the limit.
	r = g.limit("BUY", "0.000001", away, "clientOrderId", "small-1")
	problem(t, r, 422, exgate.CodeQuantityTooSmall, "")
	if !bytes.Contains(r.body, []byte("0.00001")) {
		t.Errorf("the minimum is not in %s", r.body)
	}

	// Bad input gets a problem and reaches nothing.
	requests = g.fake.Requests("/api/v3/order")
	for _, tc := range []struct {
		kv    []string
		code  exgate.Code
		param string
	}{
		{[]string{"asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "0.01"}, exgate.CodeInvalidParameter, "price"},
		{[]string{"asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "0.01", "price", "0"}, exgate.CodeInvalidParameter, "price"},
		{[]string{"asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "0.01", "price", "-5"}, exgate.CodeInvalidParameter, "price"},
		{[]string{"asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "0.01", "price", away.String(), "timeInForce", "IOC", "postOnly", "true"}, exgate.CodeInvalidParameter, "postOnly"},
		{[]string{"asset1", "BTC", "asset2", "ETH", "side", "BUY", "quantity", "0.01", "price", "30"}, exgate.CodeUnknownSymbol, ""},
	} {
		r := g.call("POST", "/v1/order/limit", tc.kv...)
		var p struct {
			Code  exgate.Code `json:"code"`
			Param string      `json:"param"`
		}
		_ = json.Unmarshal(r.body, &p)
		if p.Code != tc.code || (tc.param != "" && p.Param != tc.param) {
			t.Errorf("%v: %d %s, want %s naming %q", tc.kv, r.status, r.body, tc.code, tc.param)
		}
	}
	if g.fake.Requests("/api/v3/order") != requests {
		t.Error("bad input reached Binance")
	}

	// test: true goes to POST /api/v3/order/test and places nothing.
	tl := decode[exgate.Order](t, g.limit("BUY", "0.01", cross, "test", "true", "clientOrderId", "test-1"))
	tm := decode[exgate.Order](t, g.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "100", "quantityIn", "USDT", "test", "true"))
	if tl.Status != exgate.OrderTest || tm.Status != exgate.OrderTest {
		t.Errorf("test orders %+v %+v", tl, tm)
	}
	if n := g.fake.Requests("/api/v3/order/test"); n != 2 {
		t.Errorf("%d calls to order/test, want 2", n)
	}
	if n := g.fake.OrderCount(fakeKey); n != placedBefore {
		t.Errorf("test orders placed %d orders", n-placedBefore)
	}
}

func TestOutsideOrdersAndMakerFillsThroughTheAPI(t *testing.T) {
	g := newAPIGateway(t)
	bid, _, _ := g.top()
	away := bid.Mul(decimal.RequireFromString("0.9")).Round(2)

	// An order placed on Binance's website: the exchange's id, no client
	// id of ours, in open and recent; cancel-all cancels it by orderId.
	id, _ := g.fake.PlaceOutside(fakeKey, "BTCUSDT", "BUY", "0.02", away.String())
	open := decode[[]exgate.Order](t, g.call("GET", "/v1/order/open"))
	want := decimal.NewFromInt(id).String()
	if len(open) != 1 || open[0].ID != want || open[0].ClientOrderID != "" || open[0].ExchangeOrderID != want {
		t.Fatalf("open %+v, want the outside order %s", open, want)
	}
	recent := decode[[]exgate.Order](t, g.call("GET", "/v1/order/recent", "asset1", "BTC", "asset2", "USDT"))
	if len(recent) != 1 || recent[0].ID != want || recent[0].ClientOrderID != "" {
		t.Fatalf("recent %+v", recent)
	}

	// A resting order of ours filled by the market: FILLED, maker fills.
	resting := decode[exgate.Order](t, g.limit("BUY", "0.01", away, "clientOrderId", "maker-1"))
	if err := g.fake.FillOrder(fakeKey, resting.ID); err != nil {
		t.Fatal(err)
	}
	o := decode[exgate.Order](t, g.call("GET", "/v1/order", "clientOrderId", "maker-1"))
	if o.Status != exgate.OrderFilled || o.Type != exgate.OrderTypeLimit || !o.AveragePrice.Equal(away) {
		t.Errorf("filled resting order %+v", o)
	}
	fills := decode[[]exgate.Fill](t, g.call("GET", "/v1/order/fills", "asset1", "BTC", "asset2", "USDT"))
	if len(fills) != 1 || !fills[0].Maker || fills[0].OrderID != resting.ID || fills[0].ClientOrderID != "maker-1" {
		t.Errorf("fills %+v, want one maker fill of maker-1", fills)
	}

	all := decode[[]exgate.Order](t, g.call("POST", "/v1/order/cancel-all", "asset1", "BTC", "asset2", "USDT"))
	if len(all) != 1 || all[0].Status != exgate.OrderCanceled || all[0].ID != want {
		t.Errorf("cancel-all %+v", all)
	}
	if n := g.fake.OpenOrderCount(fakeKey); n != 0 {
		t.Errorf("%d orders open after cancel-all", n)
	}
}

// TestInvertedExampleThroughTheAPI places the original service's example:
// Binance lists ETH/BTC, so BUY BTC/ETH spending 0.1 ETH is one SELL of
// 0.1 ETH on ETHBTC, answered as a BUY of BTC/ETH.
func TestInvertedExampleThroughTheAPI(t *testing.T) {
	g := newAPIGateway(t)
	// As a test order first: Binance's order/test gets the same SELL.
	tst := decode[exgate.Order](t, g.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "ETH", "side", "BUY", "quantity", "0.1", "quantityIn", "ETH", "test", "true"))
	if tst.Status != exgate.OrderTest || tst.Side != exgate.SideBuy || tst.Asset1 != "BTC" {
		t.Errorf("test answer %+v, want a TEST BUY of BTC/ETH", tst)
	}
	if p := g.fake.LastParams("POST", "/api/v3/order/test"); p.Get("symbol") != "ETHBTC" || p.Get("side") != "SELL" || p.Get("quantity") != "0.1" {
		t.Errorf("order/test got %v, want SELL 0.1 ETH on ETHBTC", p)
	}
	if g.fake.OrderCount(fakeKey) != 0 {
		t.Fatal("the test order placed an order")
	}
	o := decode[exgate.Order](t, g.call("POST", "/v1/order/market", "asset1", "BTC", "asset2", "ETH", "side", "BUY", "quantity", "0.1", "quantityIn", "ETH"))
	if o.Side != exgate.SideBuy || o.Asset1 != "BTC" || o.Asset2 != "ETH" || o.Status != exgate.OrderFilled {
		t.Errorf("answer %+v, want a FILLED BUY of BTC/ETH", o)
	}
	if g.fake.OrderCount(fakeKey) != 1 {
		t.Fatalf("%d orders reached the fake, want 1", g.fake.OrderCount(fakeKey))
	}
	p := g.fake.LastParams("POST", "/api/v3/order")
	if p.Get("symbol") != "ETHBTC" || p.Get("side") != "SELL" || p.Get("type") != "MARKET" || p.Get("quantity") != "0.1" || p.Has("quoteOrderQty") {
		t.Errorf("sent %v, want SELL 0.1 ETH on ETHBTC", p)
	}
	if free, _ := g.fake.Balance(fakeKey, "ETH"); !free.Equal(decimal.RequireFromString("39.9")) {
		t.Errorf("ETH left %s, want 39.9", free)
	}
}
