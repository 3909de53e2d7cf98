package binancefake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	key    = "fakekey"
	secret = "fakesecret"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func newServer(t testing.TB, opts Options) (*Server, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	s := New(opts)
	t.Cleanup(s.Close)
	s.AddAccount(Account{APIKey: key, Secret: secret, Balances: map[string]string{"BTC": "1", "USDT": "10000", "XRP": "1000"}})
	return s, clk
}

// req describes one raw request to the fake.
type req struct {
	method, path string
	query, body  string
	apiKey       string
	sign         bool // append a correct signature over query+body
	sigInBody    bool
	sigOverride  string
}

type answer struct {
	status int
	code   int
	msg    string
	body   []byte
	header http.Header
}

func hmacHex(secret, payload string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(payload))
	return hex.EncodeToString(mac.Sum(nil))
}

func (s *Server) send(t testing.TB, r req) answer {
	t.Helper()
	if r.sign || r.sigOverride != "" {
		sig := r.sigOverride
		if sig == "" {
			sig = hmacHex(secret, r.query+r.body)
		}
		if r.sigInBody {
			r.body = join(r.body, "signature="+sig)
		} else {
			r.query = join(r.query, "signature="+sig)
		}
	}
	u := s.URL + r.path
	if r.query != "" {
		u += "?" + r.query
	}
	hr, err := http.NewRequestWithContext(t.Context(), r.method, u, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.apiKey != "" {
		hr.Header.Set("X-MBX-APIKEY", r.apiKey)
	}
	resp, err := s.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, body: b, header: resp.Header}
	var e struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}
	if json.Unmarshal(b, &e) == nil {
		a.code, a.msg = e.Code, e.Msg
	}
	return a
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "&" + b
}

func ts(clk *clock, d time.Duration) string {
	return strconv.FormatInt(clk.Now().Add(d).UnixMilli(), 10)
}

// TestChecks: the fake refuses what Binance refuses, with Binance's codes.
func TestChecks(t *testing.T) {
	s, clk := newServer(t, Options{})
	now := "timestamp=" + ts(clk, 0)
	order := "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.01&newClientOrderId=abc&" + now
	tests := []struct {
		name       string
		r          req
		wantStatus int
		wantCode   int
	}{
		{"signed GET accepted", req{method: "GET", path: "/api/v3/account", query: now, apiKey: key, sign: true}, 200, 0},
		{"upper-case signature accepted", req{method: "GET", path: "/api/v3/account", query: now, apiKey: key, sigOverride: strings.ToUpper(hmacHex(secret, now))}, 200, 0},
		{"signature in the body", req{method: "POST", path: "/api/v3/order", body: order, apiKey: key, sign: true, sigInBody: true}, 200, 0},
		{"query and body mixed", req{method: "POST", path: "/api/v3/order", query: "symbol=BTCUSDT&side=BUY&type=MARKET", body: "quantity=0.01&" + now, apiKey: key, sign: true}, 200, 0},
		{"missing API key", req{method: "GET", path: "/api/v3/account", query: now, sign: true}, 401, -2014},
		{"unknown API key", req{method: "GET", path: "/api/v3/account", query: now, apiKey: "other", sign: true}, 401, -2015},
		{"bad signature", req{method: "GET", path: "/api/v3/account", query: now, apiKey: key, sigOverride: hmacHex("wrong", now)}, 400, -1022},
		{"signature over other bytes", req{method: "GET", path: "/api/v3/account", query: now + "&omitZeroBalances=true", apiKey: key, sigOverride: hmacHex(secret, now)}, 400, -1022},
		{"missing signature", req{method: "GET", path: "/api/v3/account", query: now, apiKey: key}, 400, -1102},
		{"missing timestamp", req{method: "GET", path: "/api/v3/account", query: "recvWindow=5000", apiKey: key, sign: true}, 400, -1102},
		{"timestamp too old", req{method: "GET", path: "/api/v3/account", query: "timestamp=" + ts(clk, -6*time.Second), apiKey: key, sign: true}, 400, -1021},
		{"old timestamp inside a wider recvWindow", req{method: "GET", path: "/api/v3/account", query: "recvWindow=10000&timestamp=" + ts(clk, -6*time.Second), apiKey: key, sign: true}, 200, 0},
		{"timestamp ahead", req{method: "GET", path: "/api/v3/account", query: "timestamp=" + ts(clk, 1500*time.Millisecond), apiKey: key, sign: true}, 400, -1021},
		{"recvWindow over 60000", req{method: "GET", path: "/api/v3/account", query: "recvWindow=60001&" + now, apiKey: key, sign: true}, 400, -1131},
		{"unknown parameter", req{method: "GET", path: "/api/v3/account", query: "foo=1&" + now, apiKey: key, sign: true}, 400, -1104},
		{"missing mandatory parameter", req{method: "GET", path: "/api/v3/klines", query: "symbol=BTCUSDT"}, 400, -1102},
		{"bad interval", req{method: "GET", path: "/api/v3/klines", query: "symbol=BTCUSDT&interval=2m"}, 400, -1120},
		{"bad symbol", req{method: "GET", path: "/api/v3/depth", query: "symbol=BTCXYZ"}, 400, -1121},
		{"both quantities", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.01&quoteOrderQty=10&" + now, apiKey: key, sign: true}, 400, -1106},
		{"no quantity", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&" + now, apiKey: key, sign: true}, 400, -1102},
		{"bad side", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=buy&type=MARKET&quantity=0.01&" + now, apiKey: key, sign: true}, 400, -1117},
		{"bad type", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MKT&quantity=0.01&" + now, apiKey: key, sign: true}, 400, -1116},
		{"bad client order id", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.01&newClientOrderId=a.b&" + now, apiKey: key, sign: true}, 400, -1100},
		{"exponent quantity", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=1e-2&" + now, apiKey: key, sign: true}, 400, -1100},
		{"too much precision", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&quoteOrderQty=10.000000001&" + now, apiKey: key, sign: true}, 400, -1111},
		{"off the step", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.012345&" + now, apiKey: key, sign: true}, 400, -1013},
		{"under the notional", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.00001&" + now, apiKey: key, sign: true}, 400, -1013},
		{"quoteOrderQty refused", req{method: "POST", path: "/api/v3/order", body: "symbol=XRPUSDT&side=BUY&type=MARKET&quoteOrderQty=10&" + now, apiKey: key, sign: true}, 400, -2010},
		{"insufficient balance", req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=SELL&type=MARKET&quantity=2&" + now, apiKey: key, sign: true}, 400, -2010},
		{"market closed", req{method: "POST", path: "/api/v3/order", body: "symbol=LTCUSDT&side=BUY&type=MARKET&quantity=1&" + now, apiKey: key, sign: true}, 400, -2010},
		{"unknown order", req{method: "GET", path: "/api/v3/order", query: "symbol=BTCUSDT&origClientOrderId=nosuch&" + now, apiKey: key, sign: true}, 400, -2013},
		{"order lookup without an id", req{method: "GET", path: "/api/v3/order", query: "symbol=BTCUSDT&" + now, apiKey: key, sign: true}, 400, -1102},
		{"withdraw under the minimum", req{method: "POST", path: "/sapi/v1/capital/withdraw/apply", body: "coin=USDT&network=TRX&address=TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9&amount=5&" + now, apiKey: key, sign: true}, 400, -4022},
		{"withdraw bad address", req{method: "POST", path: "/sapi/v1/capital/withdraw/apply", body: "coin=USDT&network=TRX&address=xyz&amount=20&" + now, apiKey: key, sign: true}, 400, -4007},
		{"withdraw over the balance", req{method: "POST", path: "/sapi/v1/capital/withdraw/apply", body: "coin=USDT&network=TRX&address=TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9&amount=20000&" + now, apiKey: key, sign: true}, 400, -4026},
		{"withdraw tag on TRX", req{method: "POST", path: "/sapi/v1/capital/withdraw/apply", body: "coin=USDT&network=TRX&address=TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9&addressTag=1&amount=20&" + now, apiKey: key, sign: true}, 400, -4106},
		{"wrong method", req{method: "DELETE", path: "/api/v3/klines"}, 405, -1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := s.send(t, tc.r)
			if a.status != tc.wantStatus || a.code != tc.wantCode {
				t.Errorf("HTTP %d code %d %q, want HTTP %d code %d", a.status, a.code, a.msg, tc.wantStatus, tc.wantCode)
			}
		})
	}
}

// keys returns the sorted keys of a JSON object.
func keys(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func firstElem(t *testing.T, b []byte) []byte {
	t.Helper()
	var arr []json.RawMessage
	if err := json.Unmarshal(b, &arr); err != nil || len(arr) == 0 {
		t.Fatalf("not a non-empty array: %s", b)
	}
	return arr[0]
}

func documented(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// missing lists the documented keys the fake's answer lacks.
func missing(doc, got []string) []string {
	var out []string
	for _, k := range doc {
		if !slices.Contains(got, k) {
			out = append(out, k)
		}
	}
	return out
}

// TestPayloadShapes compares the fake's answers with the documented
// examples field by field.
func TestPayloadShapes(t *testing.T) {
	s, clk := newServer(t, Options{})
	now := "timestamp=" + ts(clk, 0)
	place := s.send(t, req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=SELL&type=MARKET&quantity=0.5&newClientOrderId=shape1&" + now, apiKey: key, sign: true})
	if place.status != 200 {
		t.Fatalf("order: %d %s", place.status, place.body)
	}
	s.send(t, req{method: "POST", path: "/sapi/v1/capital/withdraw/apply", body: "coin=USDT&network=TRX&address=TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9&amount=20&withdrawOrderId=w1&" + now, apiKey: key, sign: true})
	get := func(path, query string, signed bool) []byte {
		r := req{method: "GET", path: path, query: query}
		if signed {
			r.query, r.apiKey, r.sign = join(query, now), key, true
		}
		a := s.send(t, r)
		if a.status != 200 {
			t.Fatalf("%s: %d %s", path, a.status, a.body)
		}
		return a.body
	}
	tests := []struct {
		name    string
		doc     []byte
		got     []byte
		exact   bool
		nested  func([]byte) []byte
		nestDoc func([]byte) []byte
	}{
		{name: "order FULL", doc: documented(t, "order_market_full.json"), got: place.body, exact: true},
		{name: "query order", doc: documented(t, "order_query.json"), got: get("/api/v3/order", "symbol=BTCUSDT&origClientOrderId=shape1", true), exact: true},
		{name: "account", doc: documented(t, "account.json"), got: get("/api/v3/account", "", true), exact: true},
		{name: "depth", doc: documented(t, "depth.json"), got: get("/api/v3/depth", "symbol=BTCUSDT&limit=5", false), exact: true},
		{name: "deposit address", doc: documented(t, "deposit_address.json"), got: get("/sapi/v1/capital/deposit/address", "coin=BTC", true), exact: true},
		{name: "deposit history", doc: firstElem(t, documented(t, "deposit_history.json")), got: firstElem(t, get("/sapi/v1/capital/deposit/hisrec", "", true)), exact: true},
		{name: "withdraw history", doc: firstElem(t, documented(t, "withdraw_history.json")), got: firstElem(t, get("/sapi/v1/capital/withdraw/history", "", true))},
		{name: "coin config", doc: firstElem(t, documented(t, "capital_config_getall.json")), got: firstElem(t, get("/sapi/v1/capital/config/getall", "", true))},
		{name: "exchangeInfo", doc: documented(t, "exchangeInfo.json"), got: get("/api/v3/exchangeInfo", "", false), exact: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, got := keys(t, tc.doc), keys(t, tc.got)
			if m := missing(doc, got); len(m) > 0 {
				t.Errorf("fake answer lacks documented fields %v", m)
			}
			if extra := missing(got, doc); tc.exact && len(extra) > 0 {
				t.Errorf("fake answer has undocumented fields %v", extra)
			}
		})
	}
	t.Run("exchangeInfo symbol", func(t *testing.T) {
		var doc, got struct{ Symbols []json.RawMessage }
		_ = json.Unmarshal(documented(t, "exchangeInfo.json"), &doc)
		_ = json.Unmarshal(get("/api/v3/exchangeInfo", "symbol=BTCUSDT", false), &got)
		if len(got.Symbols) != 1 {
			t.Fatalf("%d symbols for symbol=BTCUSDT", len(got.Symbols))
		}
		if m := missing(keys(t, doc.Symbols[0]), keys(t, got.Symbols[0])); len(m) > 0 {
			t.Errorf("symbol lacks %v", m)
		}
	})
	t.Run("kline row", func(t *testing.T) {
		var doc, got [][]json.RawMessage
		_ = json.Unmarshal(documented(t, "klines.json"), &doc)
		_ = json.Unmarshal(get("/api/v3/klines", "symbol=BTCUSDT&interval=1w&limit=2", false), &got)
		if len(got) != 2 || len(got[0]) != len(doc[0]) {
			t.Fatalf("rows %d of %d fields, want 2 of %d", len(got), len(got[0]), len(doc[0]))
		}
		for i := range doc[0] {
			if (doc[0][i][0] == '"') != (got[0][i][0] == '"') {
				t.Errorf("field %d: %s, documented %s", i, got[0][i], doc[0][i])
			}
		}
	})
	t.Run("fill", func(t *testing.T) {
		var doc, got struct{ Fills []json.RawMessage }
		_ = json.Unmarshal(documented(t, "order_market_full.json"), &doc)
		_ = json.Unmarshal(place.body, &got)
		if len(got.Fills) == 0 || !slices.Equal(keys(t, doc.Fills[0]), keys(t, got.Fills[0])) {
			t.Errorf("fill %s, documented %s", got.Fills, doc.Fills[0])
		}
	})
}

// TestMarketOrderFills checks the balances moved by a fill.
func TestMarketOrderFills(t *testing.T) {
	s, clk := newServer(t, Options{})
	now := "timestamp=" + ts(clk, 0)
	a := s.send(t, req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&quoteOrderQty=1000&newClientOrderId=f1&" + now, apiKey: key, sign: true})
	var o struct {
		ExecutedQty, CummulativeQuoteQty, Status string
		Fills                                    []struct{ Price, Qty, Commission, CommissionAsset string }
	}
	if err := json.Unmarshal(a.body, &o); err != nil || o.Status != "FILLED" {
		t.Fatalf("%v %s", err, a.body)
	}
	btc, _ := s.Balance(key, "BTC")
	usdt, _ := s.Balance(key, "USDT")
	// 1000 USDT at the first ask 60000.50 buys 0.01666 BTC (step 0.00001);
	// the 0.1% commission is taken in BTC.
	if o.ExecutedQty != "0.01666000" || btc.String() != "1.01664334" || usdt.String() != "9000.39167" {
		t.Errorf("executed %s, BTC %s, USDT %s", o.ExecutedQty, btc, usdt)
	}
	if s.OrdersWithClientID("f1") != 1 || s.Requests("/api/v3/order") != 1 {
		t.Errorf("counters: %d orders, %d requests", s.OrdersWithClientID("f1"), s.Requests("/api/v3/order"))
	}
	big := s.send(t, req{method: "POST", path: "/api/v3/order", body: "symbol=ETHBTC&side=BUY&type=MARKET&quantity=1400&" + now, apiKey: key, sign: true})
	if big.code != -2010 {
		t.Errorf("ETH for more BTC than held: %s", big.body)
	}
}

func TestFaults(t *testing.T) {
	s, clk := newServer(t, Options{})
	now := "timestamp=" + ts(clk, 0)
	order := req{method: "POST", path: "/api/v3/order", body: "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.01&newClientOrderId=x1&" + now, apiKey: key, sign: true}

	s.SetFault(func(*http.Request) Fault { return Fault{Status: 503, Body: `{"code":-1007,"msg":"Timeout"}`} })
	if a := s.send(t, order); a.status != 503 || a.code != -1007 || s.OrdersWithClientID("x1") != 0 {
		t.Errorf("status fault: %d %d, %d orders", a.status, a.code, s.OrdersWithClientID("x1"))
	}

	s.SetFault(func(*http.Request) Fault { return Fault{DropAfter: true} })
	hr, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL+order.path, strings.NewReader(order.body+"&signature="+hmacHex(secret, order.body)))
	hr.Header.Set("X-MBX-APIKEY", key)
	hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := s.Client().Do(hr); err == nil {
		resp.Body.Close()
		t.Error("DropAfter answered")
	}
	if s.OrdersWithClientID("x1") != 1 {
		t.Errorf("DropAfter: %d orders, want 1 (processed, answer lost)", s.OrdersWithClientID("x1"))
	}

	s.SetFault(func(*http.Request) Fault { return Fault{Drop: true} })
	hr, _ = http.NewRequestWithContext(t.Context(), "GET", s.URL+"/api/v3/time", nil)
	if resp, err := s.Client().Do(hr); err == nil {
		resp.Body.Close()
		t.Error("Drop answered")
	}
	s.SetFault(nil)
	if a := s.send(t, req{method: "GET", path: "/api/v3/time"}); a.status != 200 {
		t.Errorf("after removing the fault: %d", a.status)
	}
}

func TestWeightLimit(t *testing.T) {
	s, _ := newServer(t, Options{WeightLimit: 45})
	var last answer
	for range 3 {
		last = s.send(t, req{method: "GET", path: "/api/v3/exchangeInfo"})
	}
	if last.status != 429 || last.code != -1003 || last.header.Get("Retry-After") == "" {
		t.Errorf("third exchangeInfo: %d %d Retry-After %q, want 429 -1003 with Retry-After", last.status, last.code, last.header.Get("Retry-After"))
	}
	if got := last.header.Get("X-MBX-USED-WEIGHT-1M"); got != "60" {
		t.Errorf("X-MBX-USED-WEIGHT-1M = %q, want 60", got)
	}
}

func TestClockOffset(t *testing.T) {
	s, clk := newServer(t, Options{})
	s.SetClockOffset(10 * time.Second)
	a := s.send(t, req{method: "GET", path: "/api/v3/time"})
	var st struct{ ServerTime int64 }
	_ = json.Unmarshal(a.body, &st)
	if want := clk.Now().Add(10 * time.Second).UnixMilli(); st.ServerTime != want {
		t.Errorf("serverTime %d, want %d", st.ServerTime, want)
	}
	if a := s.send(t, req{method: "GET", path: "/api/v3/account", query: "timestamp=" + ts(clk, 0), apiKey: key, sign: true}); a.code != -1021 {
		t.Errorf("timestamp 10 s behind the server: %s", a.body)
	}
}

func TestKlinesDeterministic(t *testing.T) {
	s, _ := newServer(t, Options{})
	a := s.send(t, req{method: "GET", path: "/api/v3/klines", query: "symbol=ETHUSDT&interval=1h&limit=5"})
	b := s.send(t, req{method: "GET", path: "/api/v3/klines", query: "symbol=ETHUSDT&interval=1h&limit=5"})
	if string(a.body) != string(b.body) {
		t.Error("klines differ between calls")
	}
	other, _ := newServer(t, Options{})
	c := other.send(t, req{method: "GET", path: "/api/v3/klines", query: "symbol=ETHUSDT&interval=1h&limit=5"})
	if string(a.body) != string(c.body) {
		t.Error("klines differ between servers")
	}
	var rows [][]json.RawMessage
	if err := json.Unmarshal(a.body, &rows); err != nil || len(rows) != 5 {
		t.Fatalf("%v %s", err, a.body)
	}
}

// BenchmarkHotPaths measures the fake's own handling of the calls a load
// run repeats (no network).
func BenchmarkHotPaths(b *testing.B) {
	s, clk := newServer(b, Options{WeightLimit: -1})
	accountQuery := "omitZeroBalances=true&recvWindow=5000&timestamp=" + ts(clk, 0)
	accountQuery += "&signature=" + hmacHex(secret, accountQuery)
	cases := []struct{ name, target string }{
		{"klines", "/api/v3/klines?symbol=BTCUSDT&interval=1m&limit=100"},
		{"depth", "/api/v3/depth?symbol=BTCUSDT&limit=100"},
		{"exchangeInfo", "/api/v3/exchangeInfo?permissions=SPOT"},
		{"account", "/api/v3/account?" + accountQuery},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", c.target, nil)
			r.Header.Set("X-MBX-APIKEY", key)
			for b.Loop() {
				if resp := s.handle(r); resp.status != 200 {
					b.Fatalf("%d %s", resp.status, resp.body)
				}
			}
		})
	}
}

// BenchmarkNew measures starting a fake (each conformance subtest starts one).

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		s := New(Options{})
		s.Close()
	}
}
