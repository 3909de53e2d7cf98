package client_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/httpapi"
	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
)

// The test vector of docs/contract.md 2.1.
const (
	vectorSecret    = "ru8nVoVLNuNZ4qASWdmoBSsxzqZmXZFgnj2C5IWPZo0"
	vectorParams    = "asset1=BTC&asset2=ETH&side=BUY&quantity=0.1&quantityIn=ETH"
	vectorSignature = "8978e017b68e2e1ddf5cca2545d6eb987c5f1093c00f52a118b8b7f605b522e5"
	emptySignature  = "49b1556d777c30a907611960e9300ad406f09cefdd820a453306d715c926c2cc"

	testAPIKey      = "pk_test"
	testExchangeKey = "demo"
)

func TestSign(t *testing.T) {
	tests := []struct {
		name, params, want string
	}{
		{"order vector", vectorParams, vectorSignature},
		{"empty string", "", emptySignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := client.Sign(vectorSecret, tc.params); got != tc.want {
				t.Errorf("Sign = %s, want %s", got, tc.want)
			}
		})
	}
}

// seen is one request as the fake gateway received and verified it.
type seen struct {
	method, path, rawQuery string
	body                   []byte
	header                 http.Header
	// params are the signed parameters in the order sent, with values as
	// they enter the parameter string.
	params []client.Param
	// numbers names the body members given as JSON numbers.
	numbers map[string]bool
}

// fakeGateway verifies signatures exactly as docs/contract.md 2.1 says and answers
// with a handler chosen by the test. Every answer is checked against the
// OpenAPI document unless the test says otherwise.
type fakeGateway struct {
	t      *testing.T
	srv    *httptest.Server
	secret string
	v      *openapitest.Validator

	mu       sync.Mutex
	requests []seen
	answer   func(w http.ResponseWriter, r *http.Request, s seen)
	// unchecked turns off the document check for answers the gateway would
	// never give (such as a proxy's HTML page).
	unchecked bool
}

// sharedValidator loads the OpenAPI document once for the whole package.
var sharedValidator = sync.OnceValues(openapitest.NewValidator)

func newFake(t *testing.T) *fakeGateway {
	t.Helper()
	v, err := sharedValidator()
	if err != nil {
		t.Fatal(err)
	}
	g := &fakeGateway{t: t, secret: vectorSecret, v: v}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGateway) client(opts ...client.Option) *client.Client {
	opts = append([]client.Option{client.WithHTTPClient(g.srv.Client())}, opts...)
	return client.New(g.srv.URL, testAPIKey, vectorSecret, testExchangeKey, opts...)
}

func (g *fakeGateway) last() seen {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.requests) == 0 {
		g.t.Fatalf("the fake gateway received no request")
	}
	return g.requests[len(g.requests)-1]
}

func (g *fakeGateway) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := seen{method: r.Method, path: r.URL.Path, rawQuery: r.URL.RawQuery, body: body, header: r.Header.Clone()}
	rec := httptest.NewRecorder()
	if err := g.verify(r, &s); err != nil {
		writeProblem(rec, exgate.CodeInvalidSignature, err.Error(), "")
	} else {
		g.mu.Lock()
		g.requests = append(g.requests, s)
		answer := g.answer
		g.mu.Unlock()
		if answer == nil {
			answer = func(w http.ResponseWriter, _ *http.Request, _ seen) { writeJSON(w, `[]`) }
		}
		answer(rec, r, s)
	}
	if !g.unchecked {
		if err := g.v.Validate(r, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
			g.t.Errorf("the fake's answer is not in the document: %v", err)
		}
	}
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// verify checks the headers and the signature and fills s.params.
func (g *fakeGateway) verify(r *http.Request, s *seen) error {
	if r.Header.Get("X-API-KEY") != testAPIKey {
		return fmt.Errorf("X-API-KEY %q", r.Header.Get("X-API-KEY"))
	}
	if r.Header.Get("X-API-EXCHANGE-KEY") != testExchangeKey {
		return fmt.Errorf("X-API-EXCHANGE-KEY %q", r.Header.Get("X-API-EXCHANGE-KEY"))
	}
	var candidates []string
	var signature string
	if r.Method == http.MethodGet {
		var raw, decoded []string
		for seg := range strings.SplitSeq(r.URL.RawQuery, "&") {
			rawName, rawValue, _ := strings.Cut(seg, "=")
			name, err1 := url.QueryUnescape(rawName)
			value, err2 := url.QueryUnescape(rawValue)
			if err1 != nil || err2 != nil {
				return fmt.Errorf("bad percent-encoding in %q", seg)
			}
			if name == "signature" {
				signature = value
				continue
			}
			raw = append(raw, seg)
			decoded = append(decoded, name+"="+value)
			s.params = append(s.params, client.Param{Name: name, Value: value})
		}
		candidates = []string{strings.Join(raw, "&"), strings.Join(decoded, "&")}
	} else {
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			return fmt.Errorf("content type %q", ct)
		}
		s.numbers = map[string]bool{}
		dec := json.NewDecoder(bytes.NewReader(s.body))
		dec.UseNumber()
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return fmt.Errorf("body is not a JSON object")
		}
		var pairs []string
		for dec.More() {
			nameTok, err := dec.Token()
			if err != nil {
				return err
			}
			valueTok, err := dec.Token()
			if err != nil {
				return err
			}
			name := nameTok.(string)
			var value string
			switch v := valueTok.(type) {
			case string:
				value = v
			case json.Number:
				value = string(v)
				s.numbers[name] = true
			case bool:
				value = fmt.Sprint(v)
			case nil:
				value = "null"
			default:
				return fmt.Errorf("member %q is not a scalar", name)
			}
			if name == "signature" {
				signature = value
				continue
			}
			pairs = append(pairs, name+"="+value)
			s.params = append(s.params, client.Param{Name: name, Value: value})
		}
		candidates = []string{strings.Join(pairs, "&")}
	}
	sig, err := hex.DecodeString(signature)
	if err != nil || len(sig) != sha256.Size {
		return fmt.Errorf("signature %q is not 64 hex characters", signature)
	}
	for _, c := range candidates {
		mac := hmac.New(sha256.New, []byte(g.secret))
		mac.Write([]byte(c))
		if hmac.Equal(mac.Sum(nil), sig) {
			return nil
		}
	}
	return fmt.Errorf("signature does not match %q", candidates)
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

func writeProblem(w http.ResponseWriter, code exgate.Code, detail, param string) {
	p := map[string]any{
		"type":      "https://github.com/exgate/exgate/blob/main/docs/errors.md#" + strings.ToLower(string(code)),
		"title":     "Some title",
		"status":    httpapi.Status(code),
		"detail":    detail,
		"code":      string(code),
		"requestId": "req-1",
	}
	if param != "" {
		p["param"] = param
	}
	b, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	if s := httpapi.Status(code); s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable {
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", "1")
		}
	}
	w.WriteHeader(httpapi.Status(code))
	_, _ = w.Write(b)
}

const orderAnswer = `{"id":"o1","asset1":"BTC","asset2":"ETH","status":"PENDING","type":"MARKET","side":"BUY",
"quantity":0.1,"quantityIn":"ETH","fees":null,"feesIn":"ETH","openAt":1700000000000,"closeAt":1700000000000,
"exchange":"sim","clientOrderId":"c1","executedQuantity":null,"quoteQuantity":null,"averagePrice":null,"price":null,"postOnly":false}`

// pendingOrder is orderAnswer decoded.
var pendingOrder = exgate.Order{
	ID: "o1", Asset1: "BTC", Asset2: "ETH", Status: exgate.OrderPending, Type: "MARKET", Side: exgate.SideBuy,
	Quantity: exgate.NewNumber(decimal.RequireFromString("0.1")), QuantityIn: "ETH", FeesIn: "ETH",
	OpenAt: 1700000000000, CloseAt: 1700000000000, Exchange: "sim", ClientOrderID: "c1",
}

// TestPlaceMarketOrderVector sends the docs/contract.md test vector and checks the
// exact body and the decoded order.
func TestPlaceMarketOrderVector(t *testing.T) {
	g := newFake(t)
	g.answer = func(w http.ResponseWriter, _ *http.Request, _ seen) { writeJSON(w, orderAnswer) }
	// The vector is signed as the spec describes, without a timestamp.
	order, err := g.client(client.WithLegacySigning()).PlaceMarketOrder(t.Context(), client.MarketOrder{
		Asset1: "BTC", Asset2: "ETH", Side: "BUY", Quantity: "0.1", QuantityIn: "ETH",
	})
	if err != nil {
		t.Fatalf("PlaceMarketOrder: %v", err)
	}
	s := g.last()
	wantBody := `{"asset1":"BTC","asset2":"ETH","side":"BUY","quantity":0.1,"quantityIn":"ETH","signature":"` + vectorSignature + `"}`
	if string(s.body) != wantBody {
		t.Errorf("body\n got %s\nwant %s", s.body, wantBody)
	}
	if s.method != http.MethodPost || s.path != "/v1/order/market" || s.rawQuery != "" {
		t.Errorf("request %s %s?%s, want POST /v1/order/market", s.method, s.path, s.rawQuery)
	}
	if order.ID != "o1" || order.Status != exgate.OrderPending || order.Fees != nil || order.ClientOrderID != "c1" {
		t.Errorf("order = %+v", order)
	}
	if !order.Quantity.Equal(decimal.RequireFromString("0.1")) {
		t.Errorf("quantity = %s, want 0.1", order.Quantity)
	}
}

// TestEmptyParameters checks that a request without parameters signs the
// empty string (a key signing the legacy way; any other adds a timestamp).
func TestEmptyParameters(t *testing.T) {
	g := newFake(t)
	g.answer = func(w http.ResponseWriter, _ *http.Request, _ seen) {
		writeJSON(w, `[{"asset":"BTC","available":"10","locked":"0.25"}]`)
	}
	bals, err := g.client(client.WithLegacySigning()).AccountBalance(t.Context())
	if err != nil {
		t.Fatalf("AccountBalance: %v", err)
	}
	if got := g.last().rawQuery; got != "signature="+emptySignature {
		t.Errorf("query = %q, want signature=%s", got, emptySignature)
	}
	if len(bals) != 1 || bals[0].Asset != "BTC" || bals[0].Available.String() != "10" || bals[0].Locked.String() != "0.25" {
		t.Errorf("balances = %+v", bals)
	}
}

// TestDoOrder checks that parameters reach the gateway in the order given,
// with values that need escaping, for both query and body.
func TestDoOrder(t *testing.T) {
	tricky := []client.Param{
		{"limit", "5"},
		{"asset2", "USDT"},
		{"asset1", "BTC"},
		{"note", "a b&c=d/é+%"},
		{"quote", `say "hi" <b>`},
		{"empty", ""},
	}
	tests := []struct {
		name, method string
		params       []client.Param
		wantQuery    string // for GET
	}{
		{"GET", http.MethodGet, tricky,
			"limit=5&asset2=USDT&asset1=BTC&note=a+b%26c%3Dd%2F%C3%A9%2B%25&quote=say+%22hi%22+%3Cb%3E&empty=&signature="},
		{"POST", http.MethodPost, tricky, ""},
		{"DELETE goes in a body", http.MethodDelete, tricky[:2], ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFake(t)
			g.unchecked = true // arbitrary parameters and paths
			status, body, err := g.client(client.WithLegacySigning()).Do(t.Context(), tc.method, "/v1/echo", tc.params)
			if err != nil || status != http.StatusOK || string(body) != "[]" {
				t.Fatalf("Do = %d, %s, %v", status, body, err)
			}
			s := g.last()
			if diff := cmp.Diff(s.params, tc.params); diff != "" {
				t.Errorf("params (-got +want):\n%s", diff)
			}
			if tc.wantQuery != "" && !strings.HasPrefix(s.rawQuery, tc.wantQuery) {
				t.Errorf("query\n got %s\nwant %s…", s.rawQuery, tc.wantQuery)
			}
			if tc.method != http.MethodGet && s.rawQuery != "" {
				t.Errorf("query %q on a %s", s.rawQuery, tc.method)
			}
		})
	}
}

// TestDoNumbers checks which body values are sent as JSON numbers.
func TestDoNumbers(t *testing.T) {
	tests := []struct {
		name, param, value string
		wantNumber         bool
	}{
		{"quantity decimal", "quantity", "0.1", true},
		{"quantity integer", "quantity", "2", true},
		{"quantity exponent", "quantity", "1e-3", true},
		{"amount decimal", "amount", "12.50", true},
		{"quantity leading dot", "quantity", ".5", false},
		{"quantity leading zero", "quantity", "01", false},
		{"quantity plus sign", "quantity", "+1", false},
		{"quantity trailing dot", "quantity", "1.", false},
		{"quantity words", "quantity", "ten", false},
		{"quantity hex", "quantity", "0x10", false},
		{"price decimal", "price", "50000.01", true},
		{"other name", "clientOrderId", "0.1", false},
		{"timestamp", "timestamp", "1700000000000", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFake(t)
			g.unchecked = true
			if _, _, err := g.client(client.WithLegacySigning()).Do(t.Context(), http.MethodPost, "/v1/echo", []client.Param{{tc.param, tc.value}}); err != nil {
				t.Fatalf("Do: %v", err)
			}
			s := g.last()
			if s.numbers[tc.param] != tc.wantNumber {
				t.Errorf("%s sent as number = %v, want %v (body %s)", tc.param, s.numbers[tc.param], tc.wantNumber, s.body)
			}
			if len(s.params) != 1 || s.params[0].Value != tc.value {
				t.Errorf("params = %v", s.params)
			}
		})
	}
}

func TestDoRejectsQueryInPath(t *testing.T) {
	c := client.New("http://127.0.0.1:1", testAPIKey, vectorSecret, testExchangeKey)
	if _, _, err := c.Do(t.Context(), http.MethodGet, "/v1/order?id=1", nil); err == nil {
		t.Errorf("Do accepted a path with a query")
	}
}

func TestTimestamps(t *testing.T) {
	now := time.UnixMilli(1700000000000)
	clock := func() time.Time { return now }
	tests := []struct {
		name       string
		window     time.Duration
		params     []client.Param
		wantParams [][]client.Param // for two calls in a row
	}{
		{"window", 10 * time.Second, []client.Param{{"asset", "BTC"}}, [][]client.Param{
			{{"asset", "BTC"}, {"timestamp", "1700000000000"}, {"recvWindow", "10000"}},
			{{"asset", "BTC"}, {"timestamp", "1700000000001"}, {"recvWindow", "10000"}},
		}},
		{"no window", 0, nil, [][]client.Param{
			{{"timestamp", "1700000000000"}},
			{{"timestamp", "1700000000001"}},
		}},
		{"caller's timestamp", time.Second, []client.Param{{"timestamp", "5"}}, [][]client.Param{
			{{"timestamp", "5"}, {"recvWindow", "1000"}},
			{{"timestamp", "5"}, {"recvWindow", "1000"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFake(t)
			g.unchecked = true
			c := g.client(client.WithTimestamps(clock, tc.window))
			for i, want := range tc.wantParams {
				if _, _, err := c.Do(t.Context(), http.MethodGet, "/v1/wallet/recent-deposits", tc.params); err != nil {
					t.Fatalf("Do: %v", err)
				}
				if diff := cmp.Diff(g.last().params, want); diff != "" {
					t.Errorf("call %d params (-got +want):\n%s", i, diff)
				}
			}
		})
	}
}

// TestTimestampsByDefault checks that every request carries a signed
// timestamp without WithTimestamps (the gateway requires one, docs/contract.md
// 2.1), and WithLegacySigning adds none.
func TestTimestampsByDefault(t *testing.T) {
	tests := []struct {
		name   string
		method string
		opts   []client.Option
		wantTS bool
	}{
		{"POST", http.MethodPost, nil, true},
		{"GET", http.MethodGet, nil, true},
		{"GET, legacy signing", http.MethodGet, []client.Option{client.WithLegacySigning()}, false},
		{"POST, legacy signing", http.MethodPost, []client.Option{client.WithLegacySigning()}, false},
		{"GET with timestamps", http.MethodGet, []client.Option{client.WithTimestamps(nil, 0)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFake(t)
			g.unchecked = true
			if _, _, err := g.client(tc.opts...).Do(t.Context(), tc.method, "/v1/echo", []client.Param{{"asset", "BTC"}}); err != nil {
				t.Fatalf("Do: %v", err)
			}
			ps := g.last().params
			got := len(ps) == 2 && ps[1].Name == "timestamp"
			if got != tc.wantTS || ps[0] != (client.Param{Name: "asset", Value: "BTC"}) {
				t.Fatalf("params %v; want a timestamp: %v", ps, tc.wantTS)
			}
		})
	}
}

// TestTypedMethods checks the request each method sends and that it
// decodes the documented answer.
func TestTypedMethods(t *testing.T) {
	tests := []struct {
		name       string
		call       func(ctx context.Context, c *client.Client) (any, error)
		wantMethod string
		wantPath   string
		wantParams []client.Param
		answer     string
		check      func(t *testing.T, got any)
	}{
		{
			name: "place market order with client id",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "btc", Asset2: "usdt", Side: "sell",
					Quantity: "250", QuantityIn: "asset2", ClientOrderID: "c1"})
			},
			wantMethod: "POST", wantPath: "/v1/order/market",
			wantParams: []client.Param{{"asset1", "btc"}, {"asset2", "usdt"}, {"side", "sell"}, {"quantity", "250"},
				{"quantityIn", "asset2"}, {"clientOrderId", "c1"}},
			answer: orderAnswer,
			check: func(t *testing.T, got any) {
				if o := got.(exgate.Order); o.ClientOrderID != "c1" {
					t.Errorf("order = %+v", o)
				}
			},
		},
		{
			name: "order by client id",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Order(ctx, client.OrderRef{ClientOrderID: "c1"})
			},
			wantMethod: "GET", wantPath: "/v1/order",
			wantParams: []client.Param{{"clientOrderId", "c1"}},
			answer:     orderAnswer,
		},
		{
			name: "order by id",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Order(ctx, client.OrderRef{ID: "o1"})
			},
			wantMethod: "GET", wantPath: "/v1/order",
			wantParams: []client.Param{{"id", "o1"}},
			answer:     orderAnswer,
		},
		{
			name: "klines",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.RecentKlines(ctx, client.KlinesRequest{Asset1: "BTC", Asset2: "USDT", Interval: "1h", Limit: 2})
			},
			wantMethod: "GET", wantPath: "/v1/market/recent-klines",
			wantParams: []client.Param{{"asset1", "BTC"}, {"asset2", "USDT"}, {"interval", "1h"}, {"limit", "2"}},
			answer: `[{"openTime":0,"openPrice":"1","highPrice":"2","lowPrice":"0.5","closePrice":"1.5","volume":"3","closeTime":3599999,"numberOfTrades":7},
{"openTime":3600000,"openPrice":"1.5","highPrice":"1.5","lowPrice":"1.5","closePrice":"1.5","volume":"0","closeTime":7199999,"numberOfTrades":null}]`,
			check: func(t *testing.T, got any) {
				ks := got.([]exgate.Kline)
				if len(ks) != 2 || ks[0].NumberOfTrades == nil || *ks[0].NumberOfTrades != 7 || ks[1].NumberOfTrades != nil || ks[1].ClosePrice != "1.5" {
					t.Errorf("klines = %+v", ks)
				}
			},
		},
		{
			name: "klines defaults",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.RecentKlines(ctx, client.KlinesRequest{Asset1: "BTC", Asset2: "USDT"})
			},
			wantMethod: "GET", wantPath: "/v1/market/recent-klines",
			wantParams: []client.Param{{"asset1", "BTC"}, {"asset2", "USDT"}},
			answer:     `[]`,
		},
		{
			name: "order book",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.OrderBook(ctx, client.OrderBookRequest{Asset1: "ETH", Asset2: "BTC", Limit: 1})
			},
			wantMethod: "GET", wantPath: "/v1/market/order-book",
			wantParams: []client.Param{{"asset1", "ETH"}, {"asset2", "BTC"}, {"limit", "1"}},
			answer:     `{"bids":[{"price":"0.05","quantity":"1.2"}],"asks":[{"price":"0.051","quantity":"3"}]}`,
			check: func(t *testing.T, got any) {
				b := got.(exgate.OrderBook)
				if len(b.Bids) != 1 || b.Asks[0].Price != "0.051" {
					t.Errorf("book = %+v", b)
				}
			},
		},
		{
			name: "recent deposits",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.RecentDeposits(ctx, client.DepositsFilter{Asset: "XRP", Status: "completed"})
			},
			wantMethod: "GET", wantPath: "/v1/wallet/recent-deposits",
			wantParams: []client.Param{{"asset", "XRP"}, {"status", "completed"}},
			answer: `[{"id":"d1","amount":100.5,"asset":"XRP","status":"completed","address":"r9","tag":"7","network":"XRP",
"txId":"tx","timestamp":3,"rawStatus":"1"}]`,
			check: func(t *testing.T, got any) {
				ds := got.([]exgate.Deposit)
				if len(ds) != 1 || ds[0].Amount.String() != "100.5" || ds[0].Status != exgate.TransferCompleted {
					t.Errorf("deposits = %+v", ds)
				}
			},
		},
		{
			name: "deposit address",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.DepositAddress(ctx, "BTC", "BTC")
			},
			wantMethod: "GET", wantPath: "/v1/wallet/deposit",
			wantParams: []client.Param{{"asset", "BTC"}, {"network", "BTC"}},
			answer:     `{"asset":"BTC","address":"bc1qxyz","network":"BTC","tag":null}`,
			check: func(t *testing.T, got any) {
				if a := got.(exgate.DepositAddress); a.Tag != nil || a.Address != "bc1qxyz" {
					t.Errorf("address = %+v", a)
				}
			},
		},
		{
			name: "withdraw",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Withdraw(ctx, client.WithdrawRequest{Asset: "XRP", Network: "XRP", Address: "rAddr", Amount: "25.5",
					Tag: "123", ClientWithdrawalID: "w-1"})
			},
			wantMethod: "POST", wantPath: "/v1/wallet/withdraw",
			wantParams: []client.Param{{"asset", "XRP"}, {"network", "XRP"}, {"address", "rAddr"}, {"amount", "25.5"},
				{"tag", "123"}, {"clientWithdrawalId", "w-1"}},
			answer: `{"id":"w1","amount":25.5,"fees":0.25,"totalAmount":25.75,"asset":"XRP","status":"pending","toAddress":"rAddr",
"txId":"","timestamp":5,"network":"XRP","tag":"123","exchange":"sim","clientWithdrawalId":"w-1","rawStatus":"0"}`,
			check: func(t *testing.T, got any) {
				w := got.(exgate.Withdrawal)
				if w.TotalAmount.String() != "25.75" || w.Fees == nil || w.Fees.String() != "0.25" {
					t.Errorf("withdrawal = %+v", w)
				}
			},
		},
		{
			name: "withdrawal by client id",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Withdrawal(ctx, client.WithdrawalRef{ClientWithdrawalID: "w-1"})
			},
			wantMethod: "GET", wantPath: "/v1/wallet/withdrawal",
			wantParams: []client.Param{{"clientWithdrawalId", "w-1"}},
			answer: `{"id":"w1","amount":25.5,"fees":null,"totalAmount":25.5,"asset":"XRP","status":"completed","toAddress":"rAddr",
"txId":"abc","timestamp":5,"network":"XRP","exchange":"sim","rawStatus":"6"}`,
		},
		{
			name: "transfer",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Transfer(ctx, client.TransferRequest{Asset: "USDT", Amount: "250.5", From: "funding", To: "spot", ClientTransferID: "t-1"})
			},
			wantMethod: "POST", wantPath: "/v1/wallet/transfer",
			wantParams: []client.Param{{"asset", "USDT"}, {"amount", "250.5"}, {"from", "funding"}, {"to", "spot"}, {"clientTransferId", "t-1"}},
			answer: `{"id":"t1","clientTransferId":"t-1","asset":"USDT","amount":250.5,"from":"funding","to":"spot","status":"completed",
"timestamp":5,"exchange":"sim","exchangeId":"9"}`,
			check: func(t *testing.T, got any) {
				tr := got.(exgate.Transfer)
				if tr.Amount.String() != "250.5" || tr.From != exgate.WalletFunding || tr.ClientTransferID != "t-1" {
					t.Errorf("transfer = %+v", tr)
				}
			},
		},
		{
			name: "transfer by client id",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.TransferByRef(ctx, client.TransferRef{ClientTransferID: "t-1"})
			},
			wantMethod: "GET", wantPath: "/v1/wallet/transfer",
			wantParams: []client.Param{{"clientTransferId", "t-1"}},
			answer: `{"id":"t1","clientTransferId":"t-1","asset":"USDT","amount":250.5,"from":"funding","to":"spot","status":"pending",
"timestamp":5,"exchange":"sim"}`,
		},
		{
			name: "recent transfers",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.RecentTransfers(ctx, "BTC")
			},
			wantMethod: "GET", wantPath: "/v1/wallet/transfers",
			wantParams: []client.Param{{"asset", "BTC"}},
			answer:     `[]`,
		},
		{
			name: "funding balances",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.WalletBalance(ctx, "funding")
			},
			wantMethod: "GET", wantPath: "/v1/wallet/account-balance",
			wantParams: []client.Param{{"wallet", "funding"}},
			answer:     `[{"asset":"USDT","available":"250.5","locked":"0"}]`,
		},
		{
			name: "limit order, postOnly",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.PlaceLimitOrder(ctx, client.LimitOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "0.5",
					Price: "50000.5", PostOnly: true, ClientOrderID: "l1"})
			},
			wantMethod: "POST", wantPath: "/v1/order/limit",
			wantParams: []client.Param{{"asset1", "BTC"}, {"asset2", "USDT"}, {"side", "BUY"}, {"quantity", "0.5"},
				{"price", "50000.5"}, {"postOnly", "true"}, {"clientOrderId", "l1"}},
			answer: orderAnswer,
		},
		{
			name: "cancel by client id",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "l1"})
			},
			wantMethod: "POST", wantPath: "/v1/order/cancel",
			wantParams: []client.Param{{"clientOrderId", "l1"}},
			answer:     orderAnswer,
		},
		{
			name: "fills",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Fills(ctx, client.HistoryRequest{Asset1: "BTC", Asset2: "USDT", Limit: 5})
			},
			wantMethod: "GET", wantPath: "/v1/order/fills",
			wantParams: []client.Param{{"asset1", "BTC"}, {"asset2", "USDT"}, {"limit", "5"}},
			answer: `[{"id":"f1","orderId":"o1","asset1":"BTC","asset2":"USDT","side":"BUY","price":50000.5,"quantity":0.1,
"quoteQuantity":5000.05,"fee":0.0001,"feeIn":"BTC","maker":true,"timestamp":7}]`,
			check: func(t *testing.T, got any) {
				if fs := got.([]exgate.Fill); len(fs) != 1 || fs[0].QuoteQuantity.String() != "5000.05" || !fs[0].Maker {
					t.Errorf("fills = %+v", fs)
				}
			},
		},
		{
			name: "symbols",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Symbols(ctx, "", "")
			},
			wantMethod: "GET", wantPath: "/v1/market/symbols",
			answer: `[{"asset1":"BTC","asset2":"USDT","status":"TRADING","quantityStep":"0.00001","priceStep":"0.01",
"minQuantity":"0.00001","minNotional":"5","orderTypes":["MARKET","LIMIT"]}]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFake(t)
			g.answer = func(w http.ResponseWriter, _ *http.Request, _ seen) { writeJSON(w, tc.answer) }
			got, err := tc.call(t.Context(), g.client())
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			s := g.last()
			if s.method != tc.wantMethod || s.path != tc.wantPath {
				t.Errorf("request %s %s, want %s %s", s.method, s.path, tc.wantMethod, tc.wantPath)
			}
			// Every request carries a signed timestamp (docs/contract.md 2.1).
			if n := len(s.params); n == 0 || s.params[n-1].Name != "timestamp" {
				t.Fatalf("%s params %v end without a timestamp", s.method, s.params)
			}
			s.params = s.params[:len(s.params)-1]
			if len(s.params) == 0 {
				s.params = nil
			}
			if diff := cmp.Diff(s.params, tc.wantParams); diff != "" {
				t.Errorf("params (-got +want):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name      string
		unchecked bool
		answer    func(w http.ResponseWriter)
		want      client.Error // Body is not compared
	}{
		{
			name: "parameter error",
			answer: func(w http.ResponseWriter) {
				writeProblem(w, exgate.CodeInvalidParameter, "quantity must be greater than zero", "quantity")
			},
			want: client.Error{Status: 400, Type: "https://github.com/exgate/exgate/blob/main/docs/errors.md#invalid_parameter",
				Title: "Some title", Detail: "quantity must be greater than zero", Code: "INVALID_PARAMETER", Param: "quantity", RequestID: "req-1"},
		},
		{
			name: "rate limited, seconds",
			answer: func(w http.ResponseWriter) {
				w.Header().Set("Retry-After", "7")
				writeProblem(w, exgate.CodeRateLimited, "slow down", "")
			},
			want: client.Error{Status: 429, Type: "https://github.com/exgate/exgate/blob/main/docs/errors.md#rate_limited",
				Title: "Some title", Detail: "slow down", Code: "RATE_LIMITED", RequestID: "req-1", RetryAfter: 7 * time.Second},
		},
		{
			name:      "unavailable, HTTP date",
			unchecked: true, // the document describes Retry-After in seconds
			answer: func(w http.ResponseWriter) {
				w.Header().Set("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))
				writeProblem(w, exgate.CodeExchangeUnavailable, "maintenance", "")
			},
			want: client.Error{Status: 503, Type: "https://github.com/exgate/exgate/blob/main/docs/errors.md#exchange_unavailable",
				Title: "Some title", Detail: "maintenance", Code: "EXCHANGE_UNAVAILABLE", RequestID: "req-1", RetryAfter: 90 * time.Second},
		},
		{
			name:      "unavailable, bad Retry-After",
			unchecked: true,
			answer: func(w http.ResponseWriter) {
				w.Header().Set("Retry-After", "soon")
				writeProblem(w, exgate.CodeExchangeUnavailable, "maintenance", "")
			},
			want: client.Error{Status: 503, Type: "https://github.com/exgate/exgate/blob/main/docs/errors.md#exchange_unavailable",
				Title: "Some title", Detail: "maintenance", Code: "EXCHANGE_UNAVAILABLE", RequestID: "req-1"},
		},
		{
			name: "order timeout being reconciled",
			answer: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusGatewayTimeout)
				_, _ = io.WriteString(w, `{"type":"https://github.com/exgate/exgate/blob/main/docs/errors.md#exchange_timeout",
"title":"Exchange timeout","status":504,"detail":"no answer","code":"EXCHANGE_TIMEOUT","requestId":"r2","id":"o1","order":`+orderAnswer+`}`)
			},
			want: client.Error{Status: 504, Type: "https://github.com/exgate/exgate/blob/main/docs/errors.md#exchange_timeout",
				Title: "Exchange timeout", Detail: "no answer", Code: "EXCHANGE_TIMEOUT", RequestID: "r2", ID: "o1", Order: &pendingOrder},
		},
		{
			name: "transfer timeout being reconciled",
			answer: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusGatewayTimeout)
				_, _ = io.WriteString(w, `{"type":"https://github.com/exgate/exgate/blob/main/docs/errors.md#exchange_timeout",
"title":"Exchange timeout","status":504,"detail":"no answer","code":"EXCHANGE_TIMEOUT","requestId":"r3","id":"t1",
"transfer":{"id":"t1","clientTransferId":"t1","asset":"BTC","amount":0.5,"from":"spot","to":"funding","status":"pending","timestamp":5,"exchange":"binance"}}`)
			},
			want: client.Error{Status: 504, Type: "https://github.com/exgate/exgate/blob/main/docs/errors.md#exchange_timeout",
				Title: "Exchange timeout", Detail: "no answer", Code: "EXCHANGE_TIMEOUT", RequestID: "r3", ID: "t1", Transfer: &exgate.Transfer{
					ID: "t1", ClientTransferID: "t1", Asset: "BTC", Amount: exgate.NewNumber(decimal.RequireFromString("0.5")),
					From: exgate.WalletSpot, To: exgate.WalletFunding, Status: exgate.TransferPending, Timestamp: 5, Exchange: "binance"}},
		},
		{
			name:      "order timeout with a malformed order",
			unchecked: true,
			answer: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusGatewayTimeout)
				_, _ = io.WriteString(w, `{"type":"https://github.com/exgate/exgate/blob/main/docs/errors.md#exchange_timeout",
"title":"Exchange timeout","status":504,"detail":"no answer","code":"EXCHANGE_TIMEOUT","requestId":"r2","id":"o1","order":{"quantity":"x"}}`)
			},
			want: client.Error{Status: 504, Type: "https://github.com/exgate/exgate/blob/main/docs/errors.md#exchange_timeout",
				Title: "Exchange timeout", Detail: "no answer", Code: "EXCHANGE_TIMEOUT", RequestID: "r2", ID: "o1"},
		},
		{
			name:      "not a problem",
			unchecked: true,
			answer: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("X-Request-ID", "proxy-1")
				w.WriteHeader(http.StatusBadGateway)
				_, _ = io.WriteString(w, "<html>bad gateway</html>")
			},
			want: client.Error{Status: 502, Title: "Bad Gateway", RequestID: "proxy-1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFake(t)
			g.unchecked = tc.unchecked
			g.answer = func(w http.ResponseWriter, _ *http.Request, _ seen) { tc.answer(w) }
			c := g.client(client.WithTimestamps(func() time.Time { return now }, 0))
			_, err := c.PlaceMarketOrder(t.Context(), client.MarketOrder{Asset1: "BTC", Asset2: "ETH", Side: "BUY", Quantity: "0.1", QuantityIn: "ETH"})
			e, ok := errors.AsType[*client.Error](err)
			if !ok {
				t.Fatalf("error %v is not a *client.Error", err)
			}
			if len(e.Body) == 0 {
				t.Errorf("Body is empty")
			}
			got := *e
			got.Body = nil
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("error (-got +want):\n%s", diff)
			}
			if e.Error() == "" || !strings.HasPrefix(e.Error(), "exgate: ") {
				t.Errorf("Error() = %q", e.Error())
			}
		})
	}
}

// TestDoReturnsAnswerWithError checks that Do gives the body of a problem
// along with the *Error, for callers that print it (exgate call).
func TestDoReturnsAnswerWithError(t *testing.T) {
	g := newFake(t)
	g.answer = func(w http.ResponseWriter, _ *http.Request, _ seen) {
		writeProblem(w, exgate.CodeUnknownSymbol, "BTC/FOO is not listed", "")
	}
	status, body, err := g.client().Do(t.Context(), http.MethodGet, "/v1/market/order-book",
		[]client.Param{{"asset1", "BTC"}, {"asset2", "FOO"}})
	if status != http.StatusBadRequest || !bytes.Contains(body, []byte("UNKNOWN_SYMBOL")) {
		t.Errorf("Do = %d, %s", status, body)
	}
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Code != "UNKNOWN_SYMBOL" {
		t.Errorf("err = %v, want an UNKNOWN_SYMBOL *client.Error", err)
	}
}

// TestWrongSecret checks that the fake gateway really verifies signatures.
func TestWrongSecret(t *testing.T) {
	g := newFake(t)
	c := client.New(g.srv.URL, testAPIKey, "not-the-secret", testExchangeKey, client.WithHTTPClient(g.srv.Client()))
	_, err := c.AccountBalance(t.Context())
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Code != "INVALID_SIGNATURE" || e.Status != http.StatusUnauthorized {
		t.Errorf("err = %v, want INVALID_SIGNATURE", err)
	}
}

func TestBaseURL(t *testing.T) {
	tests := []struct{ name, suffix string }{
		{"root", ""},
		{"trailing slash", "/"},
		{"with /v1", "/v1"},
		{"with /v1/", "/v1/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFake(t)
			c := client.New(g.srv.URL+tc.suffix, testAPIKey, vectorSecret, testExchangeKey, client.WithHTTPClient(g.srv.Client()))
			if _, err := c.AccountBalance(t.Context()); err != nil {
				t.Fatalf("AccountBalance: %v", err)
			}
			if p := g.last().path; p != "/v1/wallet/account-balance" {
				t.Errorf("path = %s", p)
			}
		})
	}
}

func TestTransportError(t *testing.T) {
	g := newFake(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := g.client().AccountBalance(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if _, ok := errors.AsType[*client.Error](err); ok {
		t.Errorf("a transport failure must not be a *client.Error")
	}
}

func TestDecodeError(t *testing.T) {
	g := newFake(t)
	g.unchecked = true
	g.answer = func(w http.ResponseWriter, _ *http.Request, _ seen) { writeJSON(w, `{"bids":"nope"}`) }
	if _, err := g.client().OrderBook(t.Context(), client.OrderBookRequest{Asset1: "BTC", Asset2: "USDT"}); err == nil {
		t.Errorf("OrderBook decoded a malformed answer")
	}
}

func TestStringHidesSecret(t *testing.T) {
	c := client.New("http://127.0.0.1:8080", testAPIKey, vectorSecret, testExchangeKey)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, vectorSecret) {
			t.Errorf("%q shows the secret", s)
		}
	}
}
