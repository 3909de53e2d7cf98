package bybit_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
)

// envelopeOf is an answer with a retCode.
func envelopeOf(code int, msg string) string {
	return `{"retCode":` + itoa(code) + `,"retMsg":"` + msg + `","result":{},"retExtInfo":{},"time":1}`
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// Bybit's retCodes as the gateway answers them (convert.go errorCodes),
// for a read, an order and a withdrawal.
func TestRetCodes(t *testing.T) {
	limit := exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"), Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: "rc-1"}
	wd := exgate.WithdrawalRequest{ClientWithdrawalID: "wrc1", Asset: "USDT", Network: "TRX", Address: addressBook[0].Address, Amount: dec("100")}
	tests := []struct {
		name, path string
		status     int
		body       string
		want       exgate.Code
		mention    string
	}{
		{"bad key (401)", "/v5/account/wallet-balance", 401, envelopeOf(10003, "API key is invalid."), exgate.CodeExchangeAuthFailed, "testnet keys"},
		{"bad signature", "/v5/account/wallet-balance", 200, envelopeOf(10004, "error sign!"), exgate.CodeExchangeAuthFailed, "secret"},
		{"no permission", "/v5/account/wallet-balance", 200, envelopeOf(10005, "Permission denied"), exgate.CodeExchangeAuthFailed, ""},
		{"IP not bound", "/v5/account/wallet-balance", 200, envelopeOf(10010, "Unmatched IP"), exgate.CodeExchangeAuthFailed, "IP"},
		{"not unified", "/v5/account/wallet-balance", 200, envelopeOf(10028, "not supported"), exgate.CodeExchangeAuthFailed, "unified"},
		{"server error on a read", "/v5/account/wallet-balance", 200, envelopeOf(10016, "Internal server error"), exgate.CodeExchangeUnavailable, ""},
		{"5xx on a read", "/v5/account/wallet-balance", 502, "bad gateway", exgate.CodeExchangeUnavailable, ""},
		{"unknown code", "/v5/account/wallet-balance", 200, envelopeOf(99999, "something new"), exgate.CodeExchangeError, "99999"},
		{"not an envelope", "/v5/account/wallet-balance", 200, `{"hello":1}`, exgate.CodeExchangeError, ""},
		{"insufficient", "/v5/order/create", 200, envelopeOf(170131, "Balance insufficient"), exgate.CodeInsufficientFunds, ""},
		{"UTA insufficient", "/v5/order/create", 200, envelopeOf(110007, "ab not enough"), exgate.CodeInsufficientFunds, ""},
		{"order value too small", "/v5/order/create", 200, envelopeOf(170140, "Order value exceeded lower limit."), exgate.CodeQuantityTooSmall, ""},
		{"invalid symbol", "/v5/order/create", 200, envelopeOf(170121, "Invalid symbol."), exgate.CodeUnknownSymbol, ""},
		{"duplicate link id", "/v5/order/create", 200, envelopeOf(170141, "Duplicate clientOrderId."), exgate.CodeOrderRejected, "orderLinkId"},
		{"post only refused at once", "/v5/order/create", 200, envelopeOf(170218, "The LIMIT-MAKER order is rejected"), exgate.CodeOrderRejected, "postOnly"},
		{"server timeout on an order", "/v5/order/create", 200, envelopeOf(10000, "Server Timeout"), exgate.CodeExchangeTimeout, "unknown"},
		{"order creation timeout", "/v5/order/create", 200, envelopeOf(170146, "Order creation timeout"), exgate.CodeExchangeTimeout, "unknown"},
		{"5xx on an order", "/v5/order/create", 500, "oops", exgate.CodeExchangeTimeout, "unknown"},
		{"too many visits", "/v5/order/create", 200, envelopeOf(10006, "Too many visits!"), exgate.CodeExchangeUnavailable, ""},
		{"429", "/v5/order/create", 429, "system busy", exgate.CodeExchangeUnavailable, ""},
		{"address not in the book", "/v5/asset/withdraw/create", 200, envelopeOf(131002, "Withdraw address chain or destination tag are not equal"), exgate.CodeWithdrawalRejected, "address book"},
		{"only from the address book", "/v5/asset/withdraw/create", 200, envelopeOf(131083, "Withdraw only allowed from address book"), exgate.CodeWithdrawalRejected, "address book"},
		{"not whitelisted", "/v5/asset/withdraw/create", 200, envelopeOf(131093, "The withdrawal address is not in the whitelist"), exgate.CodeWithdrawalRejected, "address book"},
		{"funding wallet short", "/v5/asset/withdraw/create", 200, envelopeOf(131001, "the available balance is not sufficient to cover the handling fee"), exgate.CodeInsufficientFunds, "funding wallet"},
		{"tag not allowed", "/v5/asset/withdraw/create", 200, envelopeOf(131081, "Do not input memo/tag,please."), exgate.CodeInvalidParameter, ""},
		{"lost withdrawal", "/v5/asset/withdraw/create", 503, "", exgate.CodeExchangeTimeout, "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			e.srv.SetFault(func(r *http.Request) bybitfake.Fault {
				if r.URL.Path == tc.path {
					return bybitfake.Fault{Status: tc.status, Body: tc.body}
				}
				return bybitfake.Fault{}
			})
			var err error
			switch tc.path {
			case "/v5/order/create":
				_, err = e.ex.PlaceLimitOrder(t.Context(), e.cred, limit)
			case "/v5/asset/withdraw/create":
				_, err = e.ex.Withdraw(t.Context(), e.cred, wd)
			default:
				_, err = e.ex.Balances(t.Context(), e.cred)
			}
			ee := wantCode(t, err, tc.want)
			if !strings.Contains(ee.Detail, tc.mention) {
				t.Errorf("detail %q does not mention %q", ee.Detail, tc.mention)
			}
			if tc.path != "/v5/account/wallet-balance" {
				if n := e.srv.Requests(tc.path); n != 1 {
					t.Errorf("the write was sent %d times", n)
				}
			}
		})
	}
}

// A timestamp Bybit refuses (10002) corrects the clock offset: a read is
// sent again once and succeeds; a write is answered 503 (not executed) and
// succeeds when sent again.
func TestClockResync(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.srv.SetClockOffset(30 * time.Second)
	if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
		t.Fatalf("read after the clock moved: %v", err)
	}
	if n := e.srv.Requests("/v5/market/time"); n != 1 {
		t.Errorf("%d time requests, want 1", n)
	}
	e.srv.SetClockOffset(-40 * time.Second)
	req := exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"), Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: "clk-1"}
	_, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, req)
	if ee := wantCode(t, err, exgate.CodeExchangeUnavailable); !strings.Contains(ee.Detail, "not executed") {
		t.Errorf("detail %q", ee.Detail)
	}
	if got := len(e.srv.SentOrders("bybit-key")); got != 0 {
		t.Fatalf("%d orders reached the book", got)
	}
	if o, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, req); err != nil || o.Status != exgate.OrderPending {
		t.Fatalf("sent again: %+v, %v", o, err)
	}
}

// An order whose answer is lost is EXCHANGE_TIMEOUT, sent once, and found
// by its orderLinkId afterwards; one that never reached Bybit is not found.
func TestOrderAnswerLost(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     bybitfake.Fault
		wantFound bool
	}{
		{"processed, answer lost", bybitfake.Fault{DropAfter: true}, true},
		{"a 502 before processing", bybitfake.Fault{Status: 502}, false},
		{"dropped before", bybitfake.Fault{Drop: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			var n atomic.Int32
			e.srv.SetFault(func(r *http.Request) bybitfake.Fault {
				if r.URL.Path == "/v5/order/create" {
					n.Add(1)
					return tc.fault
				}
				return bybitfake.Fault{}
			})
			req := exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("100"), QuantityIn: exgate.InQuote, ClientOrderID: "lost-1"}
			_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, req)
			wantCode(t, err, exgate.CodeExchangeTimeout)
			if n.Load() != 1 {
				t.Errorf("sent %d times", n.Load())
			}
			o, err := e.ex.QueryOrder(t.Context(), e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: "lost-1"})
			if tc.wantFound {
				if err != nil || o.Status != exgate.OrderFilled || o.ID != "lost-1" {
					t.Errorf("read back %+v, %v", o, err)
				}
			} else if !errors.Is(err, exgate.ErrNotFound) {
				t.Errorf("read back %+v, %v; want not found", o, err)
			}
		})
	}
}

// A cancel's orderLinkId is checked against Bybit's rule before anything
// is sent; a lost cancel answer is EXCHANGE_TIMEOUT, sent once.
func TestCancelChecksAndFaults(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	_, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "not ok!"})
	if ee := wantCode(t, err, exgate.CodeInvalidParameter); ee.Param != "clientOrderId" {
		t.Errorf("param %q", ee.Param)
	}
	_, err = e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: strings.Repeat("a", 37)})
	wantCode(t, err, exgate.CodeInvalidParameter)
	if n := e.srv.Requests("/v5/order/cancel"); n != 0 {
		t.Fatalf("refused cancels reached Bybit: %d", n)
	}
	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"),
		Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: "amb-1"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []bybitfake.Fault{{DropAfter: true}, {Status: 500}, {Status: 200, Body: envelopeOf(170147, "Order cancellation timeout")}} {
		e.srv.ResetCounters()
		e.srv.SetFault(func(r *http.Request) bybitfake.Fault {
			if r.URL.Path == "/v5/order/cancel" {
				return f
			}
			return bybitfake.Fault{}
		})
		_, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "amb-1"})
		wantCode(t, err, exgate.CodeExchangeTimeout)
		if n := e.srv.Requests("/v5/order/cancel"); n != 1 {
			t.Errorf("fault %+v: cancel sent %d times", f, n)
		}
	}
	e.srv.SetFault(nil)
	// The first lost cancel went through: the order reads CANCELED, and a
	// cancel again answers it so.
	if o, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "amb-1"}); err != nil || o.Status != exgate.OrderCanceled {
		t.Errorf("cancel of a canceled order = %+v, %v", o, err)
	}
}
