package okx_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/okx"
	"github.com/exgate/exgate/exchange/okx/okxfake"
)

// The adapter learns OKX's clock before its first signed call, and again
// when OKX refuses a timestamp (50102): a read is then sent once more, a
// write is answered 503 (not executed, send it again) and never resent.
func TestClockResync(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	e.srv.SetClockOffset(2 * time.Minute)
	if _, err := e.ex.Balances(ctx, e.cred); err != nil {
		t.Fatalf("balances with OKX's clock 2 min ahead: %v", err)
	}
	e.srv.SetClockOffset(-3 * time.Minute)
	e.srv.ResetCounters()
	if _, err := e.ex.Balances(ctx, e.cred); err != nil {
		t.Fatalf("balances after OKX's clock moved: %v", err)
	}
	if n := e.srv.Requests("/api/v5/account/balance"); n != 2 {
		t.Errorf("balance asked %d times, want 2 (refused, then after the resync)", n)
	}
	e.srv.SetClockOffset(time.Minute)
	e.srv.ResetCounters()
	_, err := e.ex.PlaceLimitOrder(ctx, e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"),
		Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: "clock1"})
	if xe := wantCode(t, err, exgate.CodeExchangeUnavailable); xe.RetryAfter <= 0 || !strings.Contains(xe.Detail, "not executed") {
		t.Errorf("refused order: %+v", xe)
	}
	if n := e.srv.Requests("/api/v5/trade/order"); n != 1 || e.srv.OpenOrderCount(apiKey) != 0 {
		t.Errorf("order sent %d times, %d open; want once and none", n, e.srv.OpenOrderCount(apiKey))
	}
	if _, err := e.ex.PlaceLimitOrder(ctx, e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"),
		Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: "clock1"}); err != nil {
		t.Errorf("the order sent again: %v", err)
	}
}

// OKX's answers as the gateway's codes, through the fake: rate limits
// (503 with Retry-After, the budget paused), refusals item by item,
// authentication, server failures on reads and writes.
func TestAnswersThroughTheFake(t *testing.T) {
	e := newEnv(t, envOptions{adapter: func(o *okx.Options) { o.Limiter = nil }})
	ctx := t.Context()
	var answer atomic.Pointer[okxfake.Fault]
	e.srv.SetFault(func(r *http.Request) okxfake.Fault {
		if f := answer.Load(); f != nil && r.URL.Path != "/api/v5/public/time" {
			return *f
		}
		return okxfake.Fault{}
	})
	set := func(f okxfake.Fault) { answer.Store(&f) }

	set(okxfake.Fault{Status: 429, Body: `{"msg":"Too Many Requests","code":"50011"}`})
	_, err := e.ex.Balances(ctx, e.cred)
	if xe := wantCode(t, err, exgate.CodeExchangeUnavailable); xe.RetryAfter <= 0 {
		t.Errorf("rate limited without Retry-After: %+v", xe)
	}
	answer.Store(nil)
	e.srv.ResetCounters()
	// The budget is paused for OKX's window: the next call waits or is
	// refused before anything is sent, never hammered.
	start := time.Now()
	if _, err := e.ex.Balances(ctx, e.cred); err == nil && time.Since(start) < time.Second {
		t.Errorf("the next call went out at once after a 50011")
	}

	set(okxfake.Fault{Status: 401, Body: `{"msg":"Invalid Sign","code":"50113"}`})
	_, err = e.ex.RecentDeposits(ctx, e.cred, exgate.DepositFilter{})
	wantCode(t, err, exgate.CodeExchangeAuthFailed)

	answer.Store(nil)
	if _, err := e.ex.Symbols(ctx, e.cred, exgate.SymbolFilter{}); err != nil { // the instruments, loaded before the fault
		t.Fatal(err)
	}
	set(okxfake.Fault{Status: 500, Body: `{"code":500,"data":{},"detailMsg":"","error_code":"500","error_message":"Internal Server Error","msg":"Internal Server Error"}`})
	_, err = e.ex.PlaceMarketOrder(ctx, e.cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideSell, Quantity: dec("0.01"), QuantityIn: exgate.InBase, ClientOrderID: "srv1"})
	wantCode(t, err, exgate.CodeExchangeTimeout)
	answer.Store(nil)

	// Refused by OKX item by item (51008: the trading account is short).
	_, err = e.ex.PlaceMarketOrder(ctx, e.cred, exgate.OrderRequest{Symbol: btcUSDT, Side: exgate.SideSell, Quantity: dec("5"), QuantityIn: exgate.InBase, ClientOrderID: "poor1"})
	if xe := wantCode(t, err, exgate.CodeInsufficientFunds); !strings.Contains(xe.Detail, "51008") {
		t.Errorf("detail %q lacks OKX's code", xe.Detail)
	}
	// A withdrawal the funding account cannot cover is refused before
	// anything is sent.
	e.srv.ResetCounters()
	_, err = e.ex.Withdraw(ctx, e.cred, exgate.WithdrawalRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf",
		Amount: dec("4999.5"), ClientWithdrawalID: "wpoor1"})
	if xe := wantCode(t, err, exgate.CodeInsufficientFunds); !strings.Contains(xe.Detail, "funding wallet") {
		t.Errorf("detail %q does not name the funding wallet", xe.Detail)
	}
	if n := e.srv.Requests("/api/v5/asset/withdrawal"); n != 0 {
		t.Errorf("%d withdrawals sent", n)
	}
}

// Transfers between the trading (spot) and funding wallets, read back by
// client id and listed from the funding bills.
func TestTransfers(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	tr, err := e.ex.Transfer(ctx, e.cred, exgate.TransferRequest{Asset: "USDT", Amount: dec("1000"), From: exgate.WalletSpot, To: exgate.WalletFunding, ClientTransferID: "tr-1"})
	if err != nil || tr.Status != exgate.TransferCompleted || tr.ID != "tr-1" || tr.ExchangeID == "" || tr.From != exgate.WalletSpot {
		t.Fatalf("transfer = %+v, %v", tr, err)
	}
	if !e.srv.FundingBalance(apiKey, "USDT").Equal(dec("6000")) || !e.srv.Balance(apiKey, "USDT").Equal(dec("199000")) {
		t.Errorf("after the transfer: funding %s, trading %s", e.srv.FundingBalance(apiKey, "USDT"), e.srv.Balance(apiKey, "USDT"))
	}
	fb, err := e.ex.WalletBalances(ctx, e.cred, exgate.WalletFunding)
	if err != nil || len(fb) != 3 {
		t.Errorf("funding balances = %+v, %v", fb, err)
	}
	if _, err := e.ex.Transfer(ctx, e.cred, exgate.TransferRequest{Asset: "BTC", Amount: dec("0.5"), From: exgate.WalletFunding, To: exgate.WalletSpot, ClientTransferID: "tr2"}); err != nil {
		t.Fatal(err)
	}
	got, err := e.ex.QueryTransfer(ctx, e.cred, exgate.TransferQuery{ClientTransferID: "tr-1"})
	if err != nil || got.ID != "tr-1" || got.ExchangeID != tr.ExchangeID || got.Status != exgate.TransferCompleted || !got.Amount.Equal(dec("1000")) {
		t.Errorf("read back = %+v, %v", got, err)
	}
	if _, err := e.ex.QueryTransfer(ctx, e.cred, exgate.TransferQuery{ClientTransferID: "nosuch"}); exgate.ErrorCode(err) != exgate.CodeNotFound {
		t.Errorf("unknown transfer: %v", err)
	}
	list, err := e.ex.RecentTransfers(ctx, e.cred, exgate.TransferFilter{})
	if err != nil || len(list) != 2 || list[0].Asset != "BTC" || list[0].From != exgate.WalletFunding || list[1].From != exgate.WalletSpot {
		t.Errorf("recent transfers = %+v, %v", list, err)
	}
	_, err = e.ex.Transfer(ctx, e.cred, exgate.TransferRequest{Asset: "USDT", Amount: dec("1e9"), From: exgate.WalletSpot, To: exgate.WalletFunding, ClientTransferID: "tr3"})
	wantCode(t, err, exgate.CodeInsufficientFunds)
}

// KeyRights reads the key's perm and IP allow-list (exgate doctor).
func TestKeyRights(t *testing.T) {
	for _, tc := range []struct {
		perm, ip                    string
		trade, withdraw, restricted bool
	}{
		{"read_only", "", false, false, false},
		{"read_only,trade", "203.0.113.10", true, false, true},
		{"read_only,trade,withdraw", "", true, true, false},
	} {
		e := newEnv(t, envOptions{account: func(a *okxfake.Account) { a.Perm, a.IP = tc.perm, tc.ip }})
		r, err := e.ex.KeyRights(t.Context(), e.cred)
		if err != nil || r.Read == nil || !*r.Read || *r.Trade != tc.trade || *r.Withdraw != tc.withdraw || *r.IPRestricted != tc.restricted {
			t.Errorf("%s %q: %+v, %v", tc.perm, tc.ip, r, err)
		}
	}
}

// An outage of GET /public/time costs the signed calls one try of it, not
// one per call.
func TestClockEndpointDown(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.srv.SetFault(func(r *http.Request) okxfake.Fault {
		if r.URL.Path == "/api/v5/public/time" {
			return okxfake.Fault{Status: 503, Body: `{"code":"50001","msg":"Service temporarily unavailable","data":[]}`}
		}
		return okxfake.Fault{}
	})
	for range 3 {
		if _, err := e.ex.Balances(t.Context(), e.cred); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.srv.Requests("/api/v5/public/time"); n != 1 {
		t.Errorf("GET /public/time asked %d times for 3 calls; want one try", n)
	}
}
