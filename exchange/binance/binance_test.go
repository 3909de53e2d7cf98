package binance

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

func TestName(t *testing.T) {
	if got := New(Options{}).Name(); got != "binance" {
		t.Errorf("Name() = %q", got)
	}
}

// TestMarketOrderParams checks the exact parameters of the four
// side/quantityIn combinations and of the book conversion.
func TestMarketOrderParams(t *testing.T) {
	tests := []struct {
		name       string
		sym        exgate.Symbol
		side       exgate.Side
		qty        string
		in         exgate.QuantityIn
		wantParams map[string]string
		wantQty    string
		wantIn     string
	}{
		{"BUY in base", btcusdt, exgate.SideBuy, "0.0123456", exgate.InBase,
			map[string]string{"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01234"}, "0.01234", "BTC"},
		{"SELL in base", btcusdt, exgate.SideSell, "0.5", exgate.InBase,
			map[string]string{"symbol": "BTCUSDT", "side": "SELL", "type": "MARKET", "quantity": "0.5"}, "0.5", "BTC"},
		{"BUY in quote", btcusdt, exgate.SideBuy, "150.123456789", exgate.InQuote,
			map[string]string{"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quoteOrderQty": "150.12345678"}, "150.12345678", "USDT"},
		{"SELL in quote", btcusdt, exgate.SideSell, "99.9", exgate.InQuote,
			map[string]string{"symbol": "BTCUSDT", "side": "SELL", "type": "MARKET", "quoteOrderQty": "99.9"}, "99.9", "USDT"},
		// XRPUSDT takes no quoteOrderQty: 100 USDT buys 166.63... XRP at the
		// first ask (0.6001), rounded down to the step 0.1.
		{"BUY in quote converted", exgate.Symbol{Base: "XRP", Quote: "USDT"}, exgate.SideBuy, "100", exgate.InQuote,
			map[string]string{"symbol": "XRPUSDT", "side": "BUY", "type": "MARKET", "quantity": "166.6"}, "100", "USDT"},
		{"SELL in quote converted", exgate.Symbol{Base: "XRP", Quote: "USDT"}, exgate.SideSell, "59.99", exgate.InQuote,
			map[string]string{"symbol": "XRPUSDT", "side": "SELL", "type": "MARKET", "quantity": "100"}, "59.99", "USDT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := "o" + strings.ReplaceAll(strings.ToLower(tc.name), " ", "")
			req := exgate.OrderRequest{Symbol: tc.sym, Side: tc.side, Quantity: num(t, tc.qty), QuantityIn: tc.in, ClientOrderID: id}
			o, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, req)
			if err != nil {
				t.Fatalf("PlaceMarketOrder: %v", err)
			}
			got := e.fake.LastParams("POST", "/api/v3/order")
			want := map[string]string{"newClientOrderId": id, "newOrderRespType": "FULL", "recvWindow": "5000",
				"timestamp": itoa64(e.clock.Now().UnixMilli())}
			for k, v := range tc.wantParams {
				want[k] = v
			}
			gotFlat := map[string]string{}
			for k, vs := range got {
				if k == "signature" {
					continue
				}
				if len(vs) != 1 {
					t.Errorf("parameter %s sent %d times", k, len(vs))
				}
				gotFlat[k] = vs[0]
			}
			if diff := cmp.Diff(want, gotFlat); diff != "" {
				t.Errorf("parameters sent (-want +got):\n%s", diff)
			}
			if o.Quantity.String() != tc.wantQty || o.QuantityIn != tc.wantIn {
				t.Errorf("order quantity %s %s, want %s %s", o.Quantity, o.QuantityIn, tc.wantQty, tc.wantIn)
			}
			if o.ID != id || o.ClientOrderID != id || o.Exchange != "binance" || o.Type != "MARKET" || o.Side != tc.side {
				t.Errorf("order identity %+v", o)
			}
			if o.Status != exgate.OrderFilled || o.RawStatus != "FILLED" || o.Fees == nil || o.FeesIn == "" || o.OpenAt != e.clock.Now().UnixMilli() || o.CloseAt != o.OpenAt {
				t.Errorf("order outcome %+v", o)
			}
			if e.fake.OrdersWithClientID(id) != 1 {
				t.Errorf("%d orders with the client id, want 1", e.fake.OrdersWithClientID(id))
			}
		})
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// TestQuantityChecks: quantities are rounded down to the step, and
// refused locally (nothing sent) under the lot minimum or under the
// notional minimum.
func TestQuantityChecks(t *testing.T) {
	xrp := exgate.Symbol{Base: "XRP", Quote: "USDT"}
	tests := []struct {
		name     string
		sym      exgate.Symbol
		side     exgate.Side
		qty      string
		in       exgate.QuantityIn
		wantCode exgate.Code
		mention  []string
	}{
		{"base rounds to zero", btcusdt, exgate.SideBuy, "0.000009", exgate.InBase, exgate.CodeQuantityTooSmall, []string{"0.00001", "LOT_SIZE"}},
		{"base under the notional", btcusdt, exgate.SideSell, "0.00005", exgate.InBase, exgate.CodeQuantityTooSmall, []string{"minimum order value 5 USDT", "NOTIONAL"}},
		{"quote under the notional", btcusdt, exgate.SideBuy, "4.99", exgate.InQuote, exgate.CodeQuantityTooSmall, []string{"5 USDT", "NOTIONAL"}},
		{"quote rounds to zero", btcusdt, exgate.SideSell, "0.000000001", exgate.InQuote, exgate.CodeQuantityTooSmall, []string{"rounds down to 0"}},
		{"legacy MIN_NOTIONAL", xrp, exgate.SideBuy, "5", exgate.InBase, exgate.CodeQuantityTooSmall, []string{"MIN_NOTIONAL"}},
		{"converted quote under the notional", xrp, exgate.SideBuy, "4", exgate.InQuote, exgate.CodeQuantityTooSmall, []string{"MIN_NOTIONAL"}},
		{"converted quote under one step", xrp, exgate.SideSell, "0.01", exgate.InQuote, exgate.CodeQuantityTooSmall, []string{"LOT_SIZE", "0.1"}},
		{"over the market maximum", btcusdt, exgate.SideBuy, "150", exgate.InBase, exgate.CodeOrderRejected, []string{"120"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			req := exgate.OrderRequest{Symbol: tc.sym, Side: tc.side, Quantity: num(t, tc.qty), QuantityIn: tc.in, ClientOrderID: "small1"}
			_, err := e.ex.PlaceMarketOrder(t.Context(), e.cred, req)
			var xe *exgate.Error
			if !errors.As(err, &xe) || xe.Code != tc.wantCode {
				t.Fatalf("PlaceMarketOrder: %v, want %s", err, tc.wantCode)
			}
			for _, m := range tc.mention {
				if !strings.Contains(xe.Detail, m) {
					t.Errorf("detail %q does not mention %q", xe.Detail, m)
				}
			}
			if got := e.fake.Requests("/api/v3/order"); got != 0 {
				t.Errorf("%d order requests, want none", got)
			}
		})
	}
}

func TestRoundDownStep(t *testing.T) {
	tests := []struct{ q, step, want string }{
		{"0.0123456", "0.00001", "0.01234"},
		{"1", "0.1", "1"},
		{"0.1234599999999999999999", "0.00001", "0.12345"},
		{"5.55", "0", "5.55"},
		{"0.00000999", "0.00001", "0"},
		{"123.456", "5", "120"},
	}
	for _, tc := range tests {
		if got := roundDownStep(num(t, tc.q), num(t, tc.step)); !got.Equal(num(t, tc.want)) {
			t.Errorf("roundDownStep(%s, %s) = %s, want %s", tc.q, tc.step, got, tc.want)
		}
	}
}

func TestFees(t *testing.T) {
	mk := &market{pair: btcusdt, basePrecision: 8, quotePrecision: 8}
	f := func(price, commission, asset string) fillJSON {
		return fillJSON{Price: rest.Decimal{Decimal: num(t, price), Set: true}, Commission: rest.Decimal{Decimal: num(t, commission), Set: true}, CommissionAsset: asset}
	}
	tests := []struct {
		name        string
		fills       []fillJSON
		wantAmount  string
		wantAsset   string
		wantDropped int
	}{
		{"one asset", []fillJSON{f("60000", "0.5", "USDT"), f("60001", "0.25", "USDT")}, "0.75", "USDT", 0},
		{"base converted to the majority quote", []fillJSON{f("60000", "1", "USDT"), f("60000", "2", "USDT"), f("50000", "0.00001", "BTC")}, "3.5", "USDT", 0},
		{"quote converted to the majority base", []fillJSON{f("60000", "0.00001", "BTC"), f("60000", "0.00002", "BTC"), f("50000", "1", "USDT")}, "0.00005", "BTC", 0},
		{"BNB cannot be converted", []fillJSON{f("60000", "0.5", "USDT"), f("60000", "0.5", "USDT"), f("60000", "0.001", "BNB")}, "1", "USDT", 1},
		{"majority BNB", []fillJSON{f("60000", "0.001", "BNB"), f("60000", "0.002", "BNB"), f("60000", "0.5", "USDT")}, "0.003", "BNB", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := fees(mk, tc.fills)
			if !ok || !got.amount.Equal(num(t, tc.wantAmount)) || got.asset != tc.wantAsset || len(got.dropped) != tc.wantDropped {
				t.Errorf("fees = %s %s (dropped %v), want %s %s (%d dropped)", got.amount, got.asset, got.dropped, tc.wantAmount, tc.wantAsset, tc.wantDropped)
			}
		})
	}
	if _, ok := fees(mk, nil); ok {
		t.Error("fees of no fills reported")
	}
}

// TestOrderGolden normalizes the documented order answers.
func TestOrderGolden(t *testing.T) {
	e := newEnv(t)
	markets := map[string]*market{
		"BTCUSDT": {symbol: "BTCUSDT", pair: btcusdt, basePrecision: 8, quotePrecision: 8},
		"LTCBNB":  {symbol: "LTCBNB", pair: exgate.Symbol{Base: "LTC", Quote: "BNB"}, basePrecision: 8, quotePrecision: 8},
		"LTCBTC":  {symbol: "LTCBTC", pair: exgate.Symbol{Base: "LTC", Quote: "BTC"}, basePrecision: 8, quotePrecision: 8},
	}
	for _, name := range []string{"order_market_full", "order_market_full_consistent", "order_market_full_expired", "order_query"} {
		t.Run(name, func(t *testing.T) {
			o, err := parseOrder(readTestdata(t, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			mk := markets[o.Symbol]
			out := e.ex.normalizeOrder(t.Context(), mk, o, o.ClientOrderID, o.OrigQty.Decimal, exgate.InBase)
			out.OpenAt = max(o.TransactTime, o.Time)
			out.CloseAt = out.OpenAt
			golden(t, name+".golden.json", out)
		})
	}
}

func TestOrderStatusTable(t *testing.T) {
	want := map[string]exgate.OrderStatus{
		"NEW": "PENDING", "PENDING_NEW": "PENDING", "PARTIALLY_FILLED": "PARTIALLY_FILLED", "FILLED": "FILLED",
		"CANCELED": "CANCELED", "PENDING_CANCEL": "PENDING", "REJECTED": "REJECTED", "EXPIRED": "EXPIRED",
		"EXPIRED_IN_MATCH": "EXPIRED", "SOMETHING_NEW": "PENDING",
	}
	for raw, st := range want {
		if got := orderStatus(raw); got != st {
			t.Errorf("orderStatus(%s) = %s, want %s", raw, got, st)
		}
	}
}

func TestQueryOrder(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	req := exgate.OrderRequest{Symbol: btcusdt, Side: exgate.SideBuy, Quantity: num(t, "150"), QuantityIn: exgate.InQuote, ClientOrderID: "q1"}
	placed, err := e.ex.PlaceMarketOrder(ctx, e.cred, req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{Symbol: btcusdt, ClientOrderID: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(placed, got); diff != "" {
		t.Errorf("QueryOrder differs from PlaceMarketOrder (-placed +queried):\n%s", diff)
	}
	if p := e.fake.LastParams("GET", "/api/v3/order"); p.Get("origClientOrderId") != "q1" || p.Get("symbol") != "BTCUSDT" {
		t.Errorf("query parameters %v", p)
	}
	if p := e.fake.LastParams("GET", "/api/v3/myTrades"); p.Get("orderId") != placed.ExchangeOrderID {
		t.Errorf("trades read with %v, want orderId %s", p, placed.ExchangeOrderID)
	}
	_, err = e.ex.QueryOrder(ctx, e.cred, exgate.OrderQuery{Symbol: btcusdt, ClientOrderID: "nosuch"})
	if !errors.Is(err, exgate.ErrNotFound) {
		t.Errorf("unknown order: %v, want ErrNotFound", err)
	}
}

func TestKlines(t *testing.T) {
	e := newEnv(t)
	for _, iv := range exgate.Intervals {
		t.Run(string(iv), func(t *testing.T) {
			ks, err := e.ex.RecentKlines(t.Context(), e.cred, exgate.KlineRequest{Symbol: btcusdt, Interval: iv, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			p := e.fake.LastParams("GET", "/api/v3/klines")
			if p.Get("interval") != string(iv) || p.Get("limit") != "3" || p.Get("symbol") != "BTCUSDT" {
				t.Errorf("parameters %v", p)
			}
			if len(ks) != 3 {
				t.Fatalf("%d klines", len(ks))
			}
			last := ks[2]
			if want := iv.Start(e.clock.Now()).UnixMilli(); last.OpenTime != want {
				t.Errorf("last kline opens at %d, want the current interval %d", last.OpenTime, want)
			}
		})
	}
	ks, err := parseKlines(string(readTestdata(t, "klines.json")), exgate.Interval1w)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "klines.golden.json", ks)
}

func TestOrderBookDepth(t *testing.T) {
	tests := []struct{ limit, sent, got int }{{1, 5, 1}, {7, 10, 7}, {100, 100, 100}, {101, 500, 101}, {1000, 1000, 1000}, {0, 100, 100}}
	e := newEnv(t)
	for _, tc := range tests {
		b, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcusdt, Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if p := e.fake.LastParams("GET", "/api/v3/depth"); p.Get("limit") != itoa64(int64(tc.sent)) {
			t.Errorf("limit %d sent as %s, want %d", tc.limit, p.Get("limit"), tc.sent)
		}
		if len(b.Bids) != tc.got || len(b.Asks) != tc.got {
			t.Errorf("limit %d: %d bids %d asks, want %d", tc.limit, len(b.Bids), len(b.Asks), tc.got)
		}
	}
	book, err := parseBook(string(readTestdata(t, "depth.json")))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "depth.golden.json", exgate.OrderBook{Bids: book.bids.levels(100), Asks: book.asks.levels(100)})
}

func TestMarkets(t *testing.T) {
	t.Run("loaded once for concurrent callers", func(t *testing.T) {
		e := newEnv(t)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if _, err := e.ex.OrderBook(t.Context(), e.cred, exgate.OrderBookRequest{Symbol: btcusdt, Limit: 5}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := e.fake.Requests("/api/v3/exchangeInfo"); got != 1 {
			t.Errorf("%d exchangeInfo requests, want 1", got)
		}
		if p := e.fake.LastParams("GET", "/api/v3/exchangeInfo"); p.Get("permissions") != "SPOT" {
			t.Errorf("exchangeInfo parameters %v", p)
		}
	})
	t.Run("refreshed in the background when stale", func(t *testing.T) {
		e := newEnv(t)
		first, err := e.ex.markets.get(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(11 * time.Minute)
		if set, err := e.ex.markets.get(t.Context()); err != nil || set != first {
			t.Fatalf("stale get = %v, %v; want the cached set at once", set, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for e.ex.markets.cur.Load() == first && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // the refresh runs on its own goroutine
		}
		if e.ex.markets.cur.Load() == first {
			t.Fatal("markets not refreshed")
		}
	})
	t.Run("limits from exchangeInfo", func(t *testing.T) {
		e := newEnv(t)
		if _, err := e.ex.markets.get(t.Context()); err != nil {
			t.Fatal(err)
		}
		got := e.ex.c.rateLimits()
		want := rateLimits{weight: limitSpec{6000, time.Minute}, ordersWin: limitSpec{100, 10 * time.Second}}
		if got != want {
			t.Errorf("rate limits %+v, want %+v", got, want)
		}
	})
	t.Run("inverse pair", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.ex.markets.lookup(t.Context(), exgate.Symbol{Base: "USDT", Quote: "BTC"})
		var xe *exgate.Error
		if !errors.As(err, &xe) || xe.Code != exgate.CodeUnknownSymbol || !strings.Contains(xe.Detail, "inverse pair BTC/USDT") {
			t.Errorf("lookup(USDT/BTC) = %v", err)
		}
		_, err = e.ex.markets.lookup(t.Context(), exgate.Symbol{Base: "DOGE", Quote: "USDT"})
		if !errors.As(err, &xe) || xe.Code != exgate.CodeUnknownSymbol || strings.Contains(xe.Detail, "inverse") {
			t.Errorf("lookup(DOGE/USDT) = %v", err)
		}
	})
	t.Run("documented exchangeInfo", func(t *testing.T) {
		set, err := parseExchangeInfo(readTestdata(t, "exchangeInfo.json"))
		if err != nil {
			t.Fatal(err)
		}
		mk := set.byPair[exgate.Symbol{Base: "ETH", Quote: "BTC"}]
		if mk == nil || mk.symbol != "ETHBTC" || !mk.lotStep.Equal(num(t, "0.001")) || !mk.minQty.Equal(num(t, "0.001")) ||
			!mk.maxQty.Equal(num(t, "100000")) || mk.applyMin || !mk.quoteOrderAllowed || !mk.marketAllowed {
			t.Errorf("ETHBTC = %+v", mk)
		}
		if set.limits.weight != (limitSpec{6000, time.Minute}) || set.limits.ordersWin != (limitSpec{50, 10 * time.Second}) {
			t.Errorf("limits %+v", set.limits)
		}
	})
}

func TestDepthLimit(t *testing.T) {
	for limit, want := range map[int]int{1: 5, 5: 5, 6: 10, 21: 50, 100: 100, 101: 500, 999: 1000, 1001: 5000, 9000: 5000} {
		if got := depthLimit(limit); got != want {
			t.Errorf("depthLimit(%d) = %d, want %d", limit, got, want)
		}
	}
	if !slices.IsSorted(depthLimits) {
		t.Error("depthLimits not sorted")
	}
}

func TestComparePlain(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1", "1.000", 0}, {"0.5", "0.45", 1}, {"10", "9.99", 1}, {"007.1", "7.10", 0},
		{"0.05", "0.5", -1}, {"100", "1000", -1}, {"4.00000200", "4.00000000", 1}, {"0", "0.0", 0},
	}
	for _, tc := range tests {
		if got := comparePlain(tc.a, tc.b); got != tc.want {
			t.Errorf("comparePlain(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := num(t, tc.a).Cmp(num(t, tc.b)); got != tc.want {
			t.Errorf("decimal disagrees on %s, %s", tc.a, tc.b)
		}
	}
}
