package binance

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/localstate"
)

func TestSignVectors(t *testing.T) {
	var file struct {
		SecretKey string `json:"secretKey"`
		Vectors   []struct {
			Name          string `json:"name"`
			QueryString   string `json:"queryString"`
			Body          string `json:"body"`
			SignedPayload string `json:"signedPayload"`
			Signature     string `json:"signature"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(readTestdata(t, "signature_vectors.json"), &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) != 3 {
		t.Fatalf("%d vectors, want 3", len(file.Vectors))
	}
	for _, v := range file.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			if got := sign(file.SecretKey, v.QueryString, v.Body); got != v.Signature {
				t.Errorf("sign(query, body) = %s, want %s", got, v.Signature)
			}
			if got := sign(file.SecretKey, v.SignedPayload, ""); got != v.Signature {
				t.Errorf("sign(payload) = %s, want %s", got, v.Signature)
			}
		})
	}
}

// TestParamsEncodeMatchesVector checks that the request builder writes the
// documented example's query string byte for byte.
func TestParamsEncodeMatchesVector(t *testing.T) {
	p := rest.Params{{"symbol", "LTCBTC"}, {"side", "BUY"}, {"type", "LIMIT"}, {"timeInForce", "GTC"}, {"quantity", "1"}, {"price", "0.1"}, {"recvWindow", "5000"}, {"timestamp", "1499827319559"}}
	want := "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559"
	if got := p.Encode(); got != want {
		t.Errorf("encode = %s, want %s", got, want)
	}
	nonASCII := rest.Params{{"symbol", "１２３４５６"}}
	if got, want := nonASCII.Encode(), "symbol=%EF%BC%91%EF%BC%92%EF%BC%93%EF%BC%94%EF%BC%95%EF%BC%96"; got != want {
		t.Errorf("encode non-ASCII = %s, want %s", got, want)
	}
}

// TestSignedRequestShape checks what a signed GET and a signed POST put on
// the wire: the key header, recvWindow and timestamp last before the
// signature, and a signature over exactly the bytes sent.
func TestSignedRequestShape(t *testing.T) {
	type seen struct {
		method, rawQuery, body, key, contentType string
	}
	var got []seen
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request, body string) {
		got = append(got, seen{r.Method, r.URL.RawQuery, body, r.Header.Get("X-MBX-APIKEY"), r.Header.Get("Content-Type")})
		_, _ = w.Write([]byte(`{"id":"x"}`))
	})
	clk := &clock{t: time.UnixMilli(1499827319559)}
	c := &client{Transport: rest.Transport{Exchange: "binance", BaseURL: srv, HTTP: http.DefaultClient, Now: clk.Now, Log: slog.New(slog.DiscardHandler), Limiter: localstate.NewLimiter(time.Now), MaxWait: time.Second, Backoff: time.Millisecond}, recvWindow: 5000}
	cred := &exgate.Credential{Key: testKey, Secret: testSecret}
	ctx := t.Context()
	if _, err := c.do(ctx, request{ep: epQueryOrder, params: rest.Params{{"symbol", "LTCBTC"}, {"origClientOrderId", "abc"}}, cred: cred}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.do(ctx, request{ep: epWithdraw, params: rest.Params{{"coin", "BTC"}, {"amount", "0.1"}}, cred: cred}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	get, post := got[0], got[1]
	wantGet := "symbol=LTCBTC&origClientOrderId=abc&recvWindow=5000&timestamp=1499827319559"
	if want := wantGet + "&signature=" + sign(testSecret, wantGet, ""); get.rawQuery != want || get.body != "" {
		t.Errorf("GET query %q body %q, want query %q", get.rawQuery, get.body, want)
	}
	wantPost := "coin=BTC&amount=0.1&recvWindow=5000&timestamp=1499827319559"
	if want := wantPost + "&signature=" + sign(testSecret, "", wantPost); post.body != want || post.rawQuery != "" {
		t.Errorf("POST body %q query %q, want body %q", post.body, post.rawQuery, want)
	}
	if post.contentType != "application/x-www-form-urlencoded" {
		t.Errorf("POST content type %q", post.contentType)
	}
	for _, s := range got {
		if s.key != testKey {
			t.Errorf("%s X-MBX-APIKEY %q, want the API key", s.method, s.key)
		}
	}
}

// newRecorder starts a test server that hands each request to h with its
// body read.
func newRecorder(t *testing.T, h func(http.ResponseWriter, *http.Request, string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h(w, r, string(b))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestClassify(t *testing.T) {
	read, write := epQueryOrder, epNewOrder
	tests := []struct {
		name  string
		ep    endpoint
		err   error
		want  exgate.Code
		param string
	}{
		{"bad symbol", read, &apiError{status: 400, code: -1121, msg: "Invalid symbol."}, exgate.CodeUnknownSymbol, ""},
		{"bad interval", read, &apiError{status: 400, code: -1120, msg: "Invalid interval."}, exgate.CodeInvalidParameter, "interval"},
		{"insufficient balance", write, &apiError{status: 400, code: -2010, msg: "Account has insufficient balance for requested action."}, exgate.CodeInsufficientFunds, ""},
		{"duplicate order", write, &apiError{status: 400, code: -2010, msg: "Duplicate order sent."}, exgate.CodeOrderRejected, ""},
		{"market closed", write, &apiError{status: 400, code: -2010, msg: "Market is closed."}, exgate.CodeOrderRejected, ""},
		{"min notional", write, &apiError{status: 400, code: -1013, msg: "Filter failure: MIN_NOTIONAL"}, exgate.CodeQuantityTooSmall, ""},
		{"lot size", write, &apiError{status: 400, code: -1013, msg: "Filter failure: LOT_SIZE"}, exgate.CodeOrderRejected, ""},
		{"bad signature", read, &apiError{status: 400, code: -1022, msg: "Signature for this request is not valid."}, exgate.CodeExchangeAuthFailed, ""},
		{"bad key format", read, &apiError{status: 401, code: -2014, msg: "API-key format invalid."}, exgate.CodeExchangeAuthFailed, ""},
		{"rejected key", write, &apiError{status: 401, code: -2015, msg: "Invalid API-key, IP, or permissions for action."}, exgate.CodeExchangeAuthFailed, ""},
		{"unauthorized", read, &apiError{status: 400, code: -1002, msg: "You are not authorized to execute this request."}, exgate.CodeExchangeAuthFailed, ""},
		{"weight 429", read, &apiError{status: 429, code: -1003, msg: "Too much request weight used"}, exgate.CodeExchangeUnavailable, ""},
		{"ban 418", write, &apiError{status: 418, code: -1003, msg: "Way too much request weight used; IP banned"}, exgate.CodeExchangeUnavailable, ""},
		{"orders 429", write, &apiError{status: 429, code: -1015, msg: "Too many new orders"}, exgate.CodeExchangeUnavailable, ""},
		{"server busy write", write, &apiError{status: 503, code: -1008, msg: "Server is currently overloaded"}, exgate.CodeExchangeUnavailable, ""},
		{"shutting down", read, &apiError{status: 400, code: -1016, msg: "This service is no longer available."}, exgate.CodeExchangeUnavailable, ""},
		{"timeout read", read, &apiError{status: 503, code: -1007, msg: "Timeout waiting for response from backend server."}, exgate.CodeExchangeUnavailable, ""},
		{"timeout write", write, &apiError{status: 503, code: -1007, msg: "Timeout waiting for response from backend server."}, exgate.CodeExchangeTimeout, ""},
		{"unexpected resp write", write, &apiError{status: 400, code: -1006, msg: "An unexpected response was received from the message bus."}, exgate.CodeExchangeTimeout, ""},
		{"unknown write", write, &apiError{status: 500, code: -1000, msg: "An unknown error occurred"}, exgate.CodeExchangeTimeout, ""},
		{"disconnected write", write, &apiError{status: 400, code: -1001, msg: "Internal error"}, exgate.CodeExchangeTimeout, ""},
		{"5xx without body write", write, &apiError{status: 502, msg: "Bad Gateway"}, exgate.CodeExchangeTimeout, ""},
		{"5xx without body read", read, &apiError{status: 502, msg: "Bad Gateway"}, exgate.CodeExchangeUnavailable, ""},
		{"waf 403", read, &apiError{status: 403, msg: "<html>blocked</html>"}, exgate.CodeExchangeUnavailable, ""},
		{"timestamp not fixed", write, &apiError{status: 400, code: -1021, msg: "Timestamp for this request is outside of the recvWindow."}, exgate.CodeExchangeError, ""},
		{"withdraw insufficient", epWithdraw, &apiError{status: 400, code: -4026, msg: "User has insufficient balance"}, exgate.CodeInsufficientFunds, ""},
		{"withdraw tag", epWithdraw, &apiError{status: 400, code: -4106, msg: "Tag is not supported"}, exgate.CodeInvalidParameter, "tag"},
		{"withdraw address", epWithdraw, &apiError{status: 400, code: -4007, msg: "Address verification failed."}, exgate.CodeInvalidParameter, "address"},
		{"withdraw minimum", epWithdraw, &apiError{status: 400, code: -4022, msg: "under the minimum"}, exgate.CodeWithdrawalRejected, ""},
		{"unknown code", read, &apiError{status: 400, code: -9999, msg: "Something new."}, exgate.CodeExchangeError, ""},
		{"write lost after sending", write, &rest.TransportError{Exchange: "binance", Err: errors.New("connection reset"), Sent: true}, exgate.CodeExchangeTimeout, ""},
		{"write never sent", write, &rest.TransportError{Exchange: "binance", Err: errors.New("connection refused"), Sent: false}, exgate.CodeExchangeUnavailable, ""},
		{"read deadline", read, &rest.TransportError{Exchange: "binance", Err: context.DeadlineExceeded, Sent: true}, exgate.CodeExchangeTimeout, ""},
		{"read refused", read, &rest.TransportError{Exchange: "binance", Err: errors.New("connection refused")}, exgate.CodeExchangeUnavailable, ""},
	}
	c := &client{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := c.classify(tc.ep, tc.err)
			if e.Code != tc.want || e.Param != tc.param {
				t.Errorf("classify = %s (param %q), want %s (param %q); detail %q", e.Code, e.Param, tc.want, tc.param, e.Detail)
			}
			if e.Detail == "" {
				t.Error("empty detail")
			}
			if ae, ok := tc.err.(*apiError); ok && ae.code != 0 && !strings.Contains(e.Detail, ae.msg) {
				t.Errorf("detail %q does not carry Binance's message %q", e.Detail, ae.msg)
			}
		})
	}
}

// TestErrorsFromFake drives real error answers of the fake through the
// adapter.
func TestErrorsFromFake(t *testing.T) {
	t.Run("bad secret", func(t *testing.T) {
		e := newEnv(t)
		cred := e.cred
		cred.Secret = "wrong"
		_, err := e.ex.Balances(t.Context(), cred)
		if code(err) != exgate.CodeExchangeAuthFailed {
			t.Errorf("Balances with a wrong secret: %v, want EXCHANGE_AUTH_FAILED", err)
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		e := newEnv(t)
		cred := e.cred
		cred.Key = "nosuchkey"
		_, err := e.ex.Balances(t.Context(), cred)
		if code(err) != exgate.CodeExchangeAuthFailed {
			t.Errorf("Balances with an unknown key: %v, want EXCHANGE_AUTH_FAILED", err)
		}
	})
	t.Run("no trade permission", func(t *testing.T) {
		e := newEnv(t)
		e.fake.AddAccount(binancefake.Account{APIKey: "ro", Secret: "ro", NoTrade: true, Balances: map[string]string{"USDT": "1000"}})
		cred := exgate.Credential{ID: 8, Key: "ro", Secret: "ro"}
		_, err := e.ex.PlaceMarketOrder(t.Context(), cred, exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: num(t, "0.001"), QuantityIn: exgate.InBase, ClientOrderID: "noperm1"})
		if code(err) != exgate.CodeExchangeAuthFailed {
			t.Errorf("order without trade permission: %v, want EXCHANGE_AUTH_FAILED", err)
		}
	})
	t.Run("insufficient balance", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideSell, Quantity: num(t, "5"), QuantityIn: exgate.InBase, ClientOrderID: "poor1"})
		if code(err) != exgate.CodeInsufficientFunds {
			t.Errorf("selling more than held: %v, want INSUFFICIENT_FUNDS", err)
		}
	})
	t.Run("not trading", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, exgate.OrderRequest{Symbol: exgate.Symbol{Base: "LTC", Quote: "USDT"}, Side: exgate.SideBuy, Quantity: num(t, "1"), QuantityIn: exgate.InBase, ClientOrderID: "halt1"})
		if code(err) != exgate.CodeOrderRejected || e.fake.Requests("/api/v3/order") != 0 {
			t.Errorf("order on a symbol in BREAK: %v with %d requests, want ORDER_REJECTED and none sent", err, e.fake.Requests("/api/v3/order"))
		}
	})
}

// TestResyncAfterInvalidTimestamp: Binance's clock runs ahead, the first
// signed call is refused with -1021, the adapter reads GET /api/v3/time and
// sends the call once more, which succeeds. For an order this is safe
// because -1021 is checked before the matching engine.
func TestResyncAfterInvalidTimestamp(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		e := newEnv(t)
		e.fake.SetClockOffset(12 * time.Second)
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatalf("Balances: %v", err)
		}
		if got := e.fake.Requests("/api/v3/account"); got != 2 {
			t.Errorf("%d account requests, want 2 (refused, then resent)", got)
		}
		if got := e.fake.Requests("/api/v3/time"); got != 1 {
			t.Errorf("%d time requests, want 1", got)
		}
		if off := e.ex.c.offset.Load(); off < 11000 || off > 13000 {
			t.Errorf("offset %d ms, want about 12000", off)
		}
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil || e.fake.Requests("/api/v3/account") != 3 {
			t.Errorf("next call: %v after %d requests, want it accepted at once", err, e.fake.Requests("/api/v3/account"))
		}
	})
	t.Run("order", func(t *testing.T) {
		e := newEnv(t)
		if _, err := e.ex.markets.get(t.Context()); err != nil {
			t.Fatal(err)
		}
		e.fake.SetClockOffset(-8 * time.Second) // Binance behind: our timestamps are ahead
		req := exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: num(t, "0.01"), QuantityIn: exgate.InBase, ClientOrderID: "resync1"}
		o, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, req)
		if err != nil {
			t.Fatalf("PlaceMarketOrder: %v", err)
		}
		if o.Status != exgate.OrderFilled {
			t.Errorf("status %s, want FILLED", o.Status)
		}
		if got := e.fake.Requests("/api/v3/order"); got != 2 {
			t.Errorf("%d order requests, want 2 (refused with -1021, resent once)", got)
		}
		if got := e.fake.OrdersWithClientID("resync1"); got != 1 {
			t.Errorf("%d orders placed, want exactly 1", got)
		}
	})
	t.Run("only once", func(t *testing.T) {
		e := newEnv(t)
		e.fake.SetFault(func(r *http.Request) binancefake.Fault {
			if r.URL.Path == "/api/v3/account" {
				return binancefake.Fault{Status: 400, Body: `{"code":-1021,"msg":"Timestamp for this request is outside of the recvWindow."}`}
			}
			return binancefake.Fault{}
		})
		_, err := e.ex.Balances(t.Context(), e.cred)
		if code(err) != exgate.CodeExchangeError {
			t.Errorf("persistent -1021: %v, want EXCHANGE_ERROR", err)
		}
		if got := e.fake.Requests("/api/v3/account"); got != 2 {
			t.Errorf("%d account requests, want 2", got)
		}
	})
}

// TestOrderNeverResent: whenever the outcome of an order is unknown the
// adapter answers EXCHANGE_TIMEOUT and sends nothing more.
func TestOrderNeverResent(t *testing.T) {
	tests := []struct {
		name        string
		fault       binancefake.Fault
		ctxTimeout  time.Duration
		wantPlaced  int
		wantCode    exgate.Code
		wantRequest int
	}{
		{"answer lost after processing", binancefake.Fault{DropAfter: true}, 0, 1, exgate.CodeExchangeTimeout, 1},
		{"no answer before the deadline", binancefake.Fault{Delay: 400 * time.Millisecond}, 100 * time.Millisecond, 0, exgate.CodeExchangeTimeout, 1},
		{"connection dropped", binancefake.Fault{Drop: true}, 0, 0, exgate.CodeExchangeTimeout, 1},
		{"5xx", binancefake.Fault{Status: 502, Body: "<html>Bad Gateway</html>"}, 0, 0, exgate.CodeExchangeTimeout, 1},
		{"-1007 timeout", binancefake.Fault{Status: 503, Body: `{"code":-1007,"msg":"Timeout waiting for response from backend server. Send status unknown; execution status unknown."}`}, 0, 0, exgate.CodeExchangeTimeout, 1},
		{"unreadable 200", binancefake.Fault{Status: 200, Body: `{"symbol":"BTCUSDT"`}, 0, 0, exgate.CodeExchangeTimeout, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if _, err := e.ex.markets.get(t.Context()); err != nil {
				t.Fatal(err)
			}
			e.fake.SetFault(func(r *http.Request) binancefake.Fault {
				if r.Method == http.MethodPost && r.URL.Path == "/api/v3/order" {
					return tc.fault
				}
				return binancefake.Fault{}
			})
			ctx := t.Context()
			if tc.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxTimeout)
				defer cancel()
			}
			req := exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: num(t, "0.01"), QuantityIn: exgate.InBase, ClientOrderID: "unknown1"}
			_, err := e.ex.PlaceMarketOrder(ctx, e.cred, req)
			if code(err) != tc.wantCode {
				t.Errorf("PlaceMarketOrder: %v, want %s", err, tc.wantCode)
			}
			if got := e.fake.Requests("/api/v3/order"); got != tc.wantRequest {
				t.Errorf("%d order requests, want %d (never re-sent)", got, tc.wantRequest)
			}
			if got := e.fake.OrdersWithClientID("unknown1"); got != tc.wantPlaced {
				t.Errorf("%d orders placed, want %d", got, tc.wantPlaced)
			}
			// The reconciler finds it again by client id.
			e.fake.SetFault(nil)
			_, qerr := e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcusdt, ClientOrderID: "unknown1"})
			if tc.wantPlaced == 1 && qerr != nil {
				t.Errorf("QueryOrder after the lost answer: %v, want the order", qerr)
			}
			if tc.wantPlaced == 0 && !errors.Is(qerr, exgate.ErrNotFound) {
				t.Errorf("QueryOrder of an order never placed: %v, want ErrNotFound", qerr)
			}
		})
	}
}

func TestWithdrawNeverResent(t *testing.T) {
	e := newEnv(t)
	e.fake.SetFault(func(r *http.Request) binancefake.Fault {
		if r.URL.Path == "/sapi/v1/capital/withdraw/apply" {
			return binancefake.Fault{DropAfter: true}
		}
		return binancefake.Fault{}
	})
	req := exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9", Amount: num(t, "25"), ClientWithdrawalID: "wlost1"}
	_, err := e.ex.Withdraw(t.Context(), e.cred, req)
	if code(err) != exgate.CodeExchangeTimeout {
		t.Errorf("Withdraw with the answer lost: %v, want EXCHANGE_TIMEOUT", err)
	}
	if got := e.fake.Requests("/sapi/v1/capital/withdraw/apply"); got != 1 {
		t.Errorf("%d withdraw requests, want 1", got)
	}
	w, err := e.ex.QueryWithdrawal(t.Context(), e.cred, exgate.WithdrawalQuery{Asset: "USDT", ClientWithdrawalID: "wlost1"})
	if err != nil || w.ID != "wlost1" {
		t.Errorf("QueryWithdrawal: %+v, %v; want the withdrawal", w, err)
	}
}

// TestReadRetries: reads are sent up to three times on 5xx and connection
// errors.
func TestReadRetries(t *testing.T) {
	t.Run("recovers", func(t *testing.T) {
		e := newEnv(t)
		var n atomic.Int32
		e.fake.SetFault(func(r *http.Request) binancefake.Fault {
			if r.URL.Path == "/api/v3/account" && n.Add(1) <= 2 {
				if n.Load() == 1 {
					return binancefake.Fault{Drop: true}
				}
				return binancefake.Fault{Status: 503, Body: "busy"}
			}
			return binancefake.Fault{}
		})
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatalf("Balances: %v", err)
		}
		if got := e.fake.Requests("/api/v3/account"); got != 3 {
			t.Errorf("%d requests, want 3", got)
		}
	})
	t.Run("gives up", func(t *testing.T) {
		e := newEnv(t)
		e.fake.SetFault(func(r *http.Request) binancefake.Fault {
			if r.URL.Path == "/api/v3/account" {
				return binancefake.Fault{Status: 500, Body: `{"code":-1000,"msg":"An unknown error occurred while processing the request."}`}
			}
			return binancefake.Fault{}
		})
		_, err := e.ex.Balances(t.Context(), e.cred)
		if code(err) != exgate.CodeExchangeUnavailable {
			t.Errorf("Balances: %v, want EXCHANGE_UNAVAILABLE", err)
		}
		if got := e.fake.Requests("/api/v3/account"); got != 3 {
			t.Errorf("%d requests, want 3", got)
		}
	})
	t.Run("4xx not retried", func(t *testing.T) {
		e := newEnv(t)
		e.fake.SetFault(func(r *http.Request) binancefake.Fault {
			if r.URL.Path == "/api/v3/account" {
				return binancefake.Fault{Status: 400, Body: `{"code":-1102,"msg":"Mandatory parameter 'timestamp' was not sent."}`}
			}
			return binancefake.Fault{}
		})
		_, err := e.ex.Balances(t.Context(), e.cred)
		if code(err) != exgate.CodeExchangeError || e.fake.Requests("/api/v3/account") != 1 {
			t.Errorf("Balances: %v after %d requests, want EXCHANGE_ERROR after 1", err, e.fake.Requests("/api/v3/account"))
		}
	})
}

func TestPacing(t *testing.T) {
	t.Run("429 pauses the IP budget", func(t *testing.T) {
		e := newEnv(t)
		e.fake.SetFault(func(r *http.Request) binancefake.Fault {
			if r.URL.Path == "/api/v3/account" {
				return binancefake.Fault{Status: 429, Header: map[string]string{"Retry-After": "30"},
					Body: `{"code":-1003,"msg":"Too much request weight used; current limit is 6000 request weight per 1 MINUTE."}`}
			}
			return binancefake.Fault{}
		})
		_, err := e.ex.Balances(t.Context(), e.cred)
		var xe *exgate.Error
		if !errors.As(err, &xe) || xe.Code != exgate.CodeExchangeUnavailable || xe.RetryAfter != 30*time.Second {
			t.Fatalf("Balances: %v, want EXCHANGE_UNAVAILABLE with RetryAfter 30s", err)
		}
		until, _ := e.limiter.PausedUntil(t.Context(), "binance/ip/weight")
		if want := e.clock.Now().Add(30 * time.Second); !until.Equal(want) {
			t.Errorf("paused until %v, want %v", until, want)
		}
		e.fake.SetFault(nil)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = e.ex.OrderBook(ctx, e.cred, exgate.OrderBookRequest{Symbol: btcusdt, Limit: 5})
		if !errors.As(err, &xe) || xe.Code != exgate.CodeExchangeUnavailable || xe.RetryAfter <= 0 {
			t.Errorf("call during the pause: %v, want EXCHANGE_UNAVAILABLE with RetryAfter", err)
		}
		if got := e.fake.Requests("/api/v3/depth"); got != 0 {
			t.Errorf("%d depth requests during the pause, want 0", got)
		}
	})
	t.Run("418 ban", func(t *testing.T) {
		e := newEnv(t)
		e.fake.SetFault(func(r *http.Request) binancefake.Fault {
			return binancefake.Fault{Status: 418, Header: map[string]string{"Retry-After": "120"}, Body: `{"code":-1003,"msg":"Way too much request weight used; IP banned until 1700000000000."}`}
		})
		_, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcusdt, Limit: 5})
		var xe *exgate.Error
		if !errors.As(err, &xe) || xe.Code != exgate.CodeExchangeUnavailable || xe.RetryAfter != 120*time.Second {
			t.Errorf("OrderBook: %v, want EXCHANGE_UNAVAILABLE with RetryAfter 2m", err)
		}
	})
	t.Run("usage header near the limit", func(t *testing.T) {
		var lim *localstate.Limiter
		e := newEnv(t, func(o *Options) { lim = localstate.NewLimiter(o.Now); o.Limiter = lim })
		e.limiter = lim
		e.fake.SetFault(func(r *http.Request) binancefake.Fault {
			if r.URL.Path == "/api/v3/time" {
				return binancefake.Fault{Status: 200, Header: map[string]string{"X-MBX-USED-WEIGHT-1M": "5500"}, Body: `{"serverTime":1}`}
			}
			return binancefake.Fault{}
		})
		if _, err := e.ex.c.do(t.Context(), request{ep: epTime}); err != nil {
			t.Fatal(err)
		}
		until, _ := e.limiter.PausedUntil(t.Context(), "binance/ip/weight")
		now := e.clock.Now()
		if want := now.Truncate(time.Minute).Add(time.Minute); !until.Equal(want) {
			t.Errorf("paused until %v, want the next minute %v", until, want)
		}
	})
	t.Run("budget exhausted before the deadline", func(t *testing.T) {
		lim := &fixedLimiter{wait: 5 * time.Second}
		e := newEnv(t, func(o *Options) { o.Limiter = lim })
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := e.ex.Balances(ctx, e.cred)
		var xe *exgate.Error
		if !errors.As(err, &xe) || xe.Code != exgate.CodeExchangeUnavailable || xe.RetryAfter != 5*time.Second {
			t.Errorf("Balances: %v, want EXCHANGE_UNAVAILABLE with RetryAfter 5s", err)
		}
		if got := e.fake.Requests("/api/v3/account"); got != 0 {
			t.Errorf("%d requests sent, want 0", got)
		}
	})
	t.Run("waits when the wait fits", func(t *testing.T) {
		lim := &fixedLimiter{wait: 20 * time.Millisecond, times: 1}
		e := newEnv(t, func(o *Options) { o.Limiter = lim })
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if _, err := e.ex.Balances(ctx, e.cred); err != nil {
			t.Fatalf("Balances: %v", err)
		}
		if lim.reserves.Load() < 2 {
			t.Errorf("%d reservations, want a retry after the wait", lim.reserves.Load())
		}
	})
	t.Run("weights and keys", func(t *testing.T) {
		lim := &fixedLimiter{}
		e := newEnv(t, func(o *Options) { o.Limiter = lim })
		ctx := t.Context()
		_, _ = e.ex.OrderBook(ctx, e.cred, exgate.OrderBookRequest{Symbol: btcusdt, Limit: 600})
		_, _ = e.ex.PlaceMarketOrder(ctx, e.cred, exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: num(t, "0.01"), QuantityIn: exgate.InBase, ClientOrderID: "paced1"})
		_, _ = e.ex.RecentDeposits(ctx, e.cred, exgate.DepositFilter{})
		want := map[string]int{
			"binance/ip/weight 20":     1, // exchangeInfo
			"binance/ip/weight 50":     1, // depth 1000
			"binance/ip/weight 5":      1, // depth 100 for the notional estimate
			"binance/ip/weight 1":      1, // order
			"binance/orders/7 1":       1,
			"binance/ip/sapi 1":        1, // deposit history
			"binance/ip/weight 2":      0,
			"binance/uid/7 900":        0,
			"binance/ip/sapi-1s 18000": 0,
		}
		got := lim.seen()
		for k, n := range want {
			if got[k] != n {
				t.Errorf("reservations %q: %d, want %d (all: %v)", k, got[k], n, got)
			}
		}
	})
}

// fixedLimiter answers every Reserve with wait (the first times calls, or
// all when times is 0) and records the reservations.
type fixedLimiter struct {
	wait     time.Duration
	times    int32
	reserves atomic.Int32
	mu       sync.Mutex
	log      map[string]int
}

func (l *fixedLimiter) Reserve(_ context.Context, key string, cost int, _ exgate.RateLimit) (time.Duration, error) {
	n := l.reserves.Add(1)
	if l.wait > 0 && (l.times == 0 || n <= l.times) {
		return l.wait, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil {
		l.log = map[string]int{}
	}
	l.log[key+" "+strconv.Itoa(cost)]++
	return 0, nil
}

func (l *fixedLimiter) seen() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.log {
		out[k] = v
	}
	return out
}

func (l *fixedLimiter) Pause(context.Context, string, time.Time) error { return nil }
func (l *fixedLimiter) PausedUntil(context.Context, string) (time.Time, error) {
	return time.Time{}, nil
}
