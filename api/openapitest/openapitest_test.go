package openapitest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/api/openapitest"
	"github.com/exgate/exgate/httpapi"
	"github.com/shopspring/decimal"
)

const orderJSON = `{"id":"o1","asset1":"BTC","asset2":"USDT","status":"PENDING","type":"MARKET","side":"BUY",
"quantity":0.1,"quantityIn":"BTC","fees":null,"feesIn":"USDT","openAt":1700000000000,"closeAt":1700000000000,
"exchange":"sim","clientOrderId":"abc","executedQuantity":null,"quoteQuantity":null,"averagePrice":null,
"price":null,"postOnly":false}`

const withdrawalJSON = `{"id":"w1","amount":1.5,"fees":null,"totalAmount":1.5,"asset":"ETH","status":"pending",
"toAddress":"0xabc","txId":"","timestamp":1,"network":"ETH","exchange":"sim","clientWithdrawalId":"w-1","rawStatus":"0"}`

const problem400 = `{"type":"https://github.com/exgate/exgate/blob/main/docs/errors.md#invalid_parameter",
"title":"Invalid parameter","status":400,"detail":"quantity must be greater than zero","code":"INVALID_PARAMETER",
"param":"quantity","requestId":"r1"}`

func problem(code exgate.Code, extra string) string {
	return fmt.Sprintf(`{"type":"https://github.com/exgate/exgate/blob/main/docs/errors.md#%s","title":"t","status":%d,"detail":"d","code":"%s"%s}`,
		strings.ToLower(string(code)), httpapi.Status(code), code, extra)
}

func TestValidate(t *testing.T) {
	v := openapitest.New(t)
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	problemCT := http.Header{"Content-Type": {"application/problem+json"}}
	retry := http.Header{"Content-Type": {"application/problem+json"}, "Retry-After": {"3"}}
	tests := []struct {
		name    string
		method  string
		target  string
		status  int
		header  http.Header
		body    string
		wantErr string // empty: the answer is valid
	}{
		{"order ok", "POST", "/v1/order/market", 200, jsonCT, orderJSON, ""},
		{"order ok, absolute URL", "POST", "http://gateway.example:9000/v1/order/market", 200, jsonCT, orderJSON, ""},
		{"order ok, charset", "POST", "/v1/order/market", 200, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, orderJSON, ""},
		{"order quantity as string", "POST", "/v1/order/market", 200, jsonCT, strings.Replace(orderJSON, `"quantity":0.1`, `"quantity":"0.1"`, 1), "quantity"},
		{"order missing fees", "POST", "/v1/order/market", 200, jsonCT, strings.Replace(orderJSON, `"fees":null,`, ``, 1), "fees"},
		{"order fees number", "POST", "/v1/order/market", 200, jsonCT, strings.Replace(orderJSON, `"fees":null`, `"fees":0.0001`, 1), ""},
		{"order bad status", "POST", "/v1/order/market", 200, jsonCT, strings.Replace(orderJSON, `"PENDING"`, `"NEW"`, 1), "status"},
		{"order wrong content type", "POST", "/v1/order/market", 200, http.Header{"Content-Type": {"text/plain"}}, orderJSON, "Content-Type"},
		{"order lookup", "GET", "/v1/order?clientOrderId=abc&signature=00", 200, jsonCT, orderJSON, ""},
		{"undocumented status", "POST", "/v1/order/market", 418, problemCT, problem400, "status is not supported"},
		{"problem 400", "POST", "/v1/order/market", 400, problemCT, problem400, ""},
		{"problem with wrong code for status", "POST", "/v1/order/market", 400, problemCT, problem(exgate.CodeRateLimited, ""), "code"},
		{"problem as application/json", "POST", "/v1/order/market", 400, jsonCT, problem400, "Content-Type"},
		{"problem without code", "GET", "/v1/wallet/account-balance", 401, problemCT,
			`{"type":"https://github.com/exgate/exgate/blob/main/docs/errors.md#invalid_api_key","title":"t","status":401,"detail":"d"}`, "code"},
		{"problem unknown code", "GET", "/v1/wallet/account-balance", 401, problemCT, problem(exgate.Code("NOPE"), ""), "code"},
		{"rate limited", "GET", "/v1/wallet/account-balance", 429, retry, problem(exgate.CodeRateLimited, ""), ""},
		{"rate limited without Retry-After", "GET", "/v1/wallet/account-balance", 429, problemCT, problem(exgate.CodeRateLimited, ""), "Retry-After"},
		{"order timeout pending", "POST", "/v1/order/market", 504, problemCT,
			problem(exgate.CodeExchangeTimeout, `,"id":"o1","order":`+orderJSON), ""},
		{"order timeout unrecorded", "POST", "/v1/order/market", 504, problemCT, problem(exgate.CodeExchangeTimeout, ""), ""},
		{"order timeout with a malformed order", "POST", "/v1/order/market", 504, problemCT,
			problem(exgate.CodeExchangeTimeout, `,"id":"o1","order":{"id":"o1"}`), "asset1"},
		{"order timeout with a string status", "POST", "/v1/order/market", 504, problemCT,
			strings.Replace(problem(exgate.CodeExchangeTimeout, `,"id":"o1"`), `"status":504`, `"status":"PENDING"`, 1), "status"},
		{"withdrawal timeout pending", "POST", "/v1/wallet/withdraw", 504, problemCT,
			problem(exgate.CodeExchangeTimeout, `,"id":"w1","withdrawal":`+withdrawalJSON), ""},
		{"klines ok", "GET", "/v1/market/recent-klines?asset1=BTC&asset2=USDT", 200, jsonCT,
			`[{"openTime":0,"openPrice":"1.5","highPrice":"2","lowPrice":"1","closePrice":"1.75","volume":"10","closeTime":59999,"numberOfTrades":null}]`, ""},
		{"klines price as number", "GET", "/v1/market/recent-klines", 200, jsonCT,
			`[{"openTime":0,"openPrice":1.5,"highPrice":"2","lowPrice":"1","closePrice":"1.75","volume":"10","closeTime":59999,"numberOfTrades":3}]`, "openPrice"},
		{"klines price with exponent", "GET", "/v1/market/recent-klines", 200, jsonCT,
			`[{"openTime":0,"openPrice":"1e-8","highPrice":"2","lowPrice":"1","closePrice":"1.75","volume":"10","closeTime":59999,"numberOfTrades":3}]`, "openPrice"},
		{"deposit address without tag", "GET", "/v1/wallet/deposit", 200, jsonCT, `{"asset":"BTC","address":"bc1q","network":"BTC"}`, "tag"},
		{"health", "GET", "/healthz", 200, jsonCT, `{"status":"ok"}`, ""},
		{"health HEAD", "HEAD", "/healthz", 200, jsonCT, ``, ""},
		{"ready 503", "GET", "/readyz", 503, retry, problem(exgate.CodeExchangeUnavailable, ""), ""},
		{"openapi", "GET", "/v1/openapi.yaml", 200, http.Header{"Content-Type": {"application/yaml"}}, string(api.Spec()), ""},
		{"unknown path", "GET", "/v1/nope", 404, problemCT, problem(exgate.CodeNotFound, ""), ""},
		{"unknown path answered 200", "GET", "/v1/nope", 200, jsonCT, `{}`, "want status 404"},
		{"method not allowed", "DELETE", "/v1/order/market", 405, http.Header{"Content-Type": {"application/problem+json"}, "Allow": {"POST"}},
			problem(exgate.CodeMethodNotAllowed, ""), ""},
		{"method not allowed without Allow", "DELETE", "/v1/order/market", 405, problemCT, problem(exgate.CodeMethodNotAllowed, ""), "Allow"},
		{"method not allowed wrong code", "DELETE", "/v1/order/market", 405, http.Header{"Content-Type": {"application/problem+json"}, "Allow": {"POST"}},
			problem(exgate.CodeNotFound, ""), "METHOD_NOT_ALLOWED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.target, nil)
			err := v.Validate(req, tc.status, tc.header, []byte(tc.body))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("Validate accepted the answer, want an error about %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("Validate: %v; want it to mention %q", err, tc.wantErr)
			}
		})
	}
}

// TestGoValues checks that the JSON the root package's types marshal to is
// what the document describes.
func TestGoValues(t *testing.T) {
	v := openapitest.New(t)
	d := decimal.RequireFromString
	trades := uint64(42)
	tag := "12345"
	tests := []struct {
		name, method, path string
		value              any
	}{
		{"order", "POST", "/v1/order/market", exgate.Order{
			ID: "o1", Asset1: "BTC", Asset2: "USDT", Status: exgate.OrderFilled, Type: exgate.OrderTypeMarket,
			Side: exgate.SideSell, Quantity: exgate.NewNumber(d("0.1001")), QuantityIn: "BTC",
			Fees: exgate.NumberPtr(d("0.00001")), FeesIn: "USDT", OpenAt: 1, CloseAt: 2, Exchange: "binance",
			ExecutedQuantity: exgate.NumberPtr(d("0.1001")), QuoteQuantity: exgate.NumberPtr(d("4000.04")),
			AveragePrice: exgate.NumberPtr(d("39960.04")), RawStatus: "FILLED",
		}},
		{"withdrawal", "GET", "/v1/wallet/withdrawal", exgate.Withdrawal{
			ID: "w1", Amount: exgate.NewNumber(d("1.5")), TotalAmount: exgate.NewNumber(d("1.5")), Asset: "ETH",
			Status: exgate.TransferPending, ToAddress: "0xabc", Network: "ETH", Exchange: "sim", RawStatus: "0",
		}},
		{"deposits", "GET", "/v1/wallet/recent-deposits", []exgate.Deposit{{
			ID: "d1", Amount: exgate.NewNumber(d("100")), Asset: "XRP", Status: exgate.TransferCompleted,
			Address: "r9", Tag: "7", Network: "XRP", TxID: "tx", Timestamp: 3, RawStatus: "1",
		}}},
		{"klines", "GET", "/v1/market/recent-klines", []exgate.Kline{{
			OpenTime: 0, OpenPrice: "1", HighPrice: "2", LowPrice: "0.5", ClosePrice: "1.5", Volume: "0",
			CloseTime: 59999, NumberOfTrades: &trades,
		}}},
		{"order book", "GET", "/v1/market/order-book", exgate.OrderBook{
			Bids: []exgate.Level{{Price: "100.5", Quantity: "1"}}, Asks: []exgate.Level{},
		}},
		{"balances", "GET", "/v1/wallet/account-balance", []exgate.Balance{{Asset: "BTC", Available: d("10"), Locked: d("0.25")}}},
		{"deposit address", "GET", "/v1/wallet/deposit", exgate.DepositAddress{Asset: "XRP", Address: "r9", Network: "XRP", Tag: &tag}},
		{"deposit address no tag", "GET", "/v1/wallet/deposit", exgate.DepositAddress{Asset: "BTC", Address: "bc1q", Network: "BTC"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", "application/json")
			_, _ = rec.Write(body)
			v.Check(t, httptest.NewRequest(tc.method, tc.path, nil), rec.Result(), rec.Body.Bytes())
		})
	}
}

// recordingTB notes failures instead of failing the test.
type recordingTB struct {
	testing.TB
	failed bool
}

func (r *recordingTB) Helper()               {}
func (r *recordingTB) Errorf(string, ...any) { r.failed = true }

func TestCheckFails(t *testing.T) {
	v := openapitest.New(t)
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	body := strings.Replace(orderJSON, `"quantity":0.1`, `"quantity":"0.1"`, 1)
	_, _ = rec.WriteString(body)
	tb := &recordingTB{TB: t}
	v.Check(tb, httptest.NewRequest("POST", "/v1/order/market", nil), rec.Result(), []byte(body))
	if !tb.failed {
		t.Errorf("Check accepted an order whose quantity is a string")
	}
}
