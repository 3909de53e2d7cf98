package httpapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
	"github.com/exgate/exgate/stream"
	"github.com/shopspring/decimal"
)

// clock is a settable clock shared by the server, the store and the sim.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// gateway is a server over a real SQLite store and the sim exchange.
type gateway struct {
	t         *testing.T
	srv       *httptest.Server
	api       *httpapi.Server
	store     *sqlite.Store
	clock     *clock
	validator *openapitest.Validator
	apiKey    string
	secret    string
	// seq makes the timestamps do adds to POST bodies distinct, so that
	// two identical requests on the fixed clock are not replays.
	seq atomic.Int64
	hub *stream.Hub
	// ticks drives the sim's streams.
	ticks *tickSource
}

type options struct {
	requireTimestamp bool
	clientLimit      exgate.RateLimit
	routeLimits      httpapi.RouteLimits
	// limiter replaces the server's own in-process limiter (shared state).
	limiter     exgate.Limiter
	replayQuota int
	ready       []httpapi.ReadyCheck
	// wrap lets a test put a fault in front of the sim exchange.
	wrap func(exgate.Exchange) exgate.Exchange
	// streams serves GET /v1/stream with a hub of these options (its
	// Exchanges and Journal are the gateway's); the sim's streams tick
	// when the test calls ticks.tick.
	streams *stream.Options
	// slots bounds the stream connections per client key (shared by the
	// gateways given the same) to streamsPerKey.
	slots         *localstate.Slots
	streamsPerKey int
	// controls keeps the IP allowlists in the store.
	controls bool
}

func newGateway(t *testing.T, opts options) *gateway {
	t.Helper()
	ctx := t.Context()
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	key := bytes.Repeat([]byte{7}, 32)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ticks := &tickSource{}
	var ex exgate.Exchange = sim.New(sim.Options{Ledger: st, Now: clk.Now, Tick: ticks.new})
	if opts.wrap != nil {
		ex = opts.wrap(ex)
	}
	exchanges := map[string]exgate.Exchange{"sim": ex}
	jr := journal.New(journal.Options{Store: st, Exchanges: exchanges, Now: clk.Now})
	var hub *stream.Hub
	if opts.streams != nil {
		so := *opts.streams
		so.Exchanges, so.Journal = exchanges, jr
		hub = stream.New(so)
	}
	cfg := httpapi.Config{
		Keys:             st,
		Exchanges:        exchanges,
		Ledger:           jr,
		Replay:           localstate.NewReplayGuard(clk.Now),
		Limiter:          limiterOr(opts.limiter, clk.Now),
		ClientLimit:      opts.clientLimit,
		RouteLimits:      opts.routeLimits,
		RequireTimestamp: opts.requireTimestamp,
		ReplayQuota:      opts.replayQuota,
		Ready:            opts.ready,
		OpenAPI:          api.Spec(),
		Now:              clk.Now,
	}
	if hub != nil {
		cfg.Stream = hub
	}
	if opts.slots != nil {
		cfg.StreamSlots, cfg.StreamConnectionsPerKey = opts.slots, opts.streamsPerKey
	}
	if opts.controls {
		cfg.Controls = st
	}
	srv := httpapi.New(cfg)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	g := &gateway{t: t, srv: hs, store: st, clock: clk, validator: openapitest.New(t), hub: hub, ticks: ticks}
	g.apiKey, g.secret = g.addClient("client-a")
	g.addCredential(g.apiKey, "demo", exgate.PermissionTrade, exgate.PermissionWithdraw)
	return g
}

func (g *gateway) addClient(label string) (apiKey, secret string) {
	g.t.Helper()
	apiKey = "key" + strings.ReplaceAll(label, "-", "")
	secret = "secret-of-" + label
	if err := g.store.CreateClientKey(g.t.Context(), exgate.ClientKey{APIKey: apiKey, Secret: secret, Label: label, CreatedAt: g.clock.Now()}); err != nil {
		g.t.Fatal(err)
	}
	return apiKey, secret
}

func (g *gateway) addCredential(apiKey, name string, perms ...exgate.Permission) {
	g.t.Helper()
	if _, err := g.store.AddCredential(g.t.Context(), exgate.Credential{ClientAPIKey: apiKey, Name: name, Exchange: "sim", Permissions: perms}); err != nil {
		g.t.Fatal(err)
	}
}

// timestamp is a signed timestamp inside the default window that no
// earlier call returned.
func (g *gateway) timestamp() int64 {
	return g.clock.Now().UnixMilli() - g.seq.Add(1)%4000
}

func sign(secret, msg string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// request describes one call; zero fields get the gateway's defaults.
type request struct {
	method      string
	path        string
	query       string // GET parameters, signed as written
	body        string // POST JSON members without the signature, e.g. `"a":"1"`
	signed      string // parameter string to sign instead of the canonical one
	signature   string // signature to send instead of computing one
	noSig       bool
	apiKey      *string
	exchangeKey *string
	secret      string
	header      map[string]string
	rawBody     []byte
	// noTimestamp sends a POST body as written; otherwise do adds a signed
	// timestamp member (every POST requires one, docs/contract.md 2.1) unless the
	// body has one.
	noTimestamp bool
	// contentType replaces application/json.
	contentType string
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) problem(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	return m
}

func str(s string) *string { return &s }

// bodyParams turns `"a":"1","b":2` into the canonical a=1&b=2.
func bodyParams(t *testing.T, members string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader("{" + members + "}"))
	dec.UseNumber()
	var parts []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, _ := dec.Token()
		v, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, k.(string)+"="+strings.Trim(jsonText(v), `"`))
	}
	return strings.Join(parts, "&")
}

func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	}
	return "null"
}

func (g *gateway) do(req request) response {
	t := g.t
	t.Helper()
	if req.method == "" {
		req.method = http.MethodGet
	}
	secret := g.secret
	if req.secret != "" {
		secret = req.secret
	}
	target := g.srv.URL + req.path
	var body io.Reader
	if req.method == http.MethodGet {
		q := req.query
		if !req.noSig {
			sig := req.signature
			if sig == "" {
				msg := req.query
				if req.signed != "" {
					msg = req.signed
				}
				sig = sign(secret, msg)
			}
			if q != "" {
				q += "&"
			}
			q += "signature=" + sig
		}
		if q != "" {
			target += "?" + q
		}
		if req.rawBody != nil {
			body = bytes.NewReader(req.rawBody)
		}
	} else if req.rawBody != nil {
		body = bytes.NewReader(req.rawBody)
	} else {
		if !req.noTimestamp && !strings.Contains(req.body, `"timestamp"`) {
			if req.body != "" {
				req.body += ","
			}
			req.body += `"timestamp":` + strconv.FormatInt(g.timestamp(), 10)
		}
		members := req.body
		if !req.noSig {
			sig := req.signature
			if sig == "" {
				msg := bodyParams(t, req.body)
				if req.signed != "" {
					msg = req.signed
				}
				sig = sign(secret, msg)
			}
			if members != "" {
				members += ","
			}
			members += `"signature":"` + sig + `"`
		}
		body = strings.NewReader("{" + members + "}")
	}
	hr, err := http.NewRequestWithContext(t.Context(), req.method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if req.contentType != "" {
		hr.Header.Set("Content-Type", req.contentType)
	}
	apiKey := g.apiKey
	if req.apiKey != nil {
		apiKey = *req.apiKey
	}
	if apiKey != "" {
		hr.Header.Set("X-API-KEY", apiKey)
	}
	exKey := "demo"
	if req.exchangeKey != nil {
		exKey = *req.exchangeKey
	}
	if exKey != "" {
		hr.Header.Set("X-API-EXCHANGE-KEY", exKey)
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	resp, err := g.srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// Every answer must match the OpenAPI document.
	check, _ := http.NewRequest(req.method, g.srv.URL+req.path, nil)
	check.URL.RawQuery = hr.URL.RawQuery
	check.Header = hr.Header
	g.validator.Check(t, check, resp, b)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func TestRoutesHappyPath(t *testing.T) {
	g := newGateway(t, options{})
	tests := []struct {
		name string
		req  request
		// check inspects the decoded JSON answer.
		check func(t *testing.T, v any)
	}{
		{"balances", request{path: "/v1/wallet/account-balance"}, func(t *testing.T, v any) {
			if n := len(v.([]any)); n != 6 {
				t.Errorf("%d balances, want 6", n)
			}
		}},
		{"klines default", request{path: "/v1/market/recent-klines", query: "asset1=BTC&asset2=USDT"}, func(t *testing.T, v any) {
			if n := len(v.([]any)); n != 100 {
				t.Errorf("%d klines, want the default 100", n)
			}
		}},
		{"klines 1h limit 5", request{path: "/v1/market/recent-klines", query: "asset1=eth&asset2=usdt&interval=1h&limit=5"}, func(t *testing.T, v any) {
			ks := v.([]any)
			if len(ks) != 5 {
				t.Fatalf("%d klines, want 5", len(ks))
			}
			k := ks[0].(map[string]any)
			if ot, ct := k["openTime"].(float64), k["closeTime"].(float64); ct-ot != 3600000-1 {
				t.Errorf("closeTime - openTime = %v", ct-ot)
			}
		}},
		{"order book", request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT&limit=3"}, func(t *testing.T, v any) {
			b := v.(map[string]any)
			if len(b["bids"].([]any)) != 3 || len(b["asks"].([]any)) != 3 {
				t.Errorf("book %v, want 3 levels a side", b)
			}
		}},
		{"deposits", request{path: "/v1/wallet/recent-deposits"}, func(t *testing.T, v any) {
			if len(v.([]any)) == 0 {
				t.Error("no deposits")
			}
		}},
		{"deposits filtered", request{path: "/v1/wallet/recent-deposits", query: "asset=USDT&status=pending"}, func(t *testing.T, v any) {
			for _, d := range v.([]any) {
				d := d.(map[string]any)
				if d["asset"] != "USDT" || d["status"] != "pending" {
					t.Errorf("deposit %v does not match the filter", d)
				}
			}
		}},
		{"deposit address", request{path: "/v1/wallet/deposit", query: "asset=XRP&network=XRP"}, func(t *testing.T, v any) {
			a := v.(map[string]any)
			if a["address"] == "" || a["tag"] == nil {
				t.Errorf("address %v, want an address and a tag", a)
			}
		}},
		{"market buy in quote", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2"`}, func(t *testing.T, v any) {
			o := v.(map[string]any)
			if o["status"] != "FILLED" || o["quantityIn"] != "USDT" || o["type"] != "MARKET" {
				t.Errorf("order %v", o)
			}
		}},
		{"market sell in base, number quantity", request{method: "POST", path: "/v1/order/market", body: `"asset1":"ETH","asset2":"USDT","side":"sell","quantity":0.5,"quantityIn":"ETH"`}, func(t *testing.T, v any) {
			o := v.(map[string]any)
			if o["quantityIn"] != "ETH" || o["side"] != "SELL" {
				t.Errorf("order %v", o)
			}
		}},
		{"withdraw", request{method: "POST", path: "/v1/wallet/withdraw", body: `"asset":"ETH","network":"ETH","address":"0x52908400098527886E0F7030069857D2E4169EE7","amount":"1.5"`}, func(t *testing.T, v any) {
			w := v.(map[string]any)
			if w["amount"] != 1.5 || w["txId"] == "" {
				t.Errorf("withdrawal %v", w)
			}
		}},
		{"healthz", request{path: "/healthz", noSig: true}, nil},
		{"readyz", request{path: "/readyz", noSig: true}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(tc.req)
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if r.header.Get("X-Request-ID") == "" {
				t.Error("no X-Request-ID")
			}
			if tc.check != nil {
				var v any
				if err := json.Unmarshal(r.body, &v); err != nil {
					t.Fatal(err)
				}
				tc.check(t, v)
			}
		})
	}
	t.Run("openapi document", func(t *testing.T) {
		r := g.do(request{path: "/v1/openapi.yaml", noSig: true})
		if r.status != 200 || !bytes.Contains(r.body, []byte("openapi:")) {
			t.Fatalf("status %d body %.80s", r.status, r.body)
		}
	})
	// Issue 23: the request id is always the gateway's own; a client's
	// X-Request-ID is kept apart (the audit trail's clientRequestId).
	t.Run("request id is the gateway's", func(t *testing.T) {
		r := g.do(request{path: "/healthz", noSig: true, header: map[string]string{"X-Request-ID": "abc-123"}})
		if got := r.header.Get("X-Request-ID"); got == "abc-123" || len(got) != 24 {
			t.Errorf("X-Request-ID = %q; want an id of the gateway's own", got)
		}
	})
}

func balances(t *testing.T, g *gateway) map[string]decimal.Decimal {
	t.Helper()
	r := g.do(request{path: "/v1/wallet/account-balance"})
	var bs []exgate.Balance
	if err := json.Unmarshal(r.body, &bs); err != nil {
		t.Fatal(err)
	}
	m := map[string]decimal.Decimal{}
	for _, b := range bs {
		m[b.Asset] = b.Available
	}
	return m
}

// A market BUY in the quote asset moves balances by exactly the fill plus
// the fee (README quick start).
func TestMarketBuyMovesBalancesExactly(t *testing.T) {
	g := newGateway(t, options{})
	before := balances(t, g)
	r := g.do(request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2"`})
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var o exgate.Order
	if err := json.Unmarshal(r.body, &o); err != nil {
		t.Fatal(err)
	}
	after := balances(t, g)
	if o.QuoteQuantity == nil || o.ExecutedQuantity == nil || o.Fees == nil {
		t.Fatalf("order lacks fill details: %s", r.body)
	}
	spent := before["USDT"].Sub(after["USDT"])
	if !spent.Equal(o.QuoteQuantity.Decimal) {
		t.Errorf("USDT moved by %s, order spent %s", spent, o.QuoteQuantity)
	}
	if o.FeesIn != "BTC" {
		t.Fatalf("feesIn %s, want BTC", o.FeesIn)
	}
	got := after["BTC"].Sub(before["BTC"])
	want := o.ExecutedQuantity.Decimal.Sub(o.Fees.Decimal)
	if !got.Equal(want) {
		t.Errorf("BTC moved by %s, want executed %s - fee %s = %s", got, o.ExecutedQuantity, o.Fees, want)
	}
	if wantFee := o.ExecutedQuantity.Decimal.Mul(decimal.RequireFromString("0.001")); !o.Fees.Decimal.Equal(wantFee) {
		t.Errorf("fee %s, want 0.1%% of %s = %s", o.Fees, o.ExecutedQuantity, wantFee)
	}
}

func TestErrors(t *testing.T) {
	g := newGateway(t, options{})
	otherKey, otherSecret := g.addClient("client-b")
	g.addCredential(otherKey, "theirs")
	g.addCredential(g.apiKey, "readonly")
	order := `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2"`
	tests := []struct {
		name      string
		req       request
		wantCode  string
		wantParam string
	}{
		{"no api key", request{path: "/v1/wallet/account-balance", apiKey: str("")}, "MISSING_API_KEY", ""},
		{"unknown api key", request{path: "/v1/wallet/account-balance", apiKey: str("nope")}, "INVALID_API_KEY", ""},
		{"no signature", request{path: "/v1/wallet/account-balance", noSig: true}, "MISSING_SIGNATURE", ""},
		{"signature not hex", request{path: "/v1/wallet/account-balance", signature: strings.Repeat("z", 64)}, "INVALID_SIGNATURE", ""},
		{"signature short", request{path: "/v1/wallet/account-balance", signature: "abcd"}, "INVALID_SIGNATURE", ""},
		{"wrong secret", request{path: "/v1/wallet/account-balance", secret: "other"}, "INVALID_SIGNATURE", ""},
		{"signature over reordered params", request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT", signed: "asset2=USDT&asset1=BTC"}, "INVALID_SIGNATURE", ""},
		{"signature over reordered body", request{method: "POST", path: "/v1/order/market", body: order, signed: "asset2=USDT&asset1=BTC&side=BUY&quantity=100&quantityIn=asset2"}, "INVALID_SIGNATURE", ""},
		{"number text signed differently", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":1e2,"quantityIn":"asset2"`, signed: "asset1=BTC&asset2=USDT&side=BUY&quantity=100&quantityIn=asset2"}, "INVALID_SIGNATURE", ""},
		{"other client's secret", request{path: "/v1/wallet/account-balance", secret: otherSecret}, "INVALID_SIGNATURE", ""},
		{"unauthenticated bad params learn nothing", request{path: "/v1/market/order-book", query: "limit=abc", secret: "wrong"}, "INVALID_SIGNATURE", ""},
		{"no exchange key", request{path: "/v1/wallet/account-balance", exchangeKey: str("")}, "MISSING_EXCHANGE_KEY", ""},
		{"unknown exchange key", request{path: "/v1/wallet/account-balance", exchangeKey: str("nope")}, "UNKNOWN_EXCHANGE_KEY", ""},
		{"another client's exchange key", request{path: "/v1/wallet/account-balance", exchangeKey: str("theirs")}, "UNKNOWN_EXCHANGE_KEY", ""},
		{"no trade permission", request{method: "POST", path: "/v1/order/market", body: order, exchangeKey: str("readonly")}, "PERMISSION_DENIED", ""},
		{"no withdraw permission", request{method: "POST", path: "/v1/wallet/withdraw", body: `"asset":"ETH","network":"ETH","address":"0x52908400098527886E0F7030069857D2E4169EE7","amount":"1"`, exchangeKey: str("readonly")}, "PERMISSION_DENIED", ""},
		{"nested object", request{method: "POST", path: "/v1/order/market", rawBody: []byte(`{"asset1":{"x":1},"signature":"00"}`)}, "INVALID_PARAMETER", ""},
		{"array member", request{method: "POST", path: "/v1/order/market", rawBody: []byte(`{"asset1":["BTC"],"signature":"00"}`)}, "INVALID_PARAMETER", ""},
		{"not json", request{method: "POST", path: "/v1/order/market", rawBody: []byte(`asset1=BTC`)}, "INVALID_PARAMETER", ""},
		{"duplicated query parameter", request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT&asset1=ETH"}, "INVALID_PARAMETER", "asset1"},
		{"duplicated body member", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC",` + order}, "INVALID_PARAMETER", "asset1"},
		{"unknown parameter", request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT&depth=5"}, "INVALID_PARAMETER", "depth"},
		{"missing asset1", request{path: "/v1/market/order-book", query: "asset2=USDT"}, "INVALID_PARAMETER", "asset1"},
		{"limit zero", request{path: "/v1/market/order-book", query: "asset1=BTC&asset2=USDT&limit=0"}, "INVALID_PARAMETER", "limit"},
		{"limit too big", request{path: "/v1/market/recent-klines", query: "asset1=BTC&asset2=USDT&limit=1001"}, "INVALID_PARAMETER", "limit"},
		{"limit not a number", request{path: "/v1/market/recent-klines", query: "asset1=BTC&asset2=USDT&limit=ten"}, "INVALID_PARAMETER", "limit"},
		{"bad interval", request{path: "/v1/market/recent-klines", query: "asset1=BTC&asset2=USDT&interval=2m"}, "INVALID_PARAMETER", "interval"},
		{"bad side", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"HOLD","quantity":"1","quantityIn":"asset1"`}, "INVALID_PARAMETER", "side"},
		{"negative quantity", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"-1","quantityIn":"asset1"`}, "INVALID_PARAMETER", "quantity"},
		{"quantity not a decimal", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"1,5","quantityIn":"asset1"`}, "INVALID_PARAMETER", "quantity"},
		{"quantity true", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":true,"quantityIn":"asset1"`}, "INVALID_PARAMETER", "quantity"},
		{"bad quantityIn", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"1","quantityIn":"ETH"`}, "INVALID_PARAMETER", "quantityIn"},
		{"asset given as number", request{method: "POST", path: "/v1/order/market", body: `"asset1":5,"asset2":"USDT","side":"BUY","quantity":"1","quantityIn":"asset1"`}, "INVALID_PARAMETER", "asset1"},
		{"bad deposit status", request{path: "/v1/wallet/recent-deposits", query: "status=done"}, "INVALID_PARAMETER", "status"},
		{"bad withdrawal status", request{path: "/v1/wallet/recent-withdraws", query: "status=done"}, "INVALID_PARAMETER", "status"},
		{"bad withdrawal asset", request{path: "/v1/wallet/recent-withdraws", query: "asset=b%20tc"}, "INVALID_PARAMETER", "asset"},
		{"unknown withdrawal filter", request{path: "/v1/wallet/recent-withdraws", query: "network=ETH"}, "INVALID_PARAMETER", "network"},
		{"bad clientOrderId", request{method: "POST", path: "/v1/order/market", body: order + `,"clientOrderId":"has space"`}, "INVALID_PARAMETER", "clientOrderId"},
		{"unknown symbol", request{path: "/v1/market/order-book", query: "asset1=DOGE&asset2=USDT"}, "UNKNOWN_SYMBOL", ""},
		// A market order on the inverse pair is translated
		// (lifecycle_test.go); market data on it is not.
		{"inverse symbol", request{path: "/v1/market/order-book", query: "asset1=USDT&asset2=BTC"}, "UNKNOWN_SYMBOL", ""},
		{"quantity too small", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"0.000000001","quantityIn":"asset1"`}, "QUANTITY_TOO_SMALL", ""},
		{"insufficient funds", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"SELL","quantity":"11","quantityIn":"asset1"`}, "INSUFFICIENT_FUNDS", ""},
		{"withdraw more than held", request{method: "POST", path: "/v1/wallet/withdraw", body: `"asset":"ETH","network":"ETH","address":"0x52908400098527886E0F7030069857D2E4169EE7","amount":"1000"`}, "INSUFFICIENT_FUNDS", ""},
		{"withdraw bad address", request{method: "POST", path: "/v1/wallet/withdraw", body: `"asset":"ETH","network":"ETH","address":"not-an-address","amount":"1"`}, "INVALID_PARAMETER", "address"},
		{"unknown path", request{path: "/v1/nothing", noSig: true}, "NOT_FOUND", ""},
		{"wrong method", request{method: "DELETE", path: "/v1/order/market", noSig: true}, "METHOD_NOT_ALLOWED", ""},
		{"GET on a POST route", request{path: "/v1/wallet/withdraw", noSig: true}, "METHOD_NOT_ALLOWED", ""},
		{"payload too large", request{method: "POST", path: "/v1/order/market", rawBody: bytes.Repeat([]byte(" "), httpapi.MaxBodyBytes+1)}, "PAYLOAD_TOO_LARGE", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(tc.req)
			p := r.problem(t)
			if p["code"] != tc.wantCode {
				t.Fatalf("code %v, want %s (status %d, %s)", p["code"], tc.wantCode, r.status, r.body)
			}
			if tc.wantParam != "" && p["param"] != tc.wantParam {
				t.Errorf("param %v, want %s", p["param"], tc.wantParam)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			if int(p["status"].(float64)) != r.status {
				t.Errorf("problem status %v, HTTP status %d", p["status"], r.status)
			}
			if r.status == 405 && r.header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
	t.Run("inverse pair named", func(t *testing.T) {
		r := g.do(request{path: "/v1/market/order-book", query: "asset1=USDT&asset2=BTC"})
		if !bytes.Contains(r.body, []byte("BTC/USDT")) {
			t.Errorf("detail does not name the inverse pair: %s", r.body)
		}
	})
	t.Run("insufficient funds changes nothing", func(t *testing.T) {
		before := balances(t, g)
		g.do(request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"SELL","quantity":"11","quantityIn":"asset1"`})
		after := balances(t, g)
		for a, v := range before {
			if !after[a].Equal(v) {
				t.Errorf("%s moved from %s to %s", a, v, after[a])
			}
		}
	})
}

func TestSignatureForms(t *testing.T) {
	g := newGateway(t, options{})
	q := "asset1=BTC&asset2=USDT&limit=2"
	tests := []struct {
		name       string
		req        request
		wantStatus int
	}{
		{"upper-case hex accepted", request{path: "/v1/market/order-book", query: q, signature: strings.ToUpper(sign(g.secret, q))}, 200},
		{"percent-decoded form accepted", request{path: "/v1/wallet/recent-deposits", query: "asset=%55SDT", signed: "asset=USDT"}, 200},
		{"raw form accepted", request{path: "/v1/wallet/recent-deposits", query: "asset=%55SDT"}, 200},
		{"empty parameter string", request{path: "/v1/wallet/account-balance"}, 200},
		{"literal number text", request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":1e2,"quantityIn":"asset2"`}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := g.do(tc.req); r.status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", r.status, tc.wantStatus, r.body)
			}
		})
	}
}

func TestReplayGuard(t *testing.T) {
	g := newGateway(t, options{})
	now := g.clock.Now().UnixMilli()
	q := "timestamp=" + strconv.FormatInt(now, 10)
	if r := g.do(request{path: "/v1/wallet/account-balance", query: q}); r.status != 200 {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	r := g.do(request{path: "/v1/wallet/account-balance", query: q})
	if code := r.problem(t)["code"]; code != "REPLAYED_REQUEST" {
		t.Fatalf("replay: %v", code)
	}
	tests := []struct {
		name, query, wantCode string
	}{
		{"too old", "timestamp=" + strconv.FormatInt(now-5001, 10), "TIMESTAMP_OUTSIDE_WINDOW"},
		{"too far ahead", "timestamp=" + strconv.FormatInt(now+1500, 10), "TIMESTAMP_OUTSIDE_WINDOW"},
		{"inside a wider window", "timestamp=" + strconv.FormatInt(now-20000, 10) + "&recvWindow=30000", ""},
		{"window too wide", "timestamp=" + strconv.FormatInt(now, 10) + "&recvWindow=60001", "INVALID_PARAMETER"},
		{"timestamp not a number", "timestamp=soon", "INVALID_PARAMETER"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(request{path: "/v1/wallet/account-balance", query: tc.query})
			if tc.wantCode == "" {
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				return
			}
			if code := r.problem(t)["code"]; code != tc.wantCode {
				t.Fatalf("code %v, want %s", code, tc.wantCode)
			}
		})
	}
	t.Run("required", func(t *testing.T) {
		g := newGateway(t, options{requireTimestamp: true})
		r := g.do(request{path: "/v1/wallet/account-balance"})
		if code := r.problem(t)["code"]; code != "MISSING_TIMESTAMP" {
			t.Fatalf("code %v", code)
		}
		ts := "timestamp=" + strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
		if r := g.do(request{path: "/v1/wallet/account-balance", query: ts}); r.status != 200 {
			t.Fatalf("with timestamp: %d %s", r.status, r.body)
		}
	})
}

func TestRevokedKeyRefusedWithinASecond(t *testing.T) {
	g := newGateway(t, options{})
	if r := g.do(request{path: "/v1/wallet/account-balance"}); r.status != 200 {
		t.Fatalf("before: %d", r.status)
	}
	if err := g.store.RevokeClientKey(t.Context(), g.apiKey); err != nil {
		t.Fatal(err)
	}
	g.clock.Add(time.Second)
	r := g.do(request{path: "/v1/wallet/account-balance"})
	if code := r.problem(t)["code"]; code != "INVALID_API_KEY" {
		t.Fatalf("after revocation: %v", code)
	}
	t.Run("exchange key removed", func(t *testing.T) {
		g := newGateway(t, options{})
		g.do(request{path: "/v1/wallet/account-balance"})
		if err := g.store.RemoveCredential(t.Context(), g.apiKey, "demo"); err != nil {
			t.Fatal(err)
		}
		g.clock.Add(time.Second)
		if code := g.do(request{path: "/v1/wallet/account-balance"}).problem(t)["code"]; code != "UNKNOWN_EXCHANGE_KEY" {
			t.Fatalf("after removal: %v", code)
		}
	})
}

func TestRateLimited(t *testing.T) {
	g := newGateway(t, options{clientLimit: exgate.RateLimit{Rate: 2, Period: time.Second, Burst: 2}})
	var last response
	for range 3 {
		last = g.do(request{path: "/v1/wallet/account-balance"})
	}
	if code := last.problem(t)["code"]; code != "RATE_LIMITED" {
		t.Fatalf("third request: %v", code)
	}
	if last.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	g.clock.Add(time.Second)
	if r := g.do(request{path: "/v1/wallet/account-balance"}); r.status != 200 {
		t.Fatalf("after a second: %d", r.status)
	}
}

func TestIdempotency(t *testing.T) {
	g := newGateway(t, options{})
	order := `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2","clientOrderId":"my-1"`
	first := g.do(request{method: "POST", path: "/v1/order/market", body: order})
	second := g.do(request{method: "POST", path: "/v1/order/market", body: order})
	if first.status != 200 || second.status != 200 || !bytes.Equal(first.body, second.body) {
		t.Fatalf("retry answered differently:\n%d %s\n%d %s", first.status, first.body, second.status, second.body)
	}
	header := g.do(request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2"`,
		header: map[string]string{"Idempotency-Key": "my-1"}})
	if !bytes.Equal(header.body, first.body) {
		t.Errorf("Idempotency-Key did not find the first order: %s", header.body)
	}
	conflict := g.do(request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"101","quantityIn":"asset2","clientOrderId":"my-1"`})
	if code := conflict.problem(t)["code"]; code != "IDEMPOTENCY_CONFLICT" || conflict.status != 409 {
		t.Fatalf("reuse with other parameters: %d %v", conflict.status, code)
	}
	var o exgate.Order
	_ = json.Unmarshal(first.body, &o)
	for _, q := range []string{"id=" + o.ID, "clientOrderId=my-1"} {
		r := g.do(request{path: "/v1/order", query: q})
		var got exgate.Order
		_ = json.Unmarshal(r.body, &got)
		if r.status != 200 || got.ID != o.ID || got.Status != exgate.OrderFilled {
			t.Errorf("GET /v1/order?%s: %d %s", q, r.status, r.body)
		}
	}
	// Another client cannot read it.
	other, _ := g.addClient("client-c")
	g.addCredential(other, "demo")
	r := g.do(request{path: "/v1/order", query: "id=" + o.ID, apiKey: &other, secret: "secret-of-client-c"})
	if code := r.problem(t)["code"]; code != "NOT_FOUND" {
		t.Errorf("another client's order: %v", code)
	}
}

// lostAnswer places the order on the sim but reports a timeout, as when
// the exchange accepted an order and its answer was lost.
type lostAnswer struct {
	exgate.Exchange
}

func (l lostAnswer) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	if _, err := l.Exchange.PlaceMarketOrder(ctx, cred, req); err != nil {
		return exgate.Order{}, err
	}
	return exgate.Order{}, exgate.Errorf(exgate.CodeExchangeTimeout, "answer lost")
}

func TestTimeoutIsReconciled(t *testing.T) {
	g := newGateway(t, options{wrap: func(e exgate.Exchange) exgate.Exchange { return lostAnswer{e} }})
	before := balances(t, g)
	r := g.do(request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2","clientOrderId":"t-1"`})
	p := r.problem(t)
	pending, _ := p["order"].(map[string]any)
	if r.status != 504 || p["code"] != "EXCHANGE_TIMEOUT" || pending["status"] != "PENDING" || p["id"] != pending["id"] {
		t.Fatalf("timeout answer: %d %s", r.status, r.body)
	}
	id := p["id"].(string)
	got := g.do(request{path: "/v1/order", query: "id=" + url.QueryEscape(id)})
	var o exgate.Order
	_ = json.Unmarshal(got.body, &o)
	if got.status != 200 || o.Status != exgate.OrderFilled {
		t.Fatalf("reconciled order: %d %s", got.status, got.body)
	}
	// A client retry returns the reconciled order and places nothing.
	retry := g.do(request{method: "POST", path: "/v1/order/market", body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2","clientOrderId":"t-1"`})
	if retry.status != 200 {
		t.Fatalf("retry: %d %s", retry.status, retry.body)
	}
	after := balances(t, g)
	if spent := before["USDT"].Sub(after["USDT"]); !spent.Equal(o.QuoteQuantity.Decimal) {
		t.Errorf("USDT spent %s, one order spent %s: the order was doubled or lost", spent, o.QuoteQuantity)
	}
}
