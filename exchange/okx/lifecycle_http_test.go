package okx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/okx"
	"github.com/exgate/exgate/exchange/okx/okxfake"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// apiEnv is the gateway's HTTP API (SQLite store, journal) in front of the
// okx adapter and its fake, with one client key whose exchange key "okx"
// is the fake's account.
type apiEnv struct {
	*env
	c *client.Client
}

func newAPIEnv(t *testing.T) *apiEnv {
	t.Helper()
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	exchanges := map[string]exgate.Exchange{okx.Name: e.ex}
	jr := journal.New(journal.Options{Store: st, Exchanges: exchanges, Now: time.Now})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{
		Keys: st, Exchanges: exchanges, Ledger: jr,
		Replay: localstate.NewReplayGuard(time.Now), Limiter: localstate.NewLimiter(time.Now),
	}))
	t.Cleanup(srv.Close)
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "client-a", Secret: "secret-a", Label: "a", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	cred := e.cred
	cred.ID, cred.ClientAPIKey = 0, "client-a"
	if _, err := st.AddCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	return &apiEnv{env: e, c: client.New(srv.URL, "client-a", "secret-a", "okx")}
}

// wantProblem checks the problem an API call answered with.
func wantProblem(t *testing.T, err error, status int, code, param string) *client.Error {
	t.Helper()
	ce, ok := errors.AsType[*client.Error](err)
	if !ok || ce.Status != status || ce.Code != code || (param != "" && ce.Param != param) {
		t.Fatalf("error %v, want %d %s naming %q", err, status, code, param)
	}
	return ce
}

func num(n *exgate.Number) string {
	if n == nil {
		return "<nil>"
	}
	return n.String()
}

// lastSent is the last order body the fake received.
func (a *apiEnv) lastSent(t *testing.T) okxfake.SentOrder {
	t.Helper()
	sent := a.srv.SentOrders(apiKey)
	if len(sent) == 0 {
		t.Fatal("no order reached the fake")
	}
	return sent[len(sent)-1]
}

// The fake's BTC-USDT book: asks 60000.5 (0.05 BTC), 60001 (0.15),
// 60001.5 (0.25), ...; bids 59999.5 (0.05), 59999 (0.15), ...; tick 0.1,
// lot 0.00000001, minSz 0.00001.

func TestLifecycleThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t)
	ctx := t.Context()
	btc := func(o client.LimitOrder) client.LimitOrder {
		o.Asset1, o.Asset2 = "BTC", "USDT"
		return o
	}

	// A GTC buy away from the market rests, is listed open, is canceled
	// by the client's id and reads CANCELED in recent.
	o, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "50000", ClientOrderID: "rest-1"}))
	if err != nil || o.Status != exgate.OrderPending || o.Type != exgate.OrderTypeLimit || num(o.Price) != "50000" || o.ClientOrderID != "rest-1" {
		t.Fatalf("resting order = %+v, %v", o, err)
	}
	if s := a.lastSent(t); s.InstID != "BTC-USDT" || s.TdMode != "cash" || s.OrdType != "limit" || s.Px != "50000" || s.Sz != "0.01" || s.ClOrdID != o.ID || s.Side != "buy" {
		t.Fatalf("sent %+v; want a cash limit buy with the gateway's id as clOrdId", s)
	}
	if !a.srv.Locked(apiKey, "USDT").Equal(dec("500")) {
		t.Errorf("frozen USDT %s, want 500", a.srv.Locked(apiKey, "USDT"))
	}
	open, err := a.c.OpenOrders(ctx, "BTC", "USDT")
	if err != nil || len(open) != 1 || open[0].ClientOrderID != "rest-1" || open[0].ID != o.ID {
		t.Fatalf("open = %+v, %v", open, err)
	}
	a.srv.ResetCounters()
	c, err := a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "rest-1"})
	if err != nil || c.Status != exgate.OrderCanceled || c.ID != o.ID {
		t.Fatalf("cancel = %+v, %v", c, err)
	}
	if n := a.srv.Requests("/api/v5/trade/cancel-order"); n != 1 {
		t.Errorf("%d cancels sent, want 1", n)
	}
	if !a.srv.Locked(apiKey, "USDT").IsZero() || !a.srv.Balance(apiKey, "USDT").Equal(dec("200000")) {
		t.Errorf("after the cancel: frozen %s, available %s USDT", a.srv.Locked(apiKey, "USDT"), a.srv.Balance(apiKey, "USDT"))
	}
	recent, err := a.c.RecentOrders(ctx, client.HistoryRequest{Asset1: "BTC", Asset2: "USDT"})
	if err != nil || len(recent) != 1 || recent[0].ClientOrderID != "rest-1" || recent[0].Status != exgate.OrderCanceled {
		t.Fatalf("recent = %+v, %v", recent, err)
	}

	// A crossing GTC buy fills at the asks; its fills add up.
	f, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.1", Price: "60001", ClientOrderID: "cross-1"}))
	if err != nil || f.Status != exgate.OrderFilled || num(f.ExecutedQuantity) != "0.1" {
		t.Fatalf("crossing order = %+v, %v", f, err)
	}
	fills, err := a.c.Fills(ctx, client.HistoryRequest{Asset1: "BTC", Asset2: "USDT"})
	if err != nil || len(fills) != 2 {
		t.Fatalf("fills = %+v, %v; want two levels", fills, err)
	}
	sum := decimal.Zero
	for _, fl := range fills {
		if fl.OrderID != f.ID || fl.ClientOrderID != "cross-1" || fl.Side != exgate.SideBuy || fl.Maker || fl.Price.GreaterThan(dec("60001")) || fl.FeeIn != "BTC" || !fl.Fee.IsPositive() {
			t.Errorf("fill %+v", fl)
		}
		sum = sum.Add(fl.Quantity.Decimal)
	}
	if !sum.Equal(dec("0.1")) {
		t.Errorf("fills add up to %s", sum)
	}

	// IOC (ordType ioc): what crosses fills, the rest expires. Levels up
	// to 60001 hold 0.05 + 0.15 BTC.
	ioc, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.5", Price: "60001", TimeInForce: "IOC", ClientOrderID: "ioc-1"}))
	if err != nil || ioc.Status != exgate.OrderExpired || num(ioc.ExecutedQuantity) != "0.2" || ioc.RawStatus != "canceled/14" || a.lastSent(t).OrdType != "ioc" {
		t.Fatalf("IOC = %+v, %v", ioc, err)
	}
	// FOK that cannot fill completely: nothing trades, EXPIRED.
	before := a.srv.Balance(apiKey, "USDT")
	fok, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.5", Price: "60001", TimeInForce: "FOK", ClientOrderID: "fok-1"}))
	if err != nil || fok.Status != exgate.OrderExpired || num(fok.ExecutedQuantity) != "0" || fok.RawStatus != "canceled/13" || a.lastSent(t).OrdType != "fok" {
		t.Fatalf("FOK = %+v, %v", fok, err)
	}
	if !a.srv.Balance(apiKey, "USDT").Equal(before) {
		t.Errorf("a FOK that found too little moved USDT")
	}
	// FOK that can fill completely: FILLED.
	if fok2, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "SELL", Quantity: "0.05", Price: "59999.5", TimeInForce: "FOK", ClientOrderID: "fok-2"})); err != nil || fok2.Status != exgate.OrderFilled {
		t.Fatalf("fillable FOK = %+v, %v", fok2, err)
	}

	// postOnly that would trade: OKX cancels it (cancelSource 31): 422
	// ORDER_REJECTED, nothing moved.
	before = a.srv.Balance(apiKey, "USDT")
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "60001", PostOnly: true, ClientOrderID: "post-1"}))
	wantProblem(t, err, http.StatusUnprocessableEntity, "ORDER_REJECTED", "")
	if s := a.lastSent(t); s.OrdType != "post_only" {
		t.Errorf("postOnly sent as %+v", s)
	}
	if !a.srv.Balance(apiKey, "USDT").Equal(before) {
		t.Errorf("a refused postOnly moved USDT")
	}
	// postOnly away from the market rests.
	if po, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "59000", PostOnly: true, ClientOrderID: "post-2"})); err != nil || po.Status != exgate.OrderPending || !po.PostOnly {
		t.Fatalf("resting postOnly = %+v, %v", po, err)
	}

	// A price off the tick (0.1 on BTC-USDT) is 400 naming price; under
	// minSz is QUANTITY_TOO_SMALL with the minimum; nothing is sent.
	n := len(a.srv.SentOrders(apiKey))
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "50000.05", ClientOrderID: "tick-1"}))
	wantProblem(t, err, http.StatusBadRequest, "INVALID_PARAMETER", "price")
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.000005", Price: "50000", ClientOrderID: "small-1"}))
	if ce := wantProblem(t, err, http.StatusUnprocessableEntity, "QUANTITY_TOO_SMALL", ""); !strings.Contains(ce.Detail, "0.00001 BTC") {
		t.Errorf("detail %q lacks the minimum", ce.Detail)
	}
	// test: true checks locally and places nothing.
	tst, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.0123456789", Price: "50000", ClientOrderID: "test-1", Test: true}))
	if err != nil || tst.Status != exgate.OrderTest || tst.Quantity.String() != "0.01234567" {
		t.Fatalf("test order = %+v, %v; want TEST with the quantity rounded down to the lot", tst, err)
	}
	if _, err := a.c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "100", QuantityIn: "USDT", ClientOrderID: "test-2", Test: true}); err != nil {
		t.Fatalf("market test order: %v", err)
	}
	if got := len(a.srv.SentOrders(apiKey)); got != n {
		t.Errorf("refused or test orders reached POST /trade/order: %d sent", got-n)
	}

	// A resting order filled on the exchange; its cancel answers FILLED.
	rest, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "SELL", Quantity: "0.02", Price: "70000", ClientOrderID: "fill-1"}))
	if err != nil {
		t.Fatal(err)
	}
	must(t, a.srv.FillOrder(apiKey, rest.ID))
	if c, err := a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "fill-1"}); err != nil || c.Status != exgate.OrderFilled || num(c.ExecutedQuantity) != "0.02" {
		t.Fatalf("cancel of a filled order = %+v, %v", c, err)
	}
	// Unknown ids: 404.
	_, err = a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "nosuch"})
	wantProblem(t, err, http.StatusNotFound, "NOT_FOUND", "")
}

// Market orders in either currency on either side go out natively with
// tgtCcy (no conversion against the book).
func TestMarketOrdersThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t)
	ctx := t.Context()
	tests := []struct {
		name, side, qty, in string
		wantSz, wantTgt     string
		wantIn              string
	}{
		{"quote-quantity buy", "BUY", "100", "USDT", "100", "quote_ccy", "USDT"},
		{"base-quantity sell", "SELL", "0.01", "asset1", "0.01", "base_ccy", "BTC"},
		{"base-quantity buy", "BUY", "0.0123456789", "BTC", "0.01234567", "base_ccy", "BTC"},
		{"quote-quantity sell", "SELL", "250.57", "asset2", "250.5", "quote_ccy", "USDT"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := a.c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: tc.side, Quantity: tc.qty, QuantityIn: tc.in,
				ClientOrderID: "mkt-" + string(rune('a'+i))})
			if err != nil {
				t.Fatal(err)
			}
			s := a.lastSent(t)
			if s.OrdType != "market" || s.TgtCcy != tc.wantTgt || s.Sz != tc.wantSz || s.Side != strings.ToLower(tc.side) || s.ClOrdID != o.ID || !s.BanAmend {
				t.Errorf("sent %+v; want a market %s of %s in %s", s, tc.side, tc.wantSz, tc.wantTgt)
			}
			if o.Status != exgate.OrderFilled || o.QuantityIn != tc.wantIn || o.Quantity.String() != tc.wantSz || !o.ExecutedQuantity.IsPositive() || o.Fees == nil {
				t.Errorf("answer %+v", o)
			}
			got, err := a.c.Order(ctx, client.OrderRef{ClientOrderID: o.ClientOrderID})
			if err != nil || got.ID != o.ID || got.Status != exgate.OrderFilled {
				t.Errorf("GET /v1/order = %+v, %v", got, err)
			}
		})
	}
}

func TestInvertedExampleThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t)
	// The original service's example: BUY BTC/ETH spending 0.1 ETH is a
	// SELL of 0.1 ETH on ETH-BTC.
	o, err := a.c.PlaceMarketOrder(t.Context(), client.MarketOrder{Asset1: "BTC", Asset2: "ETH", Side: "BUY", Quantity: "0.1", QuantityIn: "ETH", ClientOrderID: "inv-1"})
	if err != nil {
		t.Fatal(err)
	}
	if s := a.lastSent(t); s.InstID != "ETH-BTC" || s.Side != "sell" || s.OrdType != "market" || s.Sz != "0.1" || s.TgtCcy != "base_ccy" {
		t.Fatalf("sent %+v; want one market sell of 0.1 ETH on ETH-BTC", s)
	}
	if o.Side != exgate.SideBuy || o.Asset1 != "BTC" || o.Asset2 != "ETH" || o.Status != exgate.OrderFilled || num(o.QuoteQuantity) != "0.1" {
		t.Errorf("answer %+v; want a FILLED BUY of BTC/ETH for 0.1 ETH", o)
	}
	// BUY 0.001 BTC paying in ETH: SELL ETH on ETH-BTC for 0.001 BTC of
	// proceeds, OKX's tgtCcy quote_ccy.
	o, err = a.c.PlaceMarketOrder(t.Context(), client.MarketOrder{Asset1: "BTC", Asset2: "ETH", Side: "BUY", Quantity: "0.001", QuantityIn: "BTC", ClientOrderID: "inv-2"})
	if err != nil {
		t.Fatal(err)
	}
	if s := a.lastSent(t); s.InstID != "ETH-BTC" || s.Side != "sell" || s.Sz != "0.001" || s.TgtCcy != "quote_ccy" {
		t.Fatalf("sent %+v; want a market sell on ETH-BTC for 0.001 BTC", s)
	}
	if o.Side != exgate.SideBuy || o.Asset1 != "BTC" || o.Status != exgate.OrderFilled {
		t.Errorf("answer %+v", o)
	}
}

func TestOutsideOrdersThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t)
	ctx := t.Context()
	id, err := a.srv.PlaceOutside(apiKey, okxfake.OutsideOrder{InstID: "BTC-USDT", Side: "buy", Sz: "0.001", Px: "40000"})
	if err != nil {
		t.Fatal(err)
	}
	for name, get := range map[string]func() ([]exgate.Order, error){
		"open":     func() ([]exgate.Order, error) { return a.c.OpenOrders(ctx, "", "") },
		"open BTC": func() ([]exgate.Order, error) { return a.c.OpenOrders(ctx, "BTC", "USDT") },
		"recent": func() ([]exgate.Order, error) {
			return a.c.RecentOrders(ctx, client.HistoryRequest{Asset1: "BTC", Asset2: "USDT"})
		},
	} {
		os, err := get()
		if err != nil || len(os) != 1 || os[0].ID != id || os[0].ExchangeOrderID != id || os[0].ClientOrderID != "" || os[0].Status != exgate.OrderPending {
			t.Errorf("%s = %+v, %v; want the outside order with OKX's id and no client id", name, os, err)
		}
	}
	// cancel-all cancels it by OKX's ordId.
	done, err := a.c.CancelAll(ctx, "BTC", "USDT")
	if err != nil || len(done) != 1 || done[0].Status != exgate.OrderCanceled || done[0].ID != id {
		t.Fatalf("cancel-all = %+v, %v", done, err)
	}
	if a.srv.OpenOrderCount(apiKey) != 0 {
		t.Errorf("the outside order was not canceled")
	}
}

// The wallet routes: the trading account's balances, deposits in every
// OKX state (rawStatus kept), the XRP address with its tag, a withdrawal
// from the funding account with its fee on top, and one the funding
// account cannot cover.
func TestWalletThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t)
	ctx := t.Context()
	bals, err := a.c.AccountBalance(ctx)
	if err != nil || len(bals) != 5 {
		t.Fatalf("balances = %+v, %v; want the trading account's five", bals, err)
	}
	deps, err := a.c.RecentDeposits(ctx, client.DepositsFilter{})
	if err != nil || len(deps) != 10 {
		t.Fatalf("deposits = %d, %v", len(deps), err)
	}
	want := map[string]exgate.TransferStatus{"0": "pending", "1": "completed", "2": "completed", "8": "pending", "11": "failed",
		"12": "failed", "13": "failed", "14": "failed", "17": "pending"}
	for _, d := range deps {
		if want[d.RawStatus] != d.Status {
			t.Errorf("deposit state %s = %s, want %s", d.RawStatus, d.Status, want[d.RawStatus])
		}
		if d.Asset == "XRP" && (d.Tag != "104223" || d.Address != "rLdinLq5CJood9wdjY9ZCdgycK8KGevkUj" || d.Network != "XRP") {
			t.Errorf("XRP deposit %+v; want its address and tag apart", d)
		}
	}
	addr, err := a.c.DepositAddress(ctx, "XRP", "XRP")
	if err != nil || addr.Tag == nil || *addr.Tag != "104223" || addr.Network != "XRP" {
		t.Fatalf("XRP address = %+v, %v", addr, err)
	}
	if a, err := a.c.DepositAddress(ctx, "USDT", "TRC20"); err != nil || a.Tag != nil || a.Network != "TRX" {
		t.Errorf("USDT on TRC20 = %+v, %v", a, err)
	}

	w, err := a.c.Withdraw(ctx, client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: "100", ClientWithdrawalID: "wd-1"})
	if err != nil || num(w.Fees) != "1" || w.TotalAmount.String() != "101" || w.Amount.String() != "100" || w.ClientWithdrawalID != "wd-1" || w.Status != exgate.TransferCompleted {
		t.Fatalf("withdrawal = %+v, %v; want 100 + the fee 1", w, err)
	}
	if got := a.srv.FundingBalance(apiKey, "USDT"); !got.Equal(dec("4899")) {
		t.Errorf("funding USDT %s after the withdrawal, want 5000 - 101", got)
	}
	if got, err := a.c.Withdrawal(ctx, client.WithdrawalRef{ClientWithdrawalID: "wd-1"}); err != nil || got.ExchangeID != w.ExchangeID {
		t.Errorf("withdrawal read back = %+v, %v", got, err)
	}
	// XRP needs its tag; it travels as address:tag.
	if w, err := a.c.Withdraw(ctx, client.WithdrawRequest{Asset: "XRP", Network: "XRP", Address: "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY", Tag: "123456", Amount: "25"}); err != nil || w.Tag != "123456" || w.ToAddress != "rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY" {
		t.Fatalf("XRP withdrawal = %+v, %v", w, err)
	}
	// The trading account holds 200000 USDT, the funding account 4899:
	// OKX withdraws from funding only.
	_, err = a.c.Withdraw(ctx, client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: "10000"})
	if ce := wantProblem(t, err, http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS", ""); !regexp.MustCompile(`funding wallet`).MatchString(ce.Detail) {
		t.Errorf("detail %q does not say the funding wallet is short", ce.Detail)
	}
	ws, err := a.c.RecentWithdrawals(ctx, "", "")
	if err != nil || len(ws) != 2 || ws[1].ExchangeID != w.ExchangeID || ws[0].Asset != "XRP" {
		t.Errorf("recent withdrawals = %+v, %v", ws, err)
	}
}

// A client id OKX cannot take as it is (dashes, more than 32 characters)
// is sent as its deterministic encoding, and the adapter answers with
// the client's own id, finds and cancels the order by it.
func TestClientIDEncoding(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	for _, id := range []string{"my-order-1", "a_b", strings.Repeat("x", 33), "ABCdef0123456789ABCdef0123456789", "ctx-" + strings.Repeat("9", 32)} {
		o, err := e.ex.PlaceLimitOrder(ctx, e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"),
			Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: id})
		if err != nil || o.ID != id || o.ClientOrderID != id {
			t.Fatalf("%s: placed %+v, %v", id, o, err)
		}
		sent := e.srv.SentOrders(apiKey)
		cl := sent[len(sent)-1].ClOrdID
		if !regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`).MatchString(cl) {
			t.Errorf("%s: sent clOrdId %q", id, cl)
		}
		if (len(id) <= 32 && regexp.MustCompile(`^[A-Za-z0-9]+$`).MatchString(id)) != (cl == id) {
			t.Errorf("%s: sent clOrdId %q; an id OKX takes goes as it is, only others are encoded", id, cl)
		}
		got, err := e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: id})
		if err != nil || got.ID != id || got.ExchangeOrderID != o.ExchangeOrderID {
			t.Errorf("%s: read back %+v, %v", id, got, err)
		}
		if c, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: id}); err != nil || c.Status != exgate.OrderCanceled || c.ID != id {
			t.Errorf("%s: cancel %+v, %v", id, c, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("y", 37), "has space", "dot.ted"} {
		_, err := e.ex.PlaceLimitOrder(ctx, e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"),
			Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: bad})
		wantCode(t, err, exgate.CodeInvalidParameter)
	}
}

// Transfers between the trading (spot) and funding wallets through the
// API: a withdrawal the funding wallet cannot cover succeeds once the
// client moved funds there; the transfer is read back and listed.
func TestTransfersThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t)
	ctx := t.Context()
	call := func(method, path string, params ...string) (int, []byte) {
		t.Helper()
		var ps []client.Param
		for i := 0; i+1 < len(params); i += 2 {
			ps = append(ps, client.Param{Name: params[i], Value: params[i+1]})
		}
		status, body, err := a.c.Do(ctx, method, path, ps)
		if err != nil {
			t.Fatal(err)
		}
		return status, body
	}
	wd := client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: "6000"}
	_, err := a.c.Withdraw(ctx, wd)
	wantProblem(t, err, http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS", "")

	status, body := call(http.MethodPost, "/v1/wallet/transfer", "asset", "USDT", "amount", "1500", "from", "spot", "to", "funding", "clientTransferId", "move-1")
	var tr exgate.Transfer
	if err := json.Unmarshal(body, &tr); status != http.StatusOK || err != nil || tr.Status != exgate.TransferCompleted || tr.ClientTransferID != "move-1" || tr.Exchange != "okx" {
		t.Fatalf("transfer: %d %s", status, body)
	}
	if got := a.srv.FundingBalance(apiKey, "USDT"); !got.Equal(dec("6500")) {
		t.Errorf("funding USDT %s, want 6500", got)
	}
	status, body = call(http.MethodGet, "/v1/wallet/account-balance", "wallet", "funding")
	if status != http.StatusOK || !strings.Contains(string(body), `"asset":"USDT","available":"6500"`) {
		t.Errorf("funding balances: %d %s", status, body)
	}
	if w, err := a.c.Withdraw(ctx, wd); err != nil || w.TotalAmount.String() != "6001" {
		t.Fatalf("withdrawal after the transfer = %+v, %v", w, err)
	}
	status, body = call(http.MethodGet, "/v1/wallet/transfer", "clientTransferId", "move-1")
	if status != http.StatusOK || !strings.Contains(string(body), `"clientTransferId":"move-1"`) {
		t.Errorf("transfer read back: %d %s", status, body)
	}
	status, body = call(http.MethodGet, "/v1/wallet/transfers", "asset", "USDT")
	var list []exgate.Transfer
	if err := json.Unmarshal(body, &list); status != http.StatusOK || err != nil || len(list) != 1 || list[0].ExchangeID != tr.ExchangeID || list[0].From != exgate.WalletSpot {
		t.Errorf("transfers: %d %s", status, body)
	}
}
