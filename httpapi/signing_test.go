package httpapi_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/httpapi"
	"github.com/shopspring/decimal"
)

const (
	xrpAddress = "rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh"
	ethAddress = "0x52908400098527886E0F7030069857D2E4169EE7"
	marketBuy  = `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2"`
)

// Issue 13, unambiguous signed string: a name or value holding '&' or '='
// is refused naming it before anything is recorded, so that a signature
// can neither be re-split into other members nor carry a timestamp folded
// into a free-text member past the replay guard.
func TestAmbiguousParameterRefused(t *testing.T) {
	g := newGateway(t, options{})
	ts := strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
	// The string a client signed for a withdrawal with the tag "7".
	legit := "asset=XRP&network=XRP&address=" + xrpAddress + "&amount=25&tag=7&timestamp=" + ts
	tests := []struct {
		name      string
		req       request
		wantParam string
	}{
		{"forged re-split body", request{method: "POST", path: "/v1/wallet/withdraw", noTimestamp: true,
			body:   `"asset":"XRP","network":"XRP","address":"` + xrpAddress + `","amount":"25","tag":"7&timestamp=` + ts + `"`,
			signed: legit}, "tag"},
		{"timestamp folded into a member", request{method: "POST", path: "/v1/wallet/withdraw",
			body: `"asset":"XRP","network":"XRP","address":"` + xrpAddress + `","amount":"25","tag":"8&timestamp=` + ts + `"`}, "tag"},
		{"escaped equals in a value", request{method: "POST", path: "/v1/order/market",
			body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"100","quantityIn":"asset2","clientOrderId":"a\u003db"`}, "clientOrderId"},
		{"query value with an encoded ampersand", request{path: "/v1/wallet/recent-deposits", query: "asset=USDT%26status%3Dpending"}, "asset"},
		{"query value with an encoded percent", request{path: "/v1/wallet/recent-deposits", query: "asset=%2555SDT"}, "asset"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := balances(t, g)
			r := g.do(tc.req)
			p := r.problem(t)
			if r.status != 400 || p["code"] != "INVALID_PARAMETER" || p["param"] != tc.wantParam {
				t.Fatalf("%d %s; want 400 INVALID_PARAMETER naming %s", r.status, r.body, tc.wantParam)
			}
			if d, _ := p["detail"].(string); !strings.Contains(d, "'&' or '='") && !strings.Contains(d, "'%' or '+'") {
				t.Errorf("detail %q does not say why", d)
			}
			if after := balances(t, g); !equalBalances(before, after) {
				t.Errorf("balances moved: %v -> %v", before, after)
			}
		})
	}
	// Nothing was recorded: the legitimate request is still accepted once.
	r := g.do(request{method: "POST", path: "/v1/wallet/withdraw", noTimestamp: true,
		body: `"asset":"XRP","network":"XRP","address":"` + xrpAddress + `","amount":"25","tag":"7","timestamp":` + ts})
	if r.status != 200 {
		t.Fatalf("the legitimate request: %d %s", r.status, r.body)
	}
}

func equalBalances(a, b map[string]decimal.Decimal) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !b[k].Equal(v) {
			return false
		}
	}
	return true
}

// Issue 13, timestamps on every state-changing request.
func TestTimestampRequiredOnPost(t *testing.T) {
	g := newGateway(t, options{})
	legacyKey, legacySecret := "keylegacy", "secret-of-legacy"
	if err := g.store.CreateClientKey(t.Context(), exgate.ClientKey{APIKey: legacyKey, Secret: legacySecret, LegacySigning: true}); err != nil {
		t.Fatal(err)
	}
	g.addCredential(legacyKey, "demo", exgate.PermissionTrade, exgate.PermissionWithdraw)
	now := g.clock.Now().UnixMilli()
	tests := []struct {
		name       string
		req        request
		wantStatus int
		wantCode   string
		wantDetail string
	}{
		{"POST without timestamp", request{method: "POST", path: "/v1/order/market", body: marketBuy, noTimestamp: true}, 401, "MISSING_TIMESTAMP", "timestamp"},
		{"withdraw without timestamp", request{method: "POST", path: "/v1/wallet/withdraw", noTimestamp: true,
			body: `"asset":"ETH","network":"ETH","address":"` + ethAddress + `","amount":"1"`}, 401, "MISSING_TIMESTAMP", ""},
		{"POST with timestamp", request{method: "POST", path: "/v1/order/market", body: marketBuy}, 200, "", ""},
		{"legacy key accepted without timestamp", request{method: "POST", path: "/v1/order/market", body: marketBuy, noTimestamp: true,
			apiKey: &legacyKey, secret: legacySecret}, 200, "", ""},
		{"legacy key with timestamp", request{method: "POST", path: "/v1/order/market", body: marketBuy, apiKey: &legacyKey, secret: legacySecret}, 200, "", ""},
		{"GET without timestamp", request{path: "/v1/wallet/account-balance"}, 200, "", ""},
		{"timestamp in seconds gets a hint", request{method: "POST", path: "/v1/order/market", noTimestamp: true,
			body: marketBuy + `,"timestamp":` + strconv.FormatInt(now/1000, 10)}, 401, "TIMESTAMP_OUTSIDE_WINDOW", "looks like seconds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(tc.req)
			if r.status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", r.status, tc.wantStatus, r.body)
			}
			if tc.wantCode == "" {
				return
			}
			p := r.problem(t)
			if p["code"] != tc.wantCode {
				t.Fatalf("code %v, want %s", p["code"], tc.wantCode)
			}
			if d, _ := p["detail"].(string); !strings.Contains(d, tc.wantDetail) {
				t.Errorf("detail %q lacks %q", d, tc.wantDetail)
			}
		})
	}
	t.Run("--require-timestamp covers GETs", func(t *testing.T) {
		g := newGateway(t, options{requireTimestamp: true})
		r := g.do(request{path: "/v1/wallet/account-balance"})
		if code := r.problem(t)["code"]; r.status != 401 || code != "MISSING_TIMESTAMP" {
			t.Fatalf("%d %v", r.status, code)
		}
	})
}

// Issue 13, one signature, one use: across the client's exchange keys, and
// a request refused by the client rate limit keeps its signature.
func TestOneSignatureOneUse(t *testing.T) {
	t.Run("replay across exchange keys", func(t *testing.T) {
		g := newGateway(t, options{})
		g.addCredential(g.apiKey, "live", exgate.PermissionTrade)
		body := marketBuy + `,"timestamp":` + strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
		tests := []struct {
			exchangeKey string
			wantStatus  int
		}{
			{"demo", 200},
			{"live", 401},
			{"demo", 401},
		}
		for _, tc := range tests {
			r := g.do(request{method: "POST", path: "/v1/order/market", body: body, exchangeKey: &tc.exchangeKey})
			if r.status != tc.wantStatus {
				t.Fatalf("to %s: %d %s; want %d", tc.exchangeKey, r.status, r.body, tc.wantStatus)
			}
			if tc.wantStatus == 401 && r.problem(t)["code"] != "REPLAYED_REQUEST" {
				t.Fatalf("to %s: %s", tc.exchangeKey, r.body)
			}
		}
	})
	t.Run("429 then the same request accepted", func(t *testing.T) {
		g := newGateway(t, options{clientLimit: exgate.RateLimit{Rate: 1, Period: time.Second, Burst: 1}})
		if r := g.do(request{path: "/v1/wallet/account-balance"}); r.status != 200 {
			t.Fatalf("first: %d %s", r.status, r.body)
		}
		body := marketBuy + `,"timestamp":` + strconv.FormatInt(g.clock.Now().UnixMilli(), 10)
		steps := []struct {
			advance    time.Duration
			wantStatus int
			wantCode   string
		}{
			{0, 429, "RATE_LIMITED"},
			{time.Second, 200, ""},
			{time.Second, 401, "REPLAYED_REQUEST"},
		}
		for i, st := range steps {
			g.clock.Add(st.advance)
			r := g.do(request{method: "POST", path: "/v1/order/market", body: body})
			if r.status != st.wantStatus {
				t.Fatalf("step %d: %d %s; want %d", i, r.status, r.body, st.wantStatus)
			}
			if st.wantCode != "" && r.problem(t)["code"] != st.wantCode {
				t.Fatalf("step %d: %s; want %s", i, r.body, st.wantCode)
			}
		}
	})
}

// Issue 13, the replay guard cannot be filled by one client: past its
// quota a key is refused with 429 while another client is served.
func TestReplayGuardQuota(t *testing.T) {
	g := newGateway(t, options{replayQuota: 3})
	other, otherSecret := g.addClient("client-b")
	g.addCredential(other, "demo")
	get := func(apiKey *string, secret string, i int) response {
		q := "timestamp=" + strconv.FormatInt(g.clock.Now().UnixMilli()-int64(i), 10)
		return g.do(request{path: "/v1/wallet/account-balance", query: q, apiKey: apiKey, secret: secret})
	}
	tests := []struct {
		name       string
		apiKey     *string
		secret     string
		wantStatus int
	}{
		{"a 1", nil, "", 200},
		{"a 2", nil, "", 200},
		{"a 3", nil, "", 200},
		{"a over its quota", nil, "", 429},
		{"b unaffected", &other, otherSecret, 200},
	}
	for i, tc := range tests {
		r := get(tc.apiKey, tc.secret, i)
		if r.status != tc.wantStatus {
			t.Fatalf("%s: %d %s; want %d", tc.name, r.status, r.body, tc.wantStatus)
		}
		if r.status == 429 && (r.problem(t)["code"] != "RATE_LIMITED" || r.header.Get("Retry-After") == "") {
			t.Fatalf("%s: %v %s", tc.name, r.header, r.body)
		}
	}
	// Once its signatures expire, the key is served again.
	g.clock.Add(7 * time.Second)
	if r := get(nil, "", 0); r.status != 200 {
		t.Fatalf("after the window: %d %s", r.status, r.body)
	}
}

// Issue 13, numbers are bounded; echoed input is clipped.
func TestNumbersBounded(t *testing.T) {
	g := newGateway(t, options{})
	huge := strings.Repeat("9", 10_000)
	tests := []struct {
		name, quantity string
	}{
		{"1e-9999", `1e-9999`},
		{"1e-9999 as a string", `"1e-9999"`},
		{"1e65", `1e65`},
		{"65 significant digits", `"` + strings.Repeat("1", 65) + `"`},
		{"10000 digits", `"` + huge + `"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(request{method: "POST", path: "/v1/order/market",
				body: `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":` + tc.quantity + `,"quantityIn":"asset2"`})
			p := r.problem(t)
			if r.status != 400 || p["code"] != "INVALID_PARAMETER" || p["param"] != "quantity" {
				t.Fatalf("%d %.300s", r.status, r.body)
			}
			if d, _ := p["detail"].(string); len(d) > 1100 {
				t.Errorf("detail of %d bytes echoes the input whole", len(d))
			}
		})
	}
	t.Run("1e64 still parses", func(t *testing.T) {
		if _, err := exgate.ParseDecimal("1e-64"); err != nil {
			t.Fatal(err)
		}
	})
}

// Issue 13, every answer is a problem.
func TestEveryAnswerIsAProblem(t *testing.T) {
	g := newGateway(t, options{})
	tests := []struct {
		name       string
		req        request
		wantStatus int
		wantCode   string
	}{
		{"//v1 path", request{path: "//v1/wallet/account-balance", query: "asset=secretish"}, 404, "NOT_FOUND"},
		{"dot-dot path", request{path: "/v1/../healthz", noSig: true}, 404, "NOT_FOUND"},
		{"dot path", request{path: "/v1/./wallet/account-balance"}, 404, "NOT_FOUND"},
		{"POST as form", request{method: "POST", path: "/v1/order/market", body: marketBuy, contentType: "application/x-www-form-urlencoded"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"POST as text", request{method: "POST", path: "/v1/wallet/withdraw", body: marketBuy, contentType: "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"POST JSON with charset", request{method: "POST", path: "/v1/order/market", body: marketBuy, contentType: "application/json; charset=utf-8"}, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(tc.req)
			if r.status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", r.status, tc.wantStatus, r.body)
			}
			if tc.wantCode == "" {
				return
			}
			if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			if loc := r.header.Get("Location"); loc != "" {
				t.Errorf("Location %q", loc)
			}
			if p := r.problem(t); p["code"] != tc.wantCode {
				t.Errorf("code %v, want %s", p["code"], tc.wantCode)
			}
			if strings.Contains(string(r.body), "secretish") || strings.Contains(string(r.body), "signature=") {
				t.Errorf("the query is echoed: %s", r.body)
			}
		})
	}
	t.Run("readyz names what is down", func(t *testing.T) {
		g := newGateway(t, options{ready: []httpapi.ReadyCheck{
			{Name: "store", Check: func(context.Context) error { return nil }},
			{Name: "shared state (Redis)", Check: func(context.Context) error {
				return errors.New("dial tcp 10.1.2.3:6379: connection refused")
			}},
		}})
		r := g.do(request{path: "/readyz", noSig: true})
		d, _ := r.problem(t)["detail"].(string)
		if r.status != 503 || !strings.Contains(d, "shared state (Redis)") || strings.Contains(d, "store") {
			t.Fatalf("%d %q", r.status, d)
		}
		if strings.Contains(string(r.body), "10.1.2.3") {
			t.Errorf("internal detail shown: %s", r.body)
		}
	})
}

// Issue 13, say what was verified.
func TestInvalidSignatureShowsVerifiedString(t *testing.T) {
	g := newGateway(t, options{})
	tests := []struct {
		name string
		req  request
		want string
	}{
		{"number written differently", request{method: "POST", path: "/v1/order/market", noTimestamp: true,
			body:   `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":100.0,"quantityIn":"asset2","timestamp":1`,
			signed: "asset1=BTC&asset2=USDT&side=BUY&quantity=100&quantityIn=asset2&timestamp=1"},
			`asset1=BTC&asset2=USDT&side=BUY&quantity=100.0&quantityIn=asset2&timestamp=1`},
		{"query, both forms", request{path: "/v1/wallet/recent-deposits", query: "asset=%55SDT", secret: "wrong"}, `asset=USDT`},
		{"long string clipped", request{path: "/v1/wallet/recent-deposits", query: "asset=" + strings.Repeat("A", 5000), secret: "wrong"}, "bytes in all"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(tc.req)
			p := r.problem(t)
			d, _ := p["detail"].(string)
			if p["code"] != "INVALID_SIGNATURE" || !strings.Contains(d, tc.want) {
				t.Fatalf("%s; want INVALID_SIGNATURE showing %q", r.body, tc.want)
			}
			if len(d) > 1100 || strings.Contains(d, g.secret) {
				t.Errorf("detail of %d bytes: %.200s", len(d), d)
			}
		})
	}
}
