package httpapi_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestAnswersSayWhatIsTrue: refusals name the parameter at fault and give
// figures that hold (issue 25: what a new user tripped over).
func TestAnswersSayWhatIsTrue(t *testing.T) {
	g := newGateway(t, options{})
	tests := []struct {
		name       string
		path, body string
		status     int
		code       string
		param      string
		says       []string
		never      []string
	}{
		{
			// The book holds far less than 1e60 USDT: the refusal must
			// not present the book's depth as what the order needs.
			name: "order larger than the book", path: "/v1/order/market",
			body:   `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":1e60,"quantityIn":"asset2"`,
			status: 422, code: "INSUFFICIENT_FUNDS",
			says:  []string{"more than the book holds", "1000000000000000000000000000000000000000000000000000000000000 USDT", "the account has 100000 USDT available"},
			never: []string{"the order needs"},
		},
		{
			name: "limit price out of range", path: "/v1/order/limit",
			body:   `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"0.01","price":"1e60"`,
			status: 400, code: "INVALID_PARAMETER", param: "price",
			says: []string{"price 1000000000000000000000000000000000000000000000000000000000000 is out of range"},
		},
		{
			name: "limit quantity out of range", path: "/v1/order/limit",
			body:   `"asset1":"BTC","asset2":"USDT","side":"SELL","quantity":"1e40","price":"100000"`,
			status: 400, code: "INVALID_PARAMETER", param: "quantity",
			says: []string{"quantity 1" + strings.Repeat("0", 40) + " is out of range", "at most 10000000000 BTC"},
		},
		{
			// 5 USDT buys whole steps of BTC worth a little less than 5.
			name: "quote amount under the notional after the step", path: "/v1/order/market",
			body:   `"asset1":"BTC","asset2":"USDT","side":"BUY","quantity":"5","quantityIn":"asset2"`,
			status: 422, code: "QUANTITY_TOO_SMALL",
			says: []string{"5 USDT buys", "whole steps of 0.00001 BTC", "spends a little less than asked", "minimum notional 5 USDT"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := g.post(tc.path, tc.body)
			p := r.problem(t)
			if r.status != tc.status || p["code"] != tc.code || (tc.param != "" && p["param"] != tc.param) {
				t.Fatalf("%d %s, want %d %s naming %q", r.status, r.body, tc.status, tc.code, tc.param)
			}
			detail, _ := p["detail"].(string)
			for _, s := range tc.says {
				if !strings.Contains(detail, s) {
					t.Errorf("detail %q does not say %q", detail, s)
				}
			}
			for _, s := range tc.never {
				if strings.Contains(detail, s) {
					t.Errorf("detail %q says %q", detail, s)
				}
			}
		})
	}
}

// TestGetWithBody: a GET's parameters go in its query string; one sent
// with a body is refused, rather than served as if the body (a filter, say)
// were absent.
func TestGetWithBody(t *testing.T) {
	g := newGateway(t, options{})
	r := g.do(request{path: "/v1/wallet/recent-deposits", rawBody: []byte(`{"asset":"BTC"}`)})
	if r.status != 400 {
		t.Fatalf("GET with a body: %d, want 400", r.status)
	}
	if p := r.problem(t); p["code"] != "INVALID_PARAMETER" || !strings.Contains(p["detail"].(string), "query string") {
		t.Fatalf("GET with a body: %s, want INVALID_PARAMETER saying the parameters go in the query string", r.body)
	}
	if r := g.do(request{path: "/v1/wallet/recent-deposits", query: "asset=BTC"}); r.status != 200 {
		t.Fatalf("the same GET with a query string: %d %s", r.status, r.body)
	}
}

var averagePriceRe = regexp.MustCompile(`"averagePrice":([0-9.]+)`)

// TestAveragePriceReadsBackAsWritten: an inverted order's average price
// (ETH per BTC, the inverse of the listed ETH/BTC's) is a ratio that does
// not end; it is written with at most 15 significant digits, so that a
// float64 holds exactly the digits written.
func TestAveragePriceReadsBackAsWritten(t *testing.T) {
	g := newGateway(t, options{})
	r := g.post("/v1/order/market", `"asset1":"BTC","asset2":"ETH","side":"BUY","quantity":"0.1","quantityIn":"ETH"`)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	m := averagePriceRe.FindSubmatch(r.body)
	if m == nil {
		t.Fatalf("no averagePrice in %s", r.body)
	}
	text := string(m[1])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		t.Fatal(err)
	}
	if back := strconv.FormatFloat(f, 'f', -1, 64); back != text {
		t.Errorf("averagePrice %s reads back from a float64 as %s", text, back)
	}
	if digits := len(strings.TrimLeft(strings.ReplaceAll(text, ".", ""), "0")); digits > 15 {
		t.Errorf("averagePrice %s has %d significant digits, want at most 15", text, digits)
	}
}
