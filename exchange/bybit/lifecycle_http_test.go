package bybit_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// apiEnv is the gateway's HTTP API (SQLite store, journal) in front of the
// bybit adapter and its fake, with one client key whose exchange key
// "bybit" is the fake's account.
type apiEnv struct {
	*env
	c *client.Client
	// URL is the gateway's.
	URL string
}

func newAPIEnv(t *testing.T, o envOptions) *apiEnv {
	t.Helper()
	e := newEnv(t, o)
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	exchanges := map[string]exgate.Exchange{bybit.Name: e.ex}
	jr := journal.New(journal.Options{Store: st, Exchanges: exchanges, Now: time.Now, CallTimeout: o.callTimeout})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{
		Keys: st, Exchanges: exchanges, Ledger: jr,
		Replay: localstate.NewReplayGuard(time.Now), Limiter: localstate.NewLimiter(time.Now),
		ClientLimit:    exgate.RateLimit{Rate: 100000, Period: time.Second, Burst: 100000},
		RequestTimeout: o.callTimeout,
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
	return &apiEnv{env: e, c: client.New(srv.URL, "client-a", "secret-a", "bybit"), URL: srv.URL}
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

// The fake's BTCUSDT book: asks 60000.5 (0.05 BTC), 60001.5 (0.2),
// 60002.5 (0.35), ...; bids 59999.5 (0.05), 59998.5 (0.2), ...;
// basePrecision 0.000001, quotePrecision 0.00000001, tickSize 0.1,
// minOrderAmt 5 USDT; fee 0.1% (a Buy pays it in BTC, a Sell in USDT).

func TestLifecycleThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t, envOptions{})
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
	sent := a.srv.SentOrders("bybit-key")
	if len(sent) != 1 || sent[0].OrderType != "Limit" || sent[0].TimeInForce != "GTC" || sent[0].Price != "50000" || sent[0].Qty != "0.01" ||
		sent[0].Symbol != "BTCUSDT" || sent[0].Category != "spot" || sent[0].OrderLinkID != o.ID {
		t.Fatalf("sent %+v", sent)
	}
	if !a.srv.Locked("bybit-key", "USDT").Equal(dec("500")) {
		t.Errorf("locked USDT %s, want 500", a.srv.Locked("bybit-key", "USDT"))
	}
	open, err := a.c.OpenOrders(ctx, "BTC", "USDT")
	if err != nil || len(open) != 1 || open[0].ClientOrderID != "rest-1" || open[0].ID != o.ID {
		t.Fatalf("open = %+v, %v", open, err)
	}
	if all, err := a.c.OpenOrders(ctx, "", ""); err != nil || len(all) != 1 {
		t.Fatalf("open of every pair = %+v, %v", all, err)
	}
	c, err := a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "rest-1"})
	if err != nil || c.Status != exgate.OrderCanceled || c.ID != o.ID {
		t.Fatalf("cancel = %+v, %v", c, err)
	}
	if !a.srv.Locked("bybit-key", "USDT").IsZero() || !a.srv.Balance("bybit-key", "USDT").Equal(dec("200000")) {
		t.Errorf("after the cancel: locked %s, balance %s USDT", a.srv.Locked("bybit-key", "USDT"), a.srv.Balance("bybit-key", "USDT"))
	}
	recent, err := a.c.RecentOrders(ctx, client.HistoryRequest{Asset1: "BTC", Asset2: "USDT"})
	if err != nil || len(recent) != 1 || recent[0].ClientOrderID != "rest-1" || recent[0].Status != exgate.OrderCanceled {
		t.Fatalf("recent = %+v, %v", recent, err)
	}

	// A crossing GTC buy fills at the asks; its fills add up.
	f, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.1", Price: "60001.5", ClientOrderID: "cross-1"}))
	if err != nil || f.Status != exgate.OrderFilled || num(f.ExecutedQuantity) != "0.1" {
		t.Fatalf("crossing order = %+v, %v", f, err)
	}
	if f.Fees == nil || f.FeesIn != "BTC" || !f.Fees.Equal(dec("0.0001")) {
		t.Errorf("fees %v %s; want 0.0001 BTC (a Buy pays in base)", f.Fees, f.FeesIn)
	}
	fills, err := a.c.Fills(ctx, client.HistoryRequest{Asset1: "BTC", Asset2: "USDT"})
	if err != nil || len(fills) != 2 {
		t.Fatalf("fills = %+v, %v; want two levels", fills, err)
	}
	sum := decimal.Zero
	for _, fl := range fills {
		if fl.OrderID != f.ID || fl.ClientOrderID != "cross-1" || fl.Side != exgate.SideBuy || fl.Maker || fl.Price.GreaterThan(dec("60001.5")) || fl.FeeIn != "BTC" {
			t.Errorf("fill %+v", fl)
		}
		sum = sum.Add(fl.Quantity.Decimal)
	}
	if !sum.Equal(dec("0.1")) {
		t.Errorf("fills add up to %s", sum)
	}

	// IOC: what crosses fills, the rest expires. Levels up to 60001.5
	// hold 0.05 + 0.2 BTC.
	ioc, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.5", Price: "60001.5", TimeInForce: "IOC", ClientOrderID: "ioc-1"}))
	if err != nil || ioc.Status != exgate.OrderExpired || num(ioc.ExecutedQuantity) != "0.25" || ioc.RawStatus != "PartiallyFilledCanceled" {
		t.Fatalf("IOC = %+v, %v", ioc, err)
	}
	// FOK that cannot fill completely: nothing trades, EXPIRED.
	before := a.srv.Balance("bybit-key", "USDT")
	fok, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.5", Price: "60001.5", TimeInForce: "FOK", ClientOrderID: "fok-1"}))
	if err != nil || fok.Status != exgate.OrderExpired || num(fok.ExecutedQuantity) != "0" || fok.RawStatus != "Cancelled/EC_CancelForNoFullFill" {
		t.Fatalf("FOK = %+v, %v", fok, err)
	}
	if !a.srv.Balance("bybit-key", "USDT").Equal(before) {
		t.Errorf("a FOK that found too little moved USDT")
	}
	if got := a.srv.SentOrders("bybit-key"); got[len(got)-1].TimeInForce != "FOK" {
		t.Errorf("FOK sent as %q", got[len(got)-1].TimeInForce)
	}
	// FOK that can fill completely: FILLED.
	if fok2, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "SELL", Quantity: "0.05", Price: "59999.5", TimeInForce: "FOK", ClientOrderID: "fok-2"})); err != nil || fok2.Status != exgate.OrderFilled {
		t.Fatalf("fillable FOK = %+v, %v", fok2, err)
	}

	// postOnly that would trade: Bybit accepts it and cancels it
	// (EC_PostOnlyWillTakeLiquidity): 422 ORDER_REJECTED.
	n := len(a.srv.SentOrders("bybit-key"))
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "60001.5", PostOnly: true, ClientOrderID: "post-1"}))
	wantProblem(t, err, http.StatusUnprocessableEntity, "ORDER_REJECTED", "")
	if got := a.srv.SentOrders("bybit-key"); len(got) != n+1 || got[n].TimeInForce != "PostOnly" {
		t.Errorf("postOnly sent as %+v", got[n:])
	}
	// postOnly away from the market rests.
	if po, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "59000", PostOnly: true, ClientOrderID: "post-2"})); err != nil || po.Status != exgate.OrderPending || !po.PostOnly {
		t.Fatalf("resting postOnly = %+v, %v", po, err)
	}

	// A price off the tick (0.1) is 400 naming price; nothing is sent.
	n = len(a.srv.SentOrders("bybit-key"))
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "50000.05", ClientOrderID: "tick-1"}))
	wantProblem(t, err, http.StatusBadRequest, "INVALID_PARAMETER", "price")
	// Under minOrderAmt (5 USDT): QUANTITY_TOO_SMALL with the limit.
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.00002", Price: "100", ClientOrderID: "small-1"}))
	if ce := wantProblem(t, err, http.StatusUnprocessableEntity, "QUANTITY_TOO_SMALL", ""); !strings.Contains(ce.Detail, "5 USDT") {
		t.Errorf("detail %q lacks the minimum", ce.Detail)
	}
	_, err = a.c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "4", QuantityIn: "USDT", ClientOrderID: "small-2"})
	wantProblem(t, err, http.StatusUnprocessableEntity, "QUANTITY_TOO_SMALL", "")
	if got := len(a.srv.SentOrders("bybit-key")); got != n {
		t.Errorf("refused orders reached the fake: %d sent", got-n)
	}

	// test: true checks and places nothing.
	tst, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.0123456789", Price: "50000", ClientOrderID: "test-1", Test: true}))
	if err != nil || tst.Status != exgate.OrderTest || tst.Quantity.String() != "0.012345" {
		t.Fatalf("test order = %+v, %v; want TEST with the quantity rounded down to 6 decimals", tst, err)
	}
	if _, err := a.c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: "BUY", Quantity: "100", QuantityIn: "USDT", ClientOrderID: "test-2", Test: true}); err != nil {
		t.Fatalf("market test order: %v", err)
	}
	if got := len(a.srv.SentOrders("bybit-key")); got != n {
		t.Errorf("test orders reached POST /v5/order/create: %d sent", got-n)
	}

	// A resting order filled on the exchange; its cancel answers FILLED.
	rest, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "SELL", Quantity: "0.02", Price: "70000", ClientOrderID: "fill-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.srv.FillOrder("bybit-key", rest.ID); err != nil {
		t.Fatal(err)
	}
	if c, err := a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "fill-1"}); err != nil || c.Status != exgate.OrderFilled || num(c.ExecutedQuantity) != "0.02" {
		t.Fatalf("cancel of a filled order = %+v, %v", c, err)
	}
	// Unknown ids: 404.
	_, err = a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "nosuch"})
	wantProblem(t, err, http.StatusNotFound, "NOT_FOUND", "")
}

// Market orders in either asset on either side go to Bybit natively with
// marketUnit: a quote-quantity market buy (marketUnit quoteCoin, Bybit's
// own default for a Buy, sent explicitly) and a base-quantity market sell.
func TestMarketOrdersThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t, envOptions{})
	ctx := t.Context()
	tests := []struct {
		name                         string
		side, qty, in                string
		wantSide, wantQty, wantUnit  string
		wantExecuted, wantQuote      string
		wantQuantityIn, wantFeeAsset string
	}{
		// 100 USDT at 60000.5: 0.001666 BTC (rounded down to the step).
		{"quote-quantity buy", "BUY", "100", "USDT", "Buy", "100", "quoteCoin", "0.001666", "99.960833", "USDT", "BTC"},
		{"base-quantity sell", "SELL", "0.01", "BTC", "Sell", "0.01", "baseCoin", "0.01", "599.995", "BTC", "USDT"},
		{"base-quantity buy", "BUY", "0.01", "asset1", "Buy", "0.01", "baseCoin", "0.01", "600.005", "BTC", "BTC"},
		{"quote-quantity sell", "SELL", "100", "asset2", "Sell", "100", "quoteCoin", "0.001666", "99.959167", "USDT", "USDT"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := a.c.PlaceMarketOrder(ctx, client.MarketOrder{Asset1: "BTC", Asset2: "USDT", Side: tc.side, Quantity: tc.qty, QuantityIn: tc.in})
			if err != nil {
				t.Fatal(err)
			}
			sent := a.srv.SentOrders("bybit-key")
			if len(sent) != i+1 {
				t.Fatalf("%d orders sent", len(sent))
			}
			s := sent[i]
			if s.OrderType != "Market" || s.Side != tc.wantSide || s.Qty != tc.wantQty || s.MarketUnit != tc.wantUnit || s.OrderLinkID != o.ID {
				t.Errorf("sent %+v", s)
			}
			if o.Status != exgate.OrderFilled || o.QuantityIn != tc.wantQuantityIn || num(o.ExecutedQuantity) != tc.wantExecuted ||
				num(o.QuoteQuantity) != tc.wantQuote || o.FeesIn != tc.wantFeeAsset {
				t.Errorf("order %+v (executed %s, quote %s)", o, num(o.ExecutedQuantity), num(o.QuoteQuantity))
			}
			got, err := a.c.Order(ctx, client.OrderRef{ID: o.ID})
			if err != nil || got.Status != exgate.OrderFilled || got.ExchangeOrderID != o.ExchangeOrderID {
				t.Errorf("read back %+v, %v", got, err)
			}
		})
	}
}

func TestInvertedExampleThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t, envOptions{})
	// The original service's example: BUY BTC/ETH spending 0.1 ETH is a
	// SELL of 0.1 ETH on ETHBTC, in the base coin.
	o, err := a.c.PlaceMarketOrder(t.Context(), client.MarketOrder{Asset1: "BTC", Asset2: "ETH", Side: "BUY", Quantity: "0.1", QuantityIn: "ETH", ClientOrderID: "inv-1"})
	if err != nil {
		t.Fatal(err)
	}
	sent := a.srv.SentOrders("bybit-key")
	if len(sent) != 1 || sent[0].Symbol != "ETHBTC" || sent[0].Side != "Sell" || sent[0].OrderType != "Market" || sent[0].Qty != "0.1" || sent[0].MarketUnit != "baseCoin" {
		t.Fatalf("sent %+v; want one market sell of 0.1 ETH on ETHBTC", sent)
	}
	if o.Side != exgate.SideBuy || o.Asset1 != "BTC" || o.Asset2 != "ETH" || o.Status != exgate.OrderFilled || num(o.QuoteQuantity) != "0.1" {
		t.Errorf("answer %+v; want a FILLED BUY of BTC/ETH for 0.1 ETH", o)
	}
	// With the quantity in BTC: a SELL of ETHBTC for that much BTC.
	if _, err := a.c.PlaceMarketOrder(t.Context(), client.MarketOrder{Asset1: "BTC", Asset2: "ETH", Side: "BUY", Quantity: "0.001", QuantityIn: "BTC", ClientOrderID: "inv-2"}); err != nil {
		t.Fatal(err)
	}
	if s := a.srv.SentOrders("bybit-key")[1]; s.Side != "Sell" || s.MarketUnit != "quoteCoin" || s.Qty != "0.001" {
		t.Errorf("sent %+v; want a market sell of ETHBTC for 0.001 BTC (quoteCoin)", s)
	}
}

// Every read route of the spec through the API against the fake.
func TestReadRoutesThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t, envOptions{})
	ctx := t.Context()
	ks, err := a.c.RecentKlines(ctx, client.KlinesRequest{Asset1: "BTC", Asset2: "USDT", Interval: "8h", Limit: 5})
	if err != nil || len(ks) != 5 || ks[4].OpenTime <= ks[0].OpenTime {
		t.Fatalf("8h klines = %+v, %v", ks, err)
	}
	book, err := a.c.OrderBook(ctx, client.OrderBookRequest{Asset1: "BTC", Asset2: "USDT", Limit: 5})
	if err != nil || len(book.Bids) != 5 || book.Asks[0].Price != "60000.5" || book.Bids[0].Price != "59999.5" {
		t.Fatalf("book = %+v, %v", book, err)
	}
	bals, err := a.c.AccountBalance(ctx)
	if err != nil || len(bals) != 5 {
		t.Fatalf("balances = %+v, %v", bals, err)
	}
	deps, err := a.c.RecentDeposits(ctx, client.DepositsFilter{})
	if err != nil || len(deps) != 7 {
		t.Fatalf("deposits = %+v, %v; want the 7 of the last 30 days", deps, err)
	}
	addr, err := a.c.DepositAddress(ctx, "XRP", "XRP")
	if err != nil || addr.Tag == nil || *addr.Tag != "700123" {
		t.Fatalf("address = %+v, %v", addr, err)
	}
	syms, err := a.c.Symbols(ctx, "BTC", "USDT")
	if err != nil || len(syms) != 1 || syms[0].MinNotional != "5" || syms[0].QuantityStep != "0.000001" || syms[0].PriceStep != "0.1" {
		t.Fatalf("symbols = %+v, %v", syms, err)
	}
	// A withdrawal: amount arrives, the fee comes on top from the
	// funding wallet.
	w, err := a.c.Withdraw(ctx, client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: "100"})
	if err != nil || !w.Amount.Equal(dec("100")) || num(w.Fees) != "1" || !w.TotalAmount.Equal(dec("101")) {
		t.Fatalf("withdrawal = %+v, %v", w, err)
	}
	if got := a.srv.FundBalance("bybit-key", "USDT"); !got.Equal(dec("4899")) {
		t.Errorf("funding USDT %s, want 5000 - 101", got)
	}
	ws, err := a.c.RecentWithdrawals(ctx, "USDT", "")
	if err != nil || len(ws) != 1 || ws[0].ExchangeID != w.ExchangeID {
		t.Fatalf("recent withdrawals = %+v, %v", ws, err)
	}
	// An address outside the account's address book: Bybit refuses it;
	// the problem says why.
	_, err = a.c.Withdraw(ctx, client.WithdrawRequest{Asset: "USDT", Network: "TRX", Address: "TNotInTheBook0000000000000000000000", Amount: "100"})
	if ce := wantProblem(t, err, http.StatusUnprocessableEntity, "WITHDRAWAL_REJECTED", ""); !strings.Contains(ce.Detail, "address book") {
		t.Errorf("detail %q does not explain the address book", ce.Detail)
	}
}
