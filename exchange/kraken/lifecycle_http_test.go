package kraken_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// apiGateway is the HTTP API in front of the Kraken adapter and its fake,
// with the journal on SQLite, as `exgate serve` builds it.
type apiGateway struct {
	t              *testing.T
	env            *env
	srv            *httptest.Server
	validator      *openapitest.Validator
	apiKey, secret string
	ms             atomic.Int64 // the gateway's clock, in ms; moves 1 ms a POST
}

func newAPIGateway(t *testing.T) *apiGateway {
	t.Helper()
	e := newEnv(t, krakenfake.Options{}, nil)
	g := &apiGateway{t: t, env: e, apiKey: "keyclienta", secret: "secret-of-client-a", validator: openapitest.New(t)}
	g.ms.Store(testNow.UnixMilli())
	now := func() time.Time { return time.UnixMilli(g.ms.Load()) }
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateClientKey(t.Context(), exgate.ClientKey{APIKey: g.apiKey, Secret: g.secret, Label: "client-a", CreatedAt: now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCredential(t.Context(), exgate.Credential{ClientAPIKey: g.apiKey, Name: "main", Exchange: "kraken",
		Key: e.cred.Key, Secret: e.cred.Secret, Permissions: []exgate.Permission{exgate.PermissionTrade, exgate.PermissionWithdraw}}); err != nil {
		t.Fatal(err)
	}
	exchanges := map[string]exgate.Exchange{"kraken": e.ex}
	jr := journal.New(journal.Options{Store: st, Exchanges: exchanges, Now: now})
	g.srv = httptest.NewServer(httpapi.New(httpapi.Config{
		Keys: st, Exchanges: exchanges, Ledger: jr,
		Replay: localstate.NewReplayGuard(now), Limiter: localstate.NewLimiter(now),
		OpenAPI: api.Spec(), Now: now,
	}))
	t.Cleanup(g.srv.Close)
	return g
}

type apiAnswer struct {
	status int
	body   []byte
}

func (a apiAnswer) problem(t *testing.T) (code, param string) {
	t.Helper()
	var p struct{ Code, Param string }
	if err := json.Unmarshal(a.body, &p); err != nil {
		t.Fatalf("problem %s: %v", a.body, err)
	}
	return p.Code, p.Param
}

func signHex(secret, msg string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// call sends a signed request. A POST's members are name/value pairs, in
// order, all strings except booleans; a signed timestamp is added.
func (g *apiGateway) call(method, path string, members ...string) apiAnswer {
	g.t.Helper()
	var req *http.Request
	var params []string
	if method == http.MethodGet {
		for i := 0; i+1 < len(members); i += 2 {
			params = append(params, members[i]+"="+members[i+1])
		}
		q := strings.Join(params, "&")
		sig := signHex(g.secret, q)
		if q != "" {
			q += "&"
		}
		req, _ = http.NewRequest(method, g.srv.URL+path+"?"+q+"signature="+sig, nil)
	} else {
		ts := fmt.Sprint(g.ms.Add(1))
		members = append(members, "timestamp", ts)
		var js []string
		for i := 0; i+1 < len(members); i += 2 {
			k, v := members[i], members[i+1]
			params = append(params, k+"="+v)
			if v == "true" || v == "false" || k == "timestamp" {
				js = append(js, fmt.Sprintf("%q:%s", k, v))
			} else {
				js = append(js, fmt.Sprintf("%q:%q", k, v))
			}
		}
		js = append(js, fmt.Sprintf("%q:%q", "signature", signHex(g.secret, strings.Join(params, "&"))))
		req, _ = http.NewRequest(method, g.srv.URL+path, strings.NewReader("{"+strings.Join(js, ",")+"}"))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-KEY", g.apiKey)
	req.Header.Set("X-API-EXCHANGE-KEY", "main")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	// Every answer must match the OpenAPI document.
	check, _ := http.NewRequest(method, g.srv.URL+path, nil)
	check.URL.RawQuery = req.URL.RawQuery
	check.Header = req.Header
	g.validator.Check(g.t, check, resp, body)
	return apiAnswer{resp.StatusCode, body}
}

func answerAs[T any](t *testing.T, a apiAnswer) T {
	t.Helper()
	var v T
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("decode %s: %v", a.body, err)
	}
	return v
}

// topOfBook reads BTC/USDT's best bid and ask through the API.
func (g *apiGateway) topOfBook() (bid, ask decimal.Decimal) {
	g.t.Helper()
	b := answerAs[exgate.OrderBook](g.t, g.call(http.MethodGet, "/v1/market/order-book", "asset1", "BTC", "asset2", "USDT", "limit", "1"))
	return dec(b.Bids[0].Price), dec(b.Asks[0].Price)
}

func limitOrder(side, qty, price string, extra ...string) []string {
	return append([]string{"asset1", "BTC", "asset2", "USDT", "side", side, "quantity", qty, "price", price}, extra...)
}

func TestLifecycleThroughTheAPI(t *testing.T) {
	g := newAPIGateway(t)
	bid, ask := g.topOfBook()
	away := bid.Mul(dec("0.9")).Round(1).String()

	// A GTC limit away from the market rests on Kraken and is open.
	placed := answerAs[exgate.Order](t, g.call(http.MethodPost, "/v1/order/limit", limitOrder("BUY", "0.01", away, "clientOrderId", "rest-1")...))
	if placed.Status != exgate.OrderPending || placed.Type != exgate.OrderTypeLimit || placed.ClientOrderID != "rest-1" || placed.ExchangeOrderID == "" {
		t.Fatalf("placed %+v", placed)
	}
	// Kraken's cl_ord_id is the gateway's id of the order.
	if n := g.env.srv.OrdersByClientID(testKey, placed.ID); n != 1 {
		t.Fatalf("the fake holds %d orders %s, want 1", n, placed.ID)
	}
	open := answerAs[[]exgate.Order](t, g.call(http.MethodGet, "/v1/order/open", "asset1", "BTC", "asset2", "USDT"))
	if len(open) != 1 || open[0].ClientOrderID != "rest-1" || open[0].Status != exgate.OrderPending {
		t.Fatalf("open %+v", open)
	}

	// Cancel by client id: CANCELED, then CANCELED in recent.
	canceled := answerAs[exgate.Order](t, g.call(http.MethodPost, "/v1/order/cancel", "clientOrderId", "rest-1"))
	if canceled.Status != exgate.OrderCanceled || canceled.ClientOrderID != "rest-1" {
		t.Fatalf("canceled %+v", canceled)
	}
	if n := g.env.srv.Requests("/0/private/CancelOrder"); n != 1 {
		t.Errorf("%d CancelOrder calls, want 1", n)
	}
	recent := answerAs[[]exgate.Order](t, g.call(http.MethodGet, "/v1/order/recent", "asset1", "BTC", "asset2", "USDT"))
	if len(recent) != 1 || recent[0].Status != exgate.OrderCanceled || recent[0].ClientOrderID != "rest-1" {
		t.Fatalf("recent %+v", recent)
	}

	// A crossing GTC limit fills at once, with its fills listed.
	cross := ask.Mul(dec("1.01")).Round(1).String()
	filled := answerAs[exgate.Order](t, g.call(http.MethodPost, "/v1/order/limit", limitOrder("BUY", "0.01", cross, "clientOrderId", "cross-1")...))
	if filled.Status != exgate.OrderFilled || filled.ExecutedQuantity == nil || !filled.ExecutedQuantity.Equal(dec("0.01")) {
		t.Fatalf("crossing order %+v", filled)
	}
	fills := answerAs[[]exgate.Fill](t, g.call(http.MethodGet, "/v1/order/fills", "asset1", "BTC", "asset2", "USDT"))
	sum := decimal.Zero
	for _, f := range fills {
		if f.OrderID != filled.ID || f.ClientOrderID != "cross-1" || f.Side != exgate.SideBuy || f.Price.GreaterThan(dec(cross)) {
			t.Errorf("fill %+v", f)
		}
		sum = sum.Add(f.Quantity.Decimal)
	}
	if len(fills) == 0 || !sum.Equal(dec("0.01")) {
		t.Errorf("fills %+v add up to %s, want 0.01", fills, sum)
	}

	// Cancel of the filled order answers it, FILLED; of an unknown one 404.
	if o := answerAs[exgate.Order](t, g.call(http.MethodPost, "/v1/order/cancel", "clientOrderId", "cross-1")); o.Status != exgate.OrderFilled {
		t.Errorf("cancel of a filled order: %+v", o)
	}
	if a := g.call(http.MethodPost, "/v1/order/cancel", "clientOrderId", "no-such-order"); a.status != http.StatusNotFound {
		t.Errorf("cancel of an unknown order: %d %s", a.status, a.body)
	}
}

func TestLimitOrderRulesThroughTheAPI(t *testing.T) {
	g := newAPIGateway(t)
	bid, ask := g.topOfBook()
	away := bid.Mul(dec("0.9")).Round(1).String()
	cross := ask.Mul(dec("1.01")).Round(1).String()
	tests := []struct {
		name       string
		members    []string
		wantStatus exgate.OrderStatus
		httpStatus int
		wantCode   string
		wantParam  string
	}{
		// Kraken cancels what an IOC order cannot fill at once.
		{"IOC away is canceled unfilled", limitOrder("BUY", "0.01", away, "timeInForce", "IOC"), exgate.OrderCanceled, 200, "", ""},
		{"IOC crossing fills", limitOrder("BUY", "0.01", cross, "timeInForce", "IOC"), exgate.OrderFilled, 200, "", ""},
		// Kraken Spot has no fill-or-kill.
		{"FOK refused", limitOrder("BUY", "0.01", cross, "timeInForce", "FOK"), "", 400, "INVALID_PARAMETER", "timeInForce"},
		{"postOnly crossing refused", limitOrder("BUY", "0.01", cross, "postOnly", "true"), "", 422, "ORDER_REJECTED", ""},
		{"postOnly away rests", limitOrder("BUY", "0.01", away, "postOnly", "true"), exgate.OrderPending, 200, "", ""},
		{"price off the tick", limitOrder("BUY", "0.01", away+".05"), "", 400, "INVALID_PARAMETER", "price"},
		{"below ordermin", limitOrder("BUY", "0.00005", away), "", 422, "QUANTITY_TOO_SMALL", ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := g.env.srv.Orders(testKey)
			a := g.call(http.MethodPost, "/v1/order/limit", append(tc.members, "clientOrderId", fmt.Sprintf("rule-%d", i))...)
			if tc.wantCode != "" {
				code, param := a.problem(t)
				if a.status != tc.httpStatus || code != tc.wantCode || param != tc.wantParam {
					t.Fatalf("%d %s, want %d %s naming %q", a.status, a.body, tc.httpStatus, tc.wantCode, tc.wantParam)
				}
				placed := g.env.srv.Orders(testKey) - before
				if tc.wantCode == "ORDER_REJECTED" {
					placed-- // Kraken takes a post-only order, then cancels it
				}
				if placed != 0 {
					t.Errorf("%d orders reached the fake", placed)
				}
				return
			}
			if o := answerAs[exgate.Order](t, a); o.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s: %s", o.Status, tc.wantStatus, a.body)
			}
		})
	}
}

func TestTestOrdersValidateOnKraken(t *testing.T) {
	g := newAPIGateway(t)
	_, ask := g.topOfBook()
	cross := ask.Mul(dec("1.01")).Round(1).String()
	for _, tc := range []struct {
		path    string
		members []string
	}{
		{"/v1/order/limit", limitOrder("BUY", "0.01", cross, "test", "true")},
		{"/v1/order/market", []string{"asset1", "BTC", "asset2", "USDT", "side", "BUY", "quantity", "50", "quantityIn", "USDT", "test", "true"}},
	} {
		validated := g.env.srv.Validated(testKey)
		o := answerAs[exgate.Order](t, g.call(http.MethodPost, tc.path, tc.members...))
		if o.Status != exgate.OrderTest {
			t.Errorf("%s test: status %s", tc.path, o.Status)
		}
		if got := g.env.srv.Validated(testKey); got != validated+1 {
			t.Errorf("%s test: %d validate=true calls, want 1", tc.path, got-validated)
		}
	}
	if n := g.env.srv.Orders(testKey); n != 0 {
		t.Errorf("test orders placed %d orders on the fake", n)
	}
}

// The original service's own example: BUY BTC/ETH spending 0.1 ETH is one
// SELL of 0.1 ETH on Kraken's ETH/BTC (XETHXXBT), answered as a BUY of
// BTC/ETH.
func TestInvertedExampleOnKraken(t *testing.T) {
	g := newAPIGateway(t)
	o := answerAs[exgate.Order](t, g.call(http.MethodPost, "/v1/order/market",
		"asset1", "BTC", "asset2", "ETH", "side", "BUY", "quantity", "0.1", "quantityIn", "ETH"))
	if o.Side != exgate.SideBuy || o.Asset1 != "BTC" || o.Asset2 != "ETH" || o.Status != exgate.OrderFilled {
		t.Errorf("answer %+v, want a FILLED BUY of BTC/ETH", o)
	}
	if n := g.env.srv.Orders(testKey); n != 1 {
		t.Fatalf("%d orders on the fake, want 1", n)
	}
	pair, typ, vol, _ := g.env.srv.LastOrder(testKey)
	if pair != "XETHXXBT" || typ != "sell" || vol != "0.1" {
		t.Errorf("the fake got %s %s %s, want sell 0.1 on XETHXXBT", typ, vol, pair)
	}
}

// An order placed on Kraken's website (no cl_ord_id) shows in open and
// recent with Kraken's txid and no client id.
func TestOutsideOrdersListed(t *testing.T) {
	g := newAPIGateway(t)
	txid, err := g.env.srv.PlaceOutside(testKey, "XBTUSDT", "sell", "0.02", "90000.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/order/open", "/v1/order/recent"} {
		list := answerAs[[]exgate.Order](t, g.call(http.MethodGet, path, "asset1", "BTC", "asset2", "USDT"))
		if len(list) != 1 || list[0].ExchangeOrderID != txid || list[0].ID != txid || list[0].ClientOrderID != "" ||
			list[0].Side != exgate.SideSell || list[0].Type != exgate.OrderTypeLimit {
			t.Errorf("%s = %+v, want the outside order %s", path, list, txid)
		}
	}
	// A resting order that fills later is FILLED, as a maker.
	if err := g.env.srv.FillOrder(testKey, txid); err != nil {
		t.Fatal(err)
	}
	fills := answerAs[[]exgate.Fill](t, g.call(http.MethodGet, "/v1/order/fills", "asset1", "BTC", "asset2", "USDT"))
	if len(fills) != 1 || fills[0].OrderID != txid || !fills[0].Maker || !fills[0].Quantity.Equal(dec("0.02")) {
		t.Errorf("fills %+v", fills)
	}
}

// Symbols and recent withdrawals through the API, checked against the
// OpenAPI document like every answer here.
func TestSymbolsAndWithdrawalsThroughTheAPI(t *testing.T) {
	g := newAPIGateway(t)
	syms := answerAs[[]exgate.SymbolInfo](t, g.call(http.MethodGet, "/v1/market/symbols", "asset1", "BTC", "asset2", "USDT"))
	if len(syms) != 1 || syms[0].PriceStep != "0.1" || syms[0].QuantityStep != "0.00000001" || syms[0].MinQuantity != "0.0001" {
		t.Errorf("symbols %+v", syms)
	}
	all := answerAs[[]exgate.SymbolInfo](t, g.call(http.MethodGet, "/v1/market/symbols"))
	if len(all) < 10 {
		t.Errorf("%d symbols", len(all))
	}
	ws := answerAs[[]exgate.Withdrawal](t, g.call(http.MethodGet, "/v1/wallet/recent-withdraws"))
	if ws == nil {
		t.Error("no withdrawal list")
	}
}
