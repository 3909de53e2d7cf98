package exchangetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// runLifecycle runs the order lifecycle cases (docs/contract.md 2.4) when the
// adapter implements exgate.OrderManager; an adapter without it skips
// them, so adapters opt in by implementing it. The account must afford a
// buy and a sell of Setup.BaseQuantity at the market price.
//
// Subtests: Symbols, RestAndCancel (a GTC buy far below the market rests,
// is listed open, is canceled by client id, shows CANCELED in recent and
// gives its funds back), CrossingFills (a buy above the best ask fills and
// its fills add up), PostOnlyCrossing (ORDER_REJECTED, nothing moves),
// PriceOffTick (INVALID_PARAMETER naming price), CancelUnknown
// (ErrNotFound) and TestOrder (status TEST, nothing placed).
func runLifecycle(t *testing.T, newSetup func(t *testing.T) Setup) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s *suite, om exgate.OrderManager)
	}{
		{"Symbols", testSymbols},
		{"RestAndCancel", testRestAndCancel},
		{"CrossingFills", testCrossingFills},
		{"PostOnlyCrossing", testPostOnlyCrossing},
		{"PriceOffTick", testPriceOffTick},
		{"CancelUnknown", testCancelUnknown},
		{"TestOrder", testTestOrder},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, newSetup)
			om, ok := s.Exchange.(exgate.OrderManager)
			if !ok {
				t.Skipf("%s: the adapter does not implement exgate.OrderManager yet", s.name)
			}
			tc.fn(t, s, om)
		})
	}
}

// market reads the Setup symbol's rules and best prices.
func (s *suite) market(om exgate.OrderManager) (info exgate.SymbolInfo, tick, bid, ask decimal.Decimal) {
	infos, err := om.Symbols(s.t.Context(), s.Credential, exgate.SymbolFilter{Symbol: s.Symbol})
	if err != nil || len(infos) != 1 {
		s.fatalf("Symbols(%s) = %s, %v; want the one market", s.Symbol, show(infos), err)
	}
	info = infos[0]
	tick, ok := s.decimalField("priceStep", info.PriceStep)
	if !ok || !tick.IsPositive() {
		s.fatalf("priceStep %q is not a positive decimal", info.PriceStep)
	}
	book, err := s.Exchange.OrderBook(s.t.Context(), s.Credential, exgate.OrderBookRequest{Symbol: s.Symbol, Limit: 1})
	if err != nil || len(book.Bids) == 0 || len(book.Asks) == 0 {
		s.fatalf("OrderBook: %s, %v", show(book), err)
	}
	bid, _ = s.decimalField("bid", book.Bids[0].Price)
	ask, _ = s.decimalField("ask", book.Asks[0].Price)
	return info, tick, bid, ask
}

// onTick rounds p down to a multiple of tick.
func onTick(p, tick decimal.Decimal) decimal.Decimal {
	return p.Div(tick).Floor().Mul(tick)
}

func (s *suite) limit(side exgate.Side, price decimal.Decimal, tif exgate.TimeInForce, postOnly bool, id string) exgate.LimitOrderRequest {
	return exgate.LimitOrderRequest{Symbol: s.Symbol, Side: side, Quantity: s.BaseQuantity, Price: price,
		TimeInForce: tif, PostOnly: postOnly, ClientOrderID: id}
}

func testSymbols(t *testing.T, s *suite, om exgate.OrderManager) {
	info, _, _, _ := s.market(om)
	if info.Asset1 != s.Symbol.Base || info.Asset2 != s.Symbol.Quote || info.Status != exgate.SymbolTrading {
		s.errorf("Symbols(%s) = %s", s.Symbol, show(info))
	}
	for name, v := range map[string]string{"quantityStep": info.QuantityStep, "priceStep": info.PriceStep,
		"minQuantity": info.MinQuantity, "minNotional": info.MinNotional} {
		if !exgate.IsPlainDecimal(v) {
			s.errorf("%s %q is not a plain decimal", name, v)
		}
	}
	if !contains(info.OrderTypes, exgate.OrderTypeLimit) || !contains(info.OrderTypes, exgate.OrderTypeMarket) {
		s.errorf("orderTypes %v lack MARKET or LIMIT", info.OrderTypes)
	}
	inv, err := om.Symbols(t.Context(), s.Credential, exgate.SymbolFilter{Symbol: s.Symbol.Inverse()})
	if err != nil || len(inv) != 0 {
		s.errorf("Symbols of the inverse pair = %s, %v; want none", show(inv), err)
	}
	all, err := om.Symbols(t.Context(), s.Credential, exgate.SymbolFilter{})
	if err != nil || len(all) < 1 {
		s.errorf("Symbols() = %d markets, %v", len(all), err)
	}
	// One order on every exchange (exgate.SortSymbols): by asset1, then
	// asset2.
	sorted := slices.Clone(all)
	exgate.SortSymbols(sorted)
	if !slices.Equal(symbolNames(sorted), symbolNames(all)) {
		s.errorf("Symbols() not by asset1 then asset2: %v", symbolNames(all))
	}
}

func symbolNames(list []exgate.SymbolInfo) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Asset1 + "/" + s.Asset2
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func testRestAndCancel(t *testing.T, s *suite, om exgate.OrderManager) {
	ctx := t.Context()
	_, tick, bid, _ := s.market(om)
	before := s.balances()
	price := onTick(bid.Mul(decimal.RequireFromString("0.8")), tick)
	o, err := om.PlaceLimitOrder(ctx, s.Credential, s.limit(exgate.SideBuy, price, exgate.GTC, false, "ctrest1"))
	if err != nil {
		s.fatalf("PlaceLimitOrder GTC at %s: %v", price, err)
	}
	if o.Status != exgate.OrderPending || o.Type != exgate.OrderTypeLimit || o.Price == nil || !o.Price.Equal(price) ||
		o.Asset1 != s.Symbol.Base || o.Side != exgate.SideBuy {
		s.errorf("resting order = %s; want PENDING LIMIT BUY at %s", show(o), price)
	}
	open, err := om.OpenOrders(ctx, s.Credential, exgate.OrderFilter{Symbol: s.Symbol})
	if err != nil || len(open) != 1 || open[0].ClientOrderID != "ctrest1" {
		s.fatalf("OpenOrders = %s, %v; want the resting order", show(open), err)
	}
	c, err := om.CancelOrder(ctx, s.Credential, exgate.CancelRequest{Symbol: s.Symbol, ClientOrderID: "ctrest1"})
	if err != nil || c.Status != exgate.OrderCanceled {
		s.fatalf("CancelOrder = %s, %v; want CANCELED", show(c), err)
	}
	if open, err := om.OpenOrders(ctx, s.Credential, exgate.OrderFilter{Symbol: s.Symbol}); err != nil || len(open) != 0 {
		s.errorf("OpenOrders after the cancel = %s, %v", show(open), err)
	}
	recent, err := om.RecentOrders(ctx, s.Credential, exgate.OrderFilter{Symbol: s.Symbol, Limit: 10})
	if err != nil || len(recent) == 0 || recent[0].ClientOrderID != "ctrest1" || recent[0].Status != exgate.OrderCanceled {
		s.errorf("RecentOrders = %s, %v; want the CANCELED order first", show(recent), err)
	}
	s.sameBalances("after a canceled order", before)
}

func testCrossingFills(t *testing.T, s *suite, om exgate.OrderManager) {
	ctx := t.Context()
	_, tick, _, ask := s.market(om)
	price := onTick(ask.Mul(decimal.RequireFromString("1.01")), tick)
	o, err := om.PlaceLimitOrder(ctx, s.Credential, s.limit(exgate.SideBuy, price, exgate.IOC, false, "ctcross1"))
	if err != nil {
		s.fatalf("PlaceLimitOrder IOC at %s: %v", price, err)
	}
	if o.Status != exgate.OrderFilled || o.ExecutedQuantity == nil || !o.ExecutedQuantity.Equal(o.Quantity.Decimal) {
		s.fatalf("crossing IOC order = %s; want FILLED", show(o))
	}
	if o.AveragePrice == nil || o.AveragePrice.GreaterThan(price) {
		s.errorf("average price %v above the limit %s", o.AveragePrice, price)
	}
	fills, err := om.Fills(ctx, s.Credential, exgate.OrderFilter{Symbol: s.Symbol, Limit: 100})
	if err != nil {
		s.fatalf("Fills: %v", err)
	}
	sum := decimal.Zero
	for _, f := range fills {
		if f.ClientOrderID == "ctcross1" || f.OrderID == o.ID {
			sum = sum.Add(f.Quantity.Decimal)
			if f.Price.GreaterThan(price) || f.Side != exgate.SideBuy {
				s.errorf("fill %s above the limit or on the wrong side", show(f))
			}
		}
	}
	if !sum.Equal(o.ExecutedQuantity.Decimal) {
		s.errorf("fills of the order add up to %s, the order executed %s", sum, o.ExecutedQuantity)
	}
}

func testPostOnlyCrossing(t *testing.T, s *suite, om exgate.OrderManager) {
	_, tick, _, ask := s.market(om)
	before := s.balances()
	price := onTick(ask.Mul(decimal.RequireFromString("1.01")), tick)
	_, err := om.PlaceLimitOrder(t.Context(), s.Credential, s.limit(exgate.SideBuy, price, exgate.GTC, true, "ctpost1"))
	s.wantCode("a crossing postOnly order", err, exgate.CodeOrderRejected)
	s.sameBalances("after a refused postOnly order", before)
}

func testPriceOffTick(t *testing.T, s *suite, om exgate.OrderManager) {
	_, tick, bid, _ := s.market(om)
	price := onTick(bid.Mul(decimal.RequireFromString("0.8")), tick).Add(tick.Div(decimal.NewFromInt(10)))
	_, err := om.PlaceLimitOrder(t.Context(), s.Credential, s.limit(exgate.SideBuy, price, exgate.GTC, false, "cttick1"))
	s.wantCode("a price off the tick", err, exgate.CodeInvalidParameter)
	if e, ok := errors.AsType[*exgate.Error](err); ok && e.Param != "price" {
		s.errorf("a price off the tick names %q, want price", e.Param)
	}
}

func testCancelUnknown(t *testing.T, s *suite, om exgate.OrderManager) {
	_, err := om.CancelOrder(t.Context(), s.Credential, exgate.CancelRequest{Symbol: s.Symbol, ClientOrderID: "ctnosuchorder"})
	if !errors.Is(err, exgate.ErrNotFound) {
		s.errorf("CancelOrder of an unknown order: %v, want an error wrapping ErrNotFound", err)
	}
}

func testTestOrder(t *testing.T, s *suite, om exgate.OrderManager) {
	ctx := t.Context()
	_, tick, _, ask := s.market(om)
	before := s.balances()
	price := onTick(ask.Mul(decimal.RequireFromString("1.01")), tick)
	req := s.limit(exgate.SideBuy, price, exgate.GTC, false, "cttest1")
	o, err := om.TestOrder(ctx, s.Credential, exgate.TestOrderRequest{Limit: &req})
	if err != nil || o.Status != exgate.OrderTest {
		s.fatalf("TestOrder(limit) = %s, %v; want status TEST", show(o), err)
	}
	m := exgate.OrderRequest{Symbol: s.Symbol, Side: exgate.SideBuy, Quantity: s.QuoteQuantity, QuantityIn: exgate.InQuote, ClientOrderID: "cttest2"}
	if o, err := om.TestOrder(ctx, s.Credential, exgate.TestOrderRequest{Market: &m}); err != nil || o.Status != exgate.OrderTest {
		s.errorf("TestOrder(market) = %s, %v; want status TEST", show(o), err)
	}
	s.sameBalances("after test orders", before)
	if recent, err := om.RecentOrders(ctx, s.Credential, exgate.OrderFilter{Symbol: s.Symbol}); err != nil || len(recent) != 0 {
		s.errorf("RecentOrders after test orders = %s, %v; want none", show(recent), err)
	}
}
