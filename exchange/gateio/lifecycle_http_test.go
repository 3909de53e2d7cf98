package gateio_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/sqlite"
)

// apiEnv is the gateway's HTTP API (SQLite store, journal) in front of the
// gateio adapter and its fake, with one client key whose exchange key
// "gate" is the fake's account.
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
	exchanges := map[string]exgate.Exchange{gateio.Name: e.ex}
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
	return &apiEnv{env: e, c: client.New(srv.URL, "client-a", "secret-a", "gate")}
}

// wantProblem checks the problem an API call answered with.
func wantProblem(t *testing.T, err error, status int, code, param string) {
	t.Helper()
	ce, ok := errors.AsType[*client.Error](err)
	if !ok || ce.Status != status || ce.Code != code || (param != "" && ce.Param != param) {
		t.Fatalf("error %v, want %d %s naming %q", err, status, code, param)
	}
}

func num(n *exgate.Number) string {
	if n == nil {
		return "<nil>"
	}
	return n.String()
}

// The fake's BTC_USDT book: asks 60000.5 (0.05 BTC), 60001 (0.15), ...;
// bids 59999.5 (0.05), 59999 (0.15), ...; price precision 1, amount
// precision 6, minimums 0.00001 BTC and 3 USDT.

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
	sent := a.srv.SentOrders("gate-key")
	if len(sent) != 1 || sent[0].Type != "limit" || sent[0].TimeInForce != "gtc" || sent[0].Price != "50000" || sent[0].Amount != "0.01" || sent[0].CurrencyPair != "BTC_USDT" {
		t.Fatalf("sent %+v", sent)
	}
	if !a.srv.Locked("gate-key", "USDT").Equal(dec("500")) {
		t.Errorf("locked USDT %s, want 500", a.srv.Locked("gate-key", "USDT"))
	}
	open, err := a.c.OpenOrders(ctx, "BTC", "USDT")
	if err != nil || len(open) != 1 || open[0].ClientOrderID != "rest-1" || open[0].ID != o.ID {
		t.Fatalf("open = %+v, %v", open, err)
	}
	var deletes []string
	a.srv.SetFault(func(r *http.Request) gateiofake.Fault {
		if r.Method == http.MethodDelete {
			deletes = append(deletes, r.URL.Path+"?"+r.URL.RawQuery)
		}
		return gateiofake.Fault{}
	})
	c, err := a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "rest-1"})
	if err != nil || c.Status != exgate.OrderCanceled || c.ID != o.ID {
		t.Fatalf("cancel = %+v, %v", c, err)
	}
	a.srv.SetFault(nil)
	if len(deletes) != 1 || deletes[0] != "/api/v4/spot/orders/t-"+o.ID+"?currency_pair=BTC_USDT" {
		t.Errorf("cancels sent: %q; want one DELETE by the order's text", deletes)
	}
	if !a.srv.Locked("gate-key", "USDT").IsZero() || !a.srv.Balance("gate-key", "USDT").Equal(dec("200000")) {
		t.Errorf("after the cancel: locked %s, available %s USDT", a.srv.Locked("gate-key", "USDT"), a.srv.Balance("gate-key", "USDT"))
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
		if fl.OrderID != f.ID || fl.ClientOrderID != "cross-1" || fl.Side != exgate.SideBuy || fl.Maker || fl.Price.GreaterThan(dec("60001")) {
			t.Errorf("fill %+v", fl)
		}
		sum = sum.Add(fl.Quantity.Decimal)
	}
	if !sum.Equal(dec("0.1")) {
		t.Errorf("fills add up to %s", sum)
	}

	// IOC: what crosses fills, the rest expires. Levels up to 60001 hold
	// 0.05 + 0.15 BTC.
	ioc, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.5", Price: "60001", TimeInForce: "IOC", ClientOrderID: "ioc-1"}))
	if err != nil || ioc.Status != exgate.OrderExpired || num(ioc.ExecutedQuantity) != "0.2" || ioc.RawStatus != "cancelled/ioc" {
		t.Fatalf("IOC = %+v, %v", ioc, err)
	}
	// FOK that cannot fill completely: nothing trades, EXPIRED.
	before := a.srv.Balance("gate-key", "USDT")
	fok, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.5", Price: "60001", TimeInForce: "FOK", ClientOrderID: "fok-1"}))
	if err != nil || fok.Status != exgate.OrderExpired || num(fok.ExecutedQuantity) != "0" {
		t.Fatalf("FOK = %+v, %v", fok, err)
	}
	if !a.srv.Balance("gate-key", "USDT").Equal(before) {
		t.Errorf("a FOK that found too little moved USDT")
	}
	if got := a.srv.SentOrders("gate-key"); got[len(got)-1].TimeInForce != "fok" {
		t.Errorf("FOK sent as %q", got[len(got)-1].TimeInForce)
	}
	// FOK that can fill completely: FILLED.
	if fok2, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "SELL", Quantity: "0.05", Price: "59999.5", TimeInForce: "FOK", ClientOrderID: "fok-2"})); err != nil || fok2.Status != exgate.OrderFilled {
		t.Fatalf("fillable FOK = %+v, %v", fok2, err)
	}

	// postOnly that would trade: Gate refuses it (poc), 422 ORDER_REJECTED.
	n := len(a.srv.SentOrders("gate-key"))
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "60001", PostOnly: true, ClientOrderID: "post-1"}))
	wantProblem(t, err, http.StatusUnprocessableEntity, "ORDER_REJECTED", "")
	if got := a.srv.SentOrders("gate-key"); len(got) != n+1 || got[n].TimeInForce != "poc" {
		t.Errorf("postOnly sent as %+v", got[n:])
	}
	// postOnly away from the market rests.
	if po, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "59000", PostOnly: true, ClientOrderID: "post-2"})); err != nil || po.Status != exgate.OrderPending || !po.PostOnly {
		t.Fatalf("resting postOnly = %+v, %v", po, err)
	}

	// A price off the tick (0.1 on BTC_USDT) is 400 naming price; nothing
	// is sent.
	n = len(a.srv.SentOrders("gate-key"))
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.01", Price: "50000.05", ClientOrderID: "tick-1"}))
	wantProblem(t, err, http.StatusBadRequest, "INVALID_PARAMETER", "price")
	// Under min_quote_amount (3 USDT): QUANTITY_TOO_SMALL with the limit.
	_, err = a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "BUY", Quantity: "0.00002", Price: "100", ClientOrderID: "small-1"}))
	wantProblem(t, err, http.StatusUnprocessableEntity, "QUANTITY_TOO_SMALL", "")
	if ce, _ := errors.AsType[*client.Error](err); ce == nil || !bytes.Contains([]byte(ce.Detail), []byte("3 USDT")) {
		t.Errorf("detail %v lacks the minimum", err)
	}
	if got := len(a.srv.SentOrders("gate-key")); got != n {
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
	if got := len(a.srv.SentOrders("gate-key")); got != n {
		t.Errorf("test orders reached POST /spot/orders: %d sent", got-n)
	}

	// A resting order filled on the exchange; its cancel answers FILLED.
	rest, err := a.c.PlaceLimitOrder(ctx, btc(client.LimitOrder{Side: "SELL", Quantity: "0.02", Price: "70000", ClientOrderID: "fill-1"}))
	if err != nil {
		t.Fatal(err)
	}
	// Gate knows the order by the gateway's id (its text is t-<id>).
	if err := a.srv.FillOrder("gate-key", "t-"+rest.ID); err != nil {
		t.Fatal(err)
	}
	if c, err := a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "fill-1"}); err != nil || c.Status != exgate.OrderFilled || num(c.ExecutedQuantity) != "0.02" {
		t.Fatalf("cancel of a filled order = %+v, %v", c, err)
	}
	// Unknown ids: 404.
	_, err = a.c.CancelOrder(ctx, client.OrderRef{ClientOrderID: "nosuch"})
	wantProblem(t, err, http.StatusNotFound, "NOT_FOUND", "")
}

func TestOutsideOrdersThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t)
	ctx := t.Context()
	id, err := a.srv.PlaceOutside("gate-key", gateiofake.OutsideOrder{Pair: "BTC_USDT", Side: "buy", Amount: "0.001", Price: "40000"})
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
			t.Errorf("%s = %+v, %v; want the outside order with Gate's id and no client id", name, os, err)
		}
	}
	// cancel-all cancels it by Gate's numeric id.
	done, err := a.c.CancelAll(ctx, "BTC", "USDT")
	if err != nil || len(done) != 1 || done[0].Status != exgate.OrderCanceled || done[0].ID != id {
		t.Fatalf("cancel-all = %+v, %v", done, err)
	}
	if a.srv.Requests("/api/v4/spot/orders/"+id) != 1 || a.srv.OpenOrderCount("gate-key") != 0 {
		t.Errorf("the outside order was not canceled by its id")
	}
}

func TestInvertedExampleThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t)
	// The original service's example: BUY BTC/ETH spending 0.1 ETH is a
	// SELL of 0.1 ETH on ETH_BTC.
	o, err := a.c.PlaceMarketOrder(t.Context(), client.MarketOrder{Asset1: "BTC", Asset2: "ETH", Side: "BUY", Quantity: "0.1", QuantityIn: "ETH", ClientOrderID: "inv-1"})
	if err != nil {
		t.Fatal(err)
	}
	sent := a.srv.SentOrders("gate-key")
	if len(sent) != 1 || sent[0].CurrencyPair != "ETH_BTC" || sent[0].Side != "sell" || sent[0].Type != "market" || sent[0].Amount != "0.1" {
		t.Fatalf("sent %+v; want one market sell of 0.1 on ETH_BTC", sent)
	}
	if o.Side != exgate.SideBuy || o.Asset1 != "BTC" || o.Asset2 != "ETH" || o.Status != exgate.OrderFilled || num(o.QuoteQuantity) != "0.1" {
		t.Errorf("answer %+v; want a FILLED BUY of BTC/ETH for 0.1 ETH", o)
	}
}

// The adapter's own contract, below the API: the cases the HTTP API
// cannot provoke.
func TestCancelOutcomes(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	place := func(id string) exgate.Order {
		o, err := e.ex.PlaceLimitOrder(ctx, e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy,
			Quantity: dec("0.01"), Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: id})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	// A cancel whose answer is lost is EXCHANGE_TIMEOUT and never sent
	// again; another order is untouched.
	for _, f := range []gateiofake.Fault{{DropAfter: true}, {Drop: true}, {Status: 502, Body: "bad gateway"}, {Status: 500, Body: `{"label":"INTERNAL","message":"x"}`}} {
		place("amb-1")
		place("other-1")
		e.srv.ResetCounters()
		e.srv.SetFault(func(r *http.Request) gateiofake.Fault {
			if r.Method == http.MethodDelete {
				return f
			}
			return gateiofake.Fault{}
		})
		_, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "amb-1"})
		wantCode(t, err, exgate.CodeExchangeTimeout)
		if n := e.srv.Requests("/api/v4/spot/orders/t-amb-1"); n != 1 {
			t.Errorf("fault %+v: cancel sent %d times", f, n)
		}
		e.srv.SetFault(nil)
		for _, id := range []string{"amb-1", "other-1"} {
			if _, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: id}); err != nil {
				t.Fatalf("cleanup cancel %s: %v", id, err)
			}
		}
	}
	// A cancel of an order canceled already answers CANCELED.
	if o, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "amb-1"}); err != nil || o.Status != exgate.OrderCanceled {
		t.Errorf("second cancel = %+v, %v", o, err)
	}
	// An order filled before the cancel: Gate no longer finds it by text;
	// the adapter reads it and answers FILLED.
	place("filled-1")
	if err := e.srv.FillOrder("gate-key", "t-filled-1"); err != nil {
		t.Fatal(err)
	}
	if o, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "filled-1"}); err != nil || o.Status != exgate.OrderFilled || o.ExecutedQuantity == nil || !o.ExecutedQuantity.Equal(dec("0.01")) {
		t.Errorf("cancel of a filled order = %+v, %v; want FILLED", o, err)
	}
	// Its fill is the maker's, at its price.
	fills, err := e.ex.Fills(ctx, e.cred, exgate.OrderFilter{Symbol: btcUSDT})
	if err != nil || len(fills) != 1 || fills[0].OrderID != "filled-1" || !fills[0].Maker || !fills[0].Price.Equal(dec("50000")) {
		t.Errorf("fills = %+v, %v", fills, err)
	}
	// Unknown: ErrNotFound.
	if _, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: "nope"}); !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("unknown cancel: %v", err)
	}
}

// A postOnly order Gate answers with an order finished as poc (instead of
// POC_FILL_IMMEDIATELY) is ORDER_REJECTED too.
func TestPostOnlyFinishedAsPoc(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.srv.SetFault(func(r *http.Request) gateiofake.Fault {
		if r.Method == http.MethodPost {
			return gateiofake.Fault{Status: 201, Body: `{"id":"1","text":"t-p1","status":"cancelled","finish_as":"poc","type":"limit","side":"buy",
				"currency_pair":"BTC_USDT","amount":"0.01","price":"60001","left":"0.01","filled_amount":"0","filled_total":"0","time_in_force":"poc"}`}
		}
		return gateiofake.Fault{}
	})
	_, err := e.ex.PlaceLimitOrder(t.Context(), e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy,
		Quantity: dec("0.01"), Price: dec("60001"), TimeInForce: exgate.GTC, PostOnly: true, ClientOrderID: "p1"})
	wantCode(t, err, exgate.CodeOrderRejected)
}

func TestRecentWithdrawalsIncludeOutside(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	w, err := e.ex.Withdraw(ctx, e.cred, exgate.WithdrawalRequest{ClientWithdrawalID: "wd-1", Asset: "USDT", Network: "TRX",
		Address: "TXkZ5Ff4qgSBVRrfBMfxcDxUrW5g1mDtKf", Amount: dec("100")})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.ex.RecentWithdrawals(ctx, e.cred, exgate.WithdrawalFilter{Asset: "USDT"})
	if err != nil || len(ws) == 0 || ws[0].ClientWithdrawalID != "wd-1" || ws[0].ExchangeID != w.ExchangeID {
		t.Fatalf("recent withdrawals = %+v, %v", ws, err)
	}
	if ws, err := e.ex.RecentWithdrawals(ctx, e.cred, exgate.WithdrawalFilter{Status: exgate.TransferFailed}); err != nil || len(ws) != 0 {
		t.Errorf("failed withdrawals = %+v, %v", ws, err)
	}
	_ = gateio.DefaultBaseURL
}

func TestSymbolsFromCurrencyPairs(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	e.srv.SetTradeStatus("XRP_USDT", "buyable")
	tests := []struct {
		sym  exgate.Symbol
		want exgate.SymbolInfo
	}{
		{btcUSDT, exgate.SymbolInfo{Asset1: "BTC", Asset2: "USDT", Status: exgate.SymbolTrading, QuantityStep: "0.000001", PriceStep: "0.1", MinQuantity: "0.00001", MinNotional: "3"}},
		{exgate.Symbol{Base: "ETH", Quote: "BTC"}, exgate.SymbolInfo{Asset1: "ETH", Asset2: "BTC", Status: exgate.SymbolTrading, QuantityStep: "0.001", PriceStep: "0.000001", MinQuantity: "0.001", MinNotional: "0.0001"}},
		{exgate.Symbol{Base: "XRP", Quote: "USDT"}, exgate.SymbolInfo{Asset1: "XRP", Asset2: "USDT", Status: exgate.SymbolHalted, QuantityStep: "0.01", PriceStep: "0.0001", MinQuantity: "1", MinNotional: "3"}},
	}
	for _, tc := range tests {
		got, err := e.ex.Symbols(ctx, e.cred, exgate.SymbolFilter{Symbol: tc.sym})
		if err != nil || len(got) != 1 {
			t.Fatalf("Symbols(%s) = %+v, %v", tc.sym, got, err)
		}
		g := got[0]
		g.OrderTypes = nil
		if !reflect.DeepEqual(g, tc.want) {
			t.Errorf("Symbols(%s) = %+v, want %+v", tc.sym, g, tc.want)
		}
	}
	if got, err := e.ex.Symbols(ctx, e.cred, exgate.SymbolFilter{Symbol: exgate.Symbol{Base: "BTC", Quote: "ETH"}}); err != nil || len(got) != 0 {
		t.Errorf("the inverse pair: %+v, %v; want none", got, err)
	}
	if all, err := e.ex.Symbols(ctx, e.cred, exgate.SymbolFilter{}); err != nil || len(all) != 6 {
		t.Errorf("every pair: %d, %v", len(all), err)
	}
}

// A client id Gate cannot take after "t-" as it is (more than 28
// characters; docs/contract.md 2.4 allows 36) is sent as its
// deterministic encoding, and the adapter answers with the client's own
// id, finds and cancels the order by it.
func TestLongClientIDs(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	for _, id := range []string{"my-order-1", "abcdefghij-abcdefghij-abcdefghij-123", "exactly-28-characters-long-x"} {
		o, err := e.ex.PlaceLimitOrder(ctx, e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"),
			Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: id})
		if err != nil || o.ID != id || o.ClientOrderID != id {
			t.Fatalf("%s: placed %+v, %v", id, o, err)
		}
		sent := e.srv.SentOrders("gate-key")
		text := sent[len(sent)-1].Text
		if len(text) > 30 || (len(id) <= 28) != (text == "t-"+id) {
			t.Errorf("%s: sent text %q; want t-<id> when it fits, else its 28-character encoding", id, text)
		}
		if got, err := e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{Symbol: btcUSDT, ClientOrderID: id}); err != nil || got.ID != id || got.ExchangeOrderID != o.ExchangeOrderID {
			t.Errorf("%s: read back %+v, %v", id, got, err)
		}
		if c, err := e.ex.CancelOrder(ctx, e.cred, exgate.CancelRequest{Symbol: btcUSDT, ClientOrderID: id}); err != nil || c.Status != exgate.OrderCanceled || c.ID != id {
			t.Errorf("%s: cancel %+v, %v", id, c, err)
		}
	}
	_, err := e.ex.PlaceLimitOrder(ctx, e.cred, exgate.LimitOrderRequest{Symbol: btcUSDT, Side: exgate.SideBuy, Quantity: dec("0.01"),
		Price: dec("50000"), TimeInForce: exgate.GTC, ClientOrderID: strings.Repeat("y", 37)})
	wantCode(t, err, exgate.CodeInvalidParameter)
}
