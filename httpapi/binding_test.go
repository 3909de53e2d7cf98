package httpapi_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// Issue 23: a signature opens one door once. A signature first seen on one
// method, path and exchange key is refused on any other, whatever its first
// answer was; a request refused with 429 may be sent again as itself only.
func TestSignatureBoundToRoute(t *testing.T) {
	limited := options{clientLimit: exgate.RateLimit{Rate: 1, Period: time.Second, Burst: 1}}
	// use takes the client's one request of the next second.
	use := func(t *testing.T, g *gateway) {
		t.Helper()
		g.clock.Add(time.Second)
		if r := g.do(request{path: "/v1/wallet/account-balance"}); r.status != 200 {
			t.Fatalf("balance: %d %s", r.status, r.body)
		}
	}
	wantReplayed := func(t *testing.T, what string, r response) {
		t.Helper()
		if r.status != 401 || r.problem(t)["code"] != "REPLAYED_REQUEST" {
			t.Fatalf("%s: %d %s; want 401 REPLAYED_REQUEST", what, r.status, r.body)
		}
	}

	t.Run("a 429'd GET replayed as cancel-all", func(t *testing.T) {
		g := newGateway(t, limited)
		placeLimit(t, g, "bind-1")
		use(t, g)
		ts := strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
		params := "asset1=BTC&asset2=USDT&timestamp=" + ts
		get := request{path: "/v1/market/order-book", query: params}
		if r := g.do(get); r.status != 429 {
			t.Fatalf("order book: %d %s; want 429", r.status, r.body)
		}
		g.clock.Add(time.Second)
		cancelAll := request{method: "POST", path: "/v1/order/cancel-all", body: `"asset1":"BTC","asset2":"USDT","timestamp":` + ts, signature: sign(g.secret, params)}
		wantReplayed(t, "cancel-all", g.do(cancelAll))
		if open := openOrders(t, g); open != 1 {
			t.Fatalf("%d open orders after the refused cancel-all; want 1", open)
		}
		// The 429'd request itself may be sent again.
		g.clock.Add(time.Second)
		if r := g.do(get); r.status != 200 {
			t.Fatalf("order book again: %d %s; want 200", r.status, r.body)
		}
		wantReplayed(t, "order book a third time", g.do(get))
	})

	t.Run("a 429'd GET /order replayed as cancel", func(t *testing.T) {
		g := newGateway(t, limited)
		id := placeLimit(t, g, "bind-2")
		use(t, g)
		ts := strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
		params := "id=" + id + "&timestamp=" + ts
		if r := g.do(request{path: "/v1/order", query: "id=" + url.QueryEscape(id) + "&timestamp=" + ts, signature: sign(g.secret, params)}); r.status != 429 {
			t.Fatalf("order: %d %s; want 429", r.status, r.body)
		}
		g.clock.Add(time.Second)
		wantReplayed(t, "cancel", g.do(request{method: "POST", path: "/v1/order/cancel", body: `"id":"` + id + `","timestamp":` + ts, signature: sign(g.secret, params)}))
		if open := openOrders(t, g); open != 1 {
			t.Fatalf("%d open orders after the refused cancel; want 1", open)
		}
	})

	t.Run("a 429'd POST sent to another exchange key", func(t *testing.T) {
		g := newGateway(t, limited)
		g.addCredential(g.apiKey, "live", exgate.PermissionTrade)
		use(t, g)
		body := marketBuy + `,"timestamp":` + strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
		if r := g.do(request{method: "POST", path: "/v1/order/market", body: body}); r.status != 429 {
			t.Fatalf("first: %d %s; want 429", r.status, r.body)
		}
		g.clock.Add(time.Second)
		wantReplayed(t, "to live", g.do(request{method: "POST", path: "/v1/order/market", body: body, exchangeKey: str("live")}))
		g.clock.Add(time.Second)
		if r := g.do(request{method: "POST", path: "/v1/order/market", body: body}); r.status != 200 {
			t.Fatalf("the same request to demo: %d %s; want 200", r.status, r.body)
		}
	})

	t.Run("an in-flight POST sent to another exchange key", func(t *testing.T) {
		held := &heldOrders{entered: make(chan struct{}), release: make(chan struct{})}
		g := newGateway(t, options{wrap: func(e exgate.Exchange) exgate.Exchange { held.Exchange = e; return held }})
		g.addCredential(g.apiKey, "live", exgate.PermissionTrade)
		body := marketBuy + `,"timestamp":` + strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
		first := make(chan response, 1)
		go func() { first <- g.do(request{method: "POST", path: "/v1/order/market", body: body}) }()
		<-held.entered
		r := g.do(request{method: "POST", path: "/v1/order/market", body: body, exchangeKey: str("live")})
		close(held.release)
		wantReplayed(t, "to live while in flight", r)
		if d, _ := r.problem(t)["detail"].(string); !strings.Contains(d, "another route or exchange key") {
			t.Errorf("detail %q does not say the signature belongs to another exchange key", d)
		}
		if r := <-first; r.status != 200 {
			t.Fatalf("the original: %d %s", r.status, r.body)
		}
	})
}

// heldOrders holds the first market order until release is closed.
type heldOrders struct {
	exgate.Exchange
	entered, release chan struct{}
}

func (h *heldOrders) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	select {
	case <-h.entered:
	default:
		close(h.entered)
		<-h.release
	}
	return h.Exchange.PlaceMarketOrder(ctx, cred, req)
}

// placeLimit rests a limit buy far below the market and returns its id.
func placeLimit(t *testing.T, g *gateway, clientID string) string {
	t.Helper()
	r := g.do(request{method: "POST", path: "/v1/order/limit", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"0.01","price":"1000","clientOrderId":"` + clientID + `"`})
	if r.status != 200 {
		t.Fatalf("limit order: %d %s", r.status, r.body)
	}
	var o exgate.Order
	if err := json.Unmarshal(r.body, &o); err != nil {
		t.Fatal(err)
	}
	return o.ID
}

func openOrders(t *testing.T, g *gateway) int {
	t.Helper()
	g.clock.Add(time.Second)
	r := g.do(request{path: "/v1/order/open", query: "asset1=BTC&asset2=USDT"})
	if r.status != 200 {
		t.Fatalf("open orders: %d %s", r.status, r.body)
	}
	var os []exgate.Order
	if err := json.Unmarshal(r.body, &os); err != nil {
		t.Fatal(err)
	}
	return len(os)
}

// Issue 23: a key signing the legacy way (no timestamp, so its requests
// replay) reaches only the seven routes of the spec and GET /v1/order: the
// signature of GET /v1/order?id=X cannot be sent again and again as
// POST /v1/order/cancel, nor GET /v1/order/open's as cancel-all.
func TestLegacyKeyRoutes(t *testing.T) {
	g := newGateway(t, options{})
	legacyKey, legacySecret := "keylegacy", "secret-of-legacy"
	if err := g.store.CreateClientKey(t.Context(), exgate.ClientKey{APIKey: legacyKey, Secret: legacySecret, LegacySigning: true}); err != nil {
		t.Fatal(err)
	}
	g.addCredential(legacyKey, "demo", exgate.PermissionTrade, exgate.PermissionWithdraw)
	as := func(req request) request {
		req.apiKey, req.secret, req.noTimestamp = &legacyKey, legacySecret, true
		return req
	}
	placed := g.do(as(request{method: "POST", path: "/v1/order/market", body: marketBuy}))
	if placed.status != 200 {
		t.Fatalf("legacy market order: %d %s", placed.status, placed.body)
	}
	var o exgate.Order
	_ = json.Unmarshal(placed.body, &o)
	for _, tc := range []struct {
		name       string
		req        request
		wantStatus int
	}{
		{"GET /v1/order", request{path: "/v1/order", query: "id=" + o.ID}, 200},
		{"GET /v1/order's signature as cancel", request{method: "POST", path: "/v1/order/cancel", body: `"id":"` + o.ID + `"`}, 403},
		{"again", request{method: "POST", path: "/v1/order/cancel", body: `"id":"` + o.ID + `"`}, 403},
		{"cancel-all", request{method: "POST", path: "/v1/order/cancel-all", body: `"asset1":"BTC","asset2":"USDT"`}, 403},
		{"open orders", request{path: "/v1/order/open", query: "asset1=BTC&asset2=USDT"}, 403},
		{"limit order", request{method: "POST", path: "/v1/order/limit", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"0.01","price":"1000"`}, 403},
		{"balances", request{path: "/v1/wallet/account-balance"}, 200},
		{"order book", request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(as(tc.req))
			if r.status != tc.wantStatus {
				t.Fatalf("%d %s; want %d", r.status, r.body, tc.wantStatus)
			}
			if tc.wantStatus == 403 {
				p := r.problem(t)
				if d, _ := p["detail"].(string); p["code"] != "PERMISSION_DENIED" || !strings.Contains(d, "legacy") {
					t.Fatalf("%s; want PERMISSION_DENIED saying the key signs the legacy way", r.body)
				}
			}
		})
	}
}

// Issue 23: a lookup by id or client id answers only records of the
// exchange key the request names (and refreshes them with that key's
// credential): an order placed on "demo" is not read through "ro".
func TestLookupsScopedToExchangeKey(t *testing.T) {
	g := newGateway(t, options{})
	g.addCredential(g.apiKey, "ro", exgate.PermissionRead)
	id := placeLimit(t, g, "scoped-1")
	wd := g.do(request{method: "POST", path: "/v1/wallet/withdraw",
		body: `"asset":"ETH","network":"ETH","address":"` + ethAddress + `","amount":"1","clientWithdrawalId":"scoped-w"`})
	if wd.status != 200 {
		t.Fatalf("withdraw: %d %s", wd.status, wd.body)
	}
	for _, tc := range []struct {
		name, path, query, exchangeKey string
		want                           int
	}{
		{"order by id through its key", "/v1/order", "id=" + id, "demo", 200},
		{"order by id through another key", "/v1/order", "id=" + id, "ro", 404},
		{"order by client id through another key", "/v1/order", "clientOrderId=scoped-1", "ro", 404},
		{"withdrawal through its key", "/v1/wallet/withdrawal", "clientWithdrawalId=scoped-w", "demo", 200},
		{"withdrawal through another key", "/v1/wallet/withdrawal", "clientWithdrawalId=scoped-w", "ro", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(request{path: tc.path, query: tc.query, exchangeKey: str(tc.exchangeKey)})
			if r.status != tc.want {
				t.Fatalf("%d %s; want %d", r.status, r.body, tc.want)
			}
			if tc.want == 404 && r.problem(t)["code"] != "NOT_FOUND" {
				t.Fatalf("%s; want NOT_FOUND", r.body)
			}
		})
	}
}
