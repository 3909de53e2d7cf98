// Package exchangetest is the conformance suite every exchange adapter
// passes: it holds an exgate.Exchange to the normalized inputs and outputs
// of docs/contract.md section 2.3 (kline shape and alignment, order book order,
// balances, the four market order forms, lookups by client id, the error
// codes of refused requests, deposits, deposit addresses and withdrawals).
//
// An adapter's test calls Run with a function that builds a fresh Setup,
// usually the adapter pointed at its fake exchange with a funded account:
//
//	func TestConformance(t *testing.T) {
//		exchangetest.Run(t, func(t *testing.T) exchangetest.Setup {
//			srv := binancefake.New(binancefake.Options{...})
//			t.Cleanup(srv.Close)
//			return exchangetest.Setup{Exchange: binance.New(binance.Options{BaseURL: srv.URL}), ...}
//		})
//	}
//
// Every failure names the exchange, what was expected and what came back.
//
// The subtests are Name, Klines/<interval>/limit=<n> (every interval,
// limits 1, 10 and 100), OrderBook/limit=<n> (1, 5, 100), Balances,
// MarketOrder/<side> in <base|quote> (each order then read back with
// QueryOrder by client id, and by exchange id too when the order has one),
// QueryOrderUnknown, UnknownSymbol, InverseSymbol, QuantityTooSmall (1e-12
// in each side and asset), Deposits, DepositAddress, Withdraw (then
// QueryWithdrawal) and QueryWithdrawalUnknown. What the exchange behind
// the adapter must therefore provide: klines of Symbol for every interval
// (at least one row each), both book sides, balances including
// Symbol.Base, Symbol.Quote and Withdrawal.Asset enough for an order of
// either quantity on either side and the withdrawal, and a non-empty
// deposit history. Adapters that implement exgate.OrderManager also run
// Lifecycle/... (lifecycle.go); adapters with exgate.WalletTransfers also
// run Transfers/... (transfer.go). Refused
// orders (unknown or inverse pair, too small) must move no balance and be
// unknown to QueryOrder afterwards.
package exchangetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Setup is one isolated exchange under test with an account able to trade
// and withdraw.
type Setup struct {
	// Exchange is the adapter under test.
	Exchange exgate.Exchange
	// Credential is an account with the permissions read, trade and
	// withdraw.
	Credential exgate.Credential
	// Symbol is a listed pair with both book sides, e.g. BTC/USDT.
	Symbol exgate.Symbol
	// BaseQuantity is a valid order quantity in Symbol.Base that the
	// account can afford on both sides.
	BaseQuantity decimal.Decimal
	// QuoteQuantity is a valid order quantity in Symbol.Quote that the
	// account can afford on both sides.
	QuoteQuantity decimal.Decimal
	// Withdrawal is a valid, affordable withdrawal; the suite sets its
	// ClientWithdrawalID.
	Withdrawal exgate.WithdrawalRequest
	// DepositAddress is a valid deposit address request.
	DepositAddress exgate.DepositAddressRequest
	// Transfer, for an adapter with exgate.WalletTransfers, names an
	// asset and amount the spot wallet holds, to move to the funding
	// wallet and back (transfer.go); the suite sets the wallets and the
	// client id. Unset: the Withdrawal's asset and amount.
	Transfer exgate.TransferRequest
}

// Run runs the conformance suite as subtests of t. Each subtest calls
// newSetup(t) with its own *testing.T, so no subtest sees another's orders
// or withdrawals.
func Run(t *testing.T, newSetup func(t *testing.T) Setup) {
	t.Run("Name", func(t *testing.T) { testName(t, start(t, newSetup)) })
	t.Run("Klines", func(t *testing.T) {
		for _, iv := range exgate.Intervals {
			t.Run(string(iv), func(t *testing.T) {
				for _, limit := range []int{1, 10, exgate.DefaultKlineLimit} {
					t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
						testKlines(t, start(t, newSetup), iv, limit)
					})
				}
			})
		}
	})
	t.Run("OrderBook", func(t *testing.T) {
		for _, limit := range []int{1, 5, exgate.DefaultOrderBookLimit} {
			t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
				testOrderBook(t, start(t, newSetup), limit)
			})
		}
	})
	t.Run("Balances", func(t *testing.T) { testBalances(t, start(t, newSetup)) })
	t.Run("MarketOrder", func(t *testing.T) {
		for _, side := range []exgate.Side{exgate.SideBuy, exgate.SideSell} {
			for _, in := range []exgate.QuantityIn{exgate.InBase, exgate.InQuote} {
				t.Run(fmt.Sprintf("%s in %s", side, quantityInName(in)), func(t *testing.T) {
					testMarketOrder(t, start(t, newSetup), side, in)
				})
			}
		}
	})
	t.Run("QueryOrderUnknown", func(t *testing.T) { testQueryOrderUnknown(t, start(t, newSetup)) })
	t.Run("UnknownSymbol", func(t *testing.T) { testUnknownSymbol(t, start(t, newSetup)) })
	t.Run("InverseSymbol", func(t *testing.T) { testInverseSymbol(t, start(t, newSetup)) })
	t.Run("QuantityTooSmall", func(t *testing.T) { testQuantityTooSmall(t, start(t, newSetup)) })
	t.Run("Deposits", func(t *testing.T) { testDeposits(t, start(t, newSetup)) })
	t.Run("DepositAddress", func(t *testing.T) { testDepositAddress(t, start(t, newSetup)) })
	t.Run("Withdraw", func(t *testing.T) { testWithdraw(t, start(t, newSetup)) })
	t.Run("QueryWithdrawalUnknown", func(t *testing.T) { testQueryWithdrawalUnknown(t, start(t, newSetup)) })
	t.Run("Lifecycle", func(t *testing.T) { runLifecycle(t, newSetup) })
	t.Run("Transfers", func(t *testing.T) { runTransfers(t, newSetup) })
}

// suite is one Setup under test with helpers whose messages name the
// exchange.
type suite struct {
	Setup
	t    *testing.T
	name string
}

// start builds a Setup for t and checks that it is complete.
func start(t *testing.T, newSetup func(t *testing.T) Setup) *suite {
	t.Helper()
	st := newSetup(t)
	if st.Exchange == nil {
		t.Fatal("exchangetest: Setup.Exchange is nil")
	}
	s := &suite{Setup: st, t: t, name: st.Exchange.Name()}
	switch {
	case st.Symbol.Base == "" || st.Symbol.Quote == "":
		s.fatalf("Setup.Symbol %q is incomplete", st.Symbol)
	case !st.BaseQuantity.IsPositive() || !st.QuoteQuantity.IsPositive():
		s.fatalf("Setup.BaseQuantity %s and Setup.QuoteQuantity %s must be positive", st.BaseQuantity, st.QuoteQuantity)
	case st.Withdrawal.Asset == "" || st.Withdrawal.Network == "" || st.Withdrawal.Address == "" || !st.Withdrawal.Amount.IsPositive():
		s.fatalf("Setup.Withdrawal %+v is incomplete", st.Withdrawal)
	case st.DepositAddress.Asset == "" || st.DepositAddress.Network == "":
		s.fatalf("Setup.DepositAddress %+v is incomplete", st.DepositAddress)
	}
	return s
}

// errorf reports a failure prefixed with the exchange's name.
func (s *suite) errorf(format string, args ...any) {
	s.t.Helper()
	s.t.Errorf("%s: %s", s.name, fmt.Sprintf(format, args...))
}

// fatalf reports a failure prefixed with the exchange's name and stops the
// subtest.
func (s *suite) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s: %s", s.name, fmt.Sprintf(format, args...))
}

// show writes v as JSON for failure messages.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

func quantityInName(in exgate.QuantityIn) string {
	if in == exgate.InQuote {
		return "quote"
	}
	return "base"
}

var orderStatuses = []exgate.OrderStatus{
	exgate.OrderPending, exgate.OrderPartiallyFilled, exgate.OrderFilled,
	exgate.OrderCanceled, exgate.OrderRejected, exgate.OrderExpired,
}

var transferStatuses = []exgate.TransferStatus{
	exgate.TransferPending, exgate.TransferCompleted, exgate.TransferFailed, exgate.TransferCanceled,
}

// orderRank orders statuses by how far along an order is: a later read
// never goes back.
func orderRank(st exgate.OrderStatus) int {
	switch {
	case st == exgate.OrderPending:
		return 0
	case st == exgate.OrderPartiallyFilled:
		return 1
	default:
		return 2
	}
}

func testName(t *testing.T, s *suite) {
	// The name is the adapter's registered one (exchange.Adapter.Name):
	// lower-case letters and digits, as flags and variables are made
	// from it.
	ok := s.name != ""
	for _, c := range s.name {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9')
	}
	if !ok {
		s.errorf("Name() = %q, want lower-case letters and digits", s.name)
	}
}

// decimalField parses a plain decimal field, reporting what is wrong with it.
func (s *suite) decimalField(what, v string) (decimal.Decimal, bool) {
	s.t.Helper()
	if !exgate.IsPlainDecimal(v) {
		s.errorf("%s = %q, want a plain decimal (digits, optional fraction, no sign or exponent)", what, v)
		return decimal.Decimal{}, false
	}
	d, err := decimal.NewFromString(v)
	if err != nil {
		s.errorf("%s = %q: %v", what, v, err)
		return decimal.Decimal{}, false
	}
	return d, true
}

func testKlines(t *testing.T, s *suite, iv exgate.Interval, limit int) {
	req := exgate.KlineRequest{Symbol: s.Symbol, Interval: iv, Limit: limit}
	ks, err := s.Exchange.RecentKlines(t.Context(), s.Credential, req)
	if err != nil {
		s.fatalf("RecentKlines(%s %s limit %d): %v", s.Symbol, iv, limit, err)
	}
	if len(ks) == 0 || len(ks) > limit {
		s.fatalf("RecentKlines(%s %s limit %d) returned %d klines, want 1..%d", s.Symbol, iv, limit, len(ks), limit)
	}
	for i, k := range ks {
		what := fmt.Sprintf("kline %d of %d (%s %s, openTime %d)", i, len(ks), s.Symbol, iv, k.OpenTime)
		open := time.UnixMilli(k.OpenTime).UTC()
		if aligned := iv.Start(open); !aligned.Equal(open) {
			s.errorf("%s: openTime %s is not aligned to %s, want %d (%s)", what, open.Format(time.RFC3339Nano), iv, aligned.UnixMilli(), aligned.Format(time.RFC3339))
		}
		if want := iv.Next(iv.Start(open)).UnixMilli() - 1; k.CloseTime != want {
			s.errorf("%s: closeTime = %d, want the next %s start - 1ms = %d", what, k.CloseTime, iv, want)
		}
		if i > 0 && k.OpenTime <= ks[i-1].OpenTime {
			s.errorf("%s: openTime not after the previous kline's %d, want strictly ascending", what, ks[i-1].OpenTime)
		}
		o, ok1 := s.decimalField(what+" openPrice", k.OpenPrice)
		h, ok2 := s.decimalField(what+" highPrice", k.HighPrice)
		l, ok3 := s.decimalField(what+" lowPrice", k.LowPrice)
		c, ok4 := s.decimalField(what+" closePrice", k.ClosePrice)
		s.decimalField(what+" volume", k.Volume)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue
		}
		if l.GreaterThan(o) || l.GreaterThan(c) || h.LessThan(o) || h.LessThan(c) {
			s.errorf("%s: open %s high %s low %s close %s, want low <= open, close <= high", what, o, h, l, c)
		}
	}
}

// checkLevels checks one side of a book: plain decimals, positive
// quantities, prices strictly ordered (descending for bids).
func (s *suite) checkLevels(side string, levels []exgate.Level, descending bool) []decimal.Decimal {
	s.t.Helper()
	prices := make([]decimal.Decimal, 0, len(levels))
	for i, l := range levels {
		what := fmt.Sprintf("%s %s[%d] %s", s.Symbol, side, i, show(l))
		p, ok := s.decimalField(what+" price", l.Price)
		if ok && !p.IsPositive() {
			s.errorf("%s: price %s, want > 0", what, p)
		}
		if q, ok := s.decimalField(what+" quantity", l.Quantity); ok && !q.IsPositive() {
			s.errorf("%s: quantity %s, want > 0", what, q)
		}
		if !ok {
			continue
		}
		if n := len(prices); n > 0 {
			prev := prices[n-1]
			if descending && !p.LessThan(prev) {
				s.errorf("%s: price %s after %s, want bids strictly descending", what, p, prev)
			}
			if !descending && !p.GreaterThan(prev) {
				s.errorf("%s: price %s after %s, want asks strictly ascending", what, p, prev)
			}
		}
		prices = append(prices, p)
	}
	return prices
}

func testOrderBook(t *testing.T, s *suite, limit int) {
	book, err := s.Exchange.OrderBook(t.Context(), s.Credential, exgate.OrderBookRequest{Symbol: s.Symbol, Limit: limit})
	if err != nil {
		s.fatalf("OrderBook(%s limit %d): %v", s.Symbol, limit, err)
	}
	if len(book.Bids) == 0 || len(book.Bids) > limit {
		s.errorf("OrderBook(%s limit %d): %d bids, want 1..%d", s.Symbol, limit, len(book.Bids), limit)
	}
	if len(book.Asks) == 0 || len(book.Asks) > limit {
		s.errorf("OrderBook(%s limit %d): %d asks, want 1..%d", s.Symbol, limit, len(book.Asks), limit)
	}
	bids := s.checkLevels("bids", book.Bids, true)
	asks := s.checkLevels("asks", book.Asks, false)
	if len(bids) > 0 && len(asks) > 0 && !bids[0].LessThan(asks[0]) {
		s.errorf("OrderBook(%s limit %d): best bid %s, best ask %s, want best bid < best ask", s.Symbol, limit, bids[0], asks[0])
	}
}

// balances reads the balances and checks their shape.
func (s *suite) balances() map[string]exgate.Balance {
	s.t.Helper()
	bals, err := s.Exchange.Balances(s.t.Context(), s.Credential)
	if err != nil {
		s.fatalf("Balances: %v", err)
	}
	if len(bals) == 0 {
		s.fatalf("Balances returned none, want the funded account's assets")
	}
	out := make(map[string]exgate.Balance, len(bals))
	for _, b := range bals {
		if b.Asset == "" || exgate.NormalizeAsset(b.Asset) != b.Asset {
			s.errorf("balance %s: asset %q, want an upper-case asset code", show(b), b.Asset)
		}
		if b.Available.IsNegative() || b.Locked.IsNegative() {
			s.errorf("balance %s: want available and locked >= 0", show(b))
		}
		if b.Available.IsZero() && b.Locked.IsZero() {
			s.errorf("balance %s: zero rows must be left out", show(b))
		}
		if _, dup := out[b.Asset]; dup {
			s.errorf("balance %s: asset %s listed twice", show(b), b.Asset)
		}
		out[b.Asset] = b
	}
	return out
}

func testBalances(t *testing.T, s *suite) {
	bals := s.balances()
	for _, asset := range []string{s.Symbol.Base, s.Symbol.Quote, s.Withdrawal.Asset} {
		if _, ok := bals[asset]; !ok {
			s.errorf("Balances: no %s row, want the Setup's funded assets (got %s)", asset, show(bals))
		}
	}
}

// checkOrder checks an order read back from PlaceMarketOrder or QueryOrder.
func (s *suite) checkOrder(what string, o exgate.Order, req exgate.OrderRequest) {
	s.t.Helper()
	js := show(o)
	if o.ID != req.ClientOrderID {
		s.errorf("%s: id %q, want the client order id sent %q; order %s", what, o.ID, req.ClientOrderID, js)
	}
	if o.Exchange != s.name {
		s.errorf("%s: exchange %q, want %q; order %s", what, o.Exchange, s.name, js)
	}
	if o.Asset1 != req.Symbol.Base || o.Asset2 != req.Symbol.Quote {
		s.errorf("%s: asset1/asset2 %s/%s, want %s; order %s", what, o.Asset1, o.Asset2, req.Symbol, js)
	}
	if o.Type != exgate.OrderTypeMarket {
		s.errorf("%s: type %q, want %q; order %s", what, o.Type, exgate.OrderTypeMarket, js)
	}
	if o.Side != req.Side {
		s.errorf("%s: side %q, want %q; order %s", what, o.Side, req.Side, js)
	}
	if !slices.Contains(orderStatuses, o.Status) {
		s.errorf("%s: status %q, want one of %v; order %s", what, o.Status, orderStatuses, js)
	}
	if o.OpenAt <= 0 || o.CloseAt < o.OpenAt {
		s.errorf("%s: openAt %d closeAt %d, want openAt > 0 and closeAt >= openAt; order %s", what, o.OpenAt, o.CloseAt, js)
	}
	if o.Status == exgate.OrderPending && o.CloseAt != o.OpenAt {
		s.errorf("%s: PENDING with closeAt %d, want closeAt == openAt %d; order %s", what, o.CloseAt, o.OpenAt, js)
	}
	if o.Fees != nil {
		if o.Fees.IsNegative() {
			s.errorf("%s: fees %s, want >= 0 or null; order %s", what, o.Fees, js)
		}
		if o.FeesIn == "" {
			s.errorf("%s: fees %s without feesIn; order %s", what, o.Fees, js)
		}
	}
	for name, n := range map[string]*exgate.Number{
		"executedQuantity": o.ExecutedQuantity, "quoteQuantity": o.QuoteQuantity, "averagePrice": o.AveragePrice,
	} {
		if n != nil && n.IsNegative() {
			s.errorf("%s: %s %s, want >= 0 or null; order %s", what, name, n, js)
		}
	}
	if o.Status == exgate.OrderFilled && o.ExecutedQuantity != nil && !o.ExecutedQuantity.IsPositive() {
		s.errorf("%s: FILLED with executedQuantity %s, want > 0; order %s", what, o.ExecutedQuantity, js)
	}
}

func testMarketOrder(t *testing.T, s *suite, side exgate.Side, in exgate.QuantityIn) {
	qty := s.BaseQuantity
	if in == exgate.InQuote {
		qty = s.QuoteQuantity
	}
	req := exgate.OrderRequest{
		Symbol: s.Symbol, Side: side, Quantity: qty, QuantityIn: in, ClientOrderID: exgate.NewID('o'),
	}
	what := fmt.Sprintf("PlaceMarketOrder(%s %s %s %s)", s.Symbol, side, qty, in.Asset(s.Symbol))
	o, err := s.Exchange.PlaceMarketOrder(t.Context(), s.Credential, req)
	if err != nil {
		s.fatalf("%s: %v", what, err)
	}
	s.checkOrder(what, o, req)
	if o.QuantityIn != in.Asset(s.Symbol) {
		s.errorf("%s: quantityIn %q, want the asset code %q; order %s", what, o.QuantityIn, in.Asset(s.Symbol), show(o))
	}
	if !o.Quantity.IsPositive() || o.Quantity.GreaterThan(qty) {
		s.errorf("%s: quantity %s, want > 0 and <= the requested %s (rounded down to the step); order %s", what, o.Quantity, qty, show(o))
	}

	queries := []exgate.OrderQuery{{Symbol: s.Symbol, ClientOrderID: req.ClientOrderID}}
	if o.ExchangeOrderID != "" {
		queries = append(queries, exgate.OrderQuery{Symbol: s.Symbol, ClientOrderID: req.ClientOrderID, ExchangeOrderID: o.ExchangeOrderID})
	}
	for _, q := range queries {
		qwhat := fmt.Sprintf("QueryOrder(%s, clientOrderId %s, exchangeOrderId %q) after %s", s.Symbol, q.ClientOrderID, q.ExchangeOrderID, what)
		got, err := s.Exchange.QueryOrder(t.Context(), s.Credential, q)
		if err != nil {
			s.errorf("%s: %v", qwhat, err)
			continue
		}
		s.checkOrder(qwhat, got, req)
		if got.QuantityIn != s.Symbol.Base && got.QuantityIn != s.Symbol.Quote {
			s.errorf("%s: quantityIn %q, want %s or %s; order %s", qwhat, got.QuantityIn, s.Symbol.Base, s.Symbol.Quote, show(got))
		}
		if got.QuantityIn == o.QuantityIn && !got.Quantity.Equal(o.Quantity.Decimal) {
			s.errorf("%s: quantity %s %s, PlaceMarketOrder said %s %s", qwhat, got.Quantity, got.QuantityIn, o.Quantity, o.QuantityIn)
		}
		if orderRank(got.Status) < orderRank(o.Status) || (o.Status.Final() && got.Status != o.Status) {
			s.errorf("%s: status %s, PlaceMarketOrder said %s; want the same final status or a later one", qwhat, got.Status, o.Status)
		}
		if o.ExchangeOrderID != "" && got.ExchangeOrderID != "" && got.ExchangeOrderID != o.ExchangeOrderID {
			s.errorf("%s: exchangeOrderId %q, PlaceMarketOrder said %q", qwhat, got.ExchangeOrderID, o.ExchangeOrderID)
		}
		if got.OpenAt != o.OpenAt && o.Status.Final() {
			s.errorf("%s: openAt %d, PlaceMarketOrder said %d", qwhat, got.OpenAt, o.OpenAt)
		}
	}
}

func testQueryOrderUnknown(t *testing.T, s *suite) {
	id := exgate.NewID('o')
	o, err := s.Exchange.QueryOrder(t.Context(), s.Credential, exgate.OrderQuery{Symbol: s.Symbol, ClientOrderID: id})
	if !errors.Is(err, exgate.ErrNotFound) {
		s.errorf("QueryOrder(%s, unknown clientOrderId %s) = %s, %v; want an error wrapping exgate.ErrNotFound", s.Symbol, id, show(o), err)
	}
}

// wantCode checks that err is an *exgate.Error with code, and that its
// detail contains every string of mention.
func (s *suite) wantCode(what string, err error, code exgate.Code, mention ...string) {
	s.t.Helper()
	e, ok := errors.AsType[*exgate.Error](err)
	if !ok {
		s.errorf("%s: error %v, want *exgate.Error with code %s", what, err, code)
		return
	}
	if e.Code != code {
		s.errorf("%s: code %s (detail %q), want %s", what, e.Code, e.Detail, code)
	}
	if e.Detail == "" {
		s.errorf("%s: code %s with an empty detail, want an explanation", what, e.Code)
	}
	for _, m := range mention {
		if !strings.Contains(e.Detail, m) {
			s.errorf("%s: detail %q, want it to name %s", what, e.Detail, m)
		}
	}
}

// symbolCalls tries every call that takes a symbol and reports each error.
func (s *suite) symbolCalls(sym exgate.Symbol) map[string]error {
	ctx := s.t.Context()
	out := map[string]error{}
	_, out[fmt.Sprintf("RecentKlines(%s)", sym)] = s.Exchange.RecentKlines(ctx, s.Credential,
		exgate.KlineRequest{Symbol: sym, Interval: exgate.Interval1m, Limit: 10})
	_, out[fmt.Sprintf("OrderBook(%s)", sym)] = s.Exchange.OrderBook(ctx, s.Credential,
		exgate.OrderBookRequest{Symbol: sym, Limit: 10})
	for _, in := range []exgate.QuantityIn{exgate.InBase, exgate.InQuote} {
		qty := s.BaseQuantity
		if (in == exgate.InBase) != (sym.Base == s.Symbol.Base) {
			qty = s.QuoteQuantity // the inverse pair swaps the assets
		}
		req := exgate.OrderRequest{Symbol: sym, Side: exgate.SideBuy, Quantity: qty, QuantityIn: in, ClientOrderID: exgate.NewID('o')}
		_, out[fmt.Sprintf("PlaceMarketOrder(%s BUY %s %s)", sym, qty, in.Asset(sym))] = s.Exchange.PlaceMarketOrder(ctx, s.Credential, req)
	}
	return out
}

func testUnknownSymbol(t *testing.T, s *suite) {
	sym := exgate.Symbol{Base: "NOSUCHCOIN", Quote: s.Symbol.Quote}
	for what, err := range s.symbolCalls(sym) {
		s.wantCode(what, err, exgate.CodeUnknownSymbol)
	}
}

func testInverseSymbol(t *testing.T, s *suite) {
	before := s.balances()
	for what, err := range s.symbolCalls(s.Symbol.Inverse()) {
		s.wantCode(what, err, exgate.CodeUnknownSymbol, s.Symbol.String())
	}
	s.sameBalances("after orders on the inverse pair", before)
}

// sameBalances checks that refused orders moved nothing.
func (s *suite) sameBalances(when string, before map[string]exgate.Balance) {
	s.t.Helper()
	after := s.balances()
	for asset, b := range before {
		a := after[asset]
		if !a.Available.Equal(b.Available) || !a.Locked.Equal(b.Locked) {
			s.errorf("balance of %s %s: %s, before %s; want refused orders to move nothing", asset, when, show(a), show(b))
		}
	}
	for asset, a := range after {
		if _, ok := before[asset]; !ok {
			s.errorf("balance of %s %s: %s appeared; want refused orders to move nothing", asset, when, show(a))
		}
	}
}

func testQuantityTooSmall(t *testing.T, s *suite) {
	tiny := decimal.New(1, -12)
	before := s.balances()
	for _, side := range []exgate.Side{exgate.SideBuy, exgate.SideSell} {
		for _, in := range []exgate.QuantityIn{exgate.InBase, exgate.InQuote} {
			req := exgate.OrderRequest{Symbol: s.Symbol, Side: side, Quantity: tiny, QuantityIn: in, ClientOrderID: exgate.NewID('o')}
			o, err := s.Exchange.PlaceMarketOrder(t.Context(), s.Credential, req)
			what := fmt.Sprintf("PlaceMarketOrder(%s %s %s %s)", s.Symbol, side, tiny, in.Asset(s.Symbol))
			if err == nil {
				s.errorf("%s = %s, want QUANTITY_TOO_SMALL", what, show(o))
				continue
			}
			s.wantCode(what, err, exgate.CodeQuantityTooSmall)
			if _, err := s.Exchange.QueryOrder(t.Context(), s.Credential, exgate.OrderQuery{Symbol: s.Symbol, ClientOrderID: req.ClientOrderID}); !errors.Is(err, exgate.ErrNotFound) {
				s.errorf("QueryOrder after the refused %s: error %v, want exgate.ErrNotFound (nothing sent)", what, err)
			}
		}
	}
	s.sameBalances("after QUANTITY_TOO_SMALL orders", before)
}

// checkDeposits checks the shape and order of a deposit list.
func (s *suite) checkDeposits(what string, ds []exgate.Deposit) {
	s.t.Helper()
	for i, d := range ds {
		dwhat := fmt.Sprintf("%s: deposit %d %s", what, i, show(d))
		if d.ID == "" || d.Asset == "" || d.Network == "" || d.Timestamp <= 0 {
			s.errorf("%s: want id, asset, network and timestamp set", dwhat)
		}
		if exgate.NormalizeAsset(d.Asset) != d.Asset || exgate.NormalizeAsset(d.Network) != d.Network {
			s.errorf("%s: want upper-case asset and network codes", dwhat)
		}
		if !d.Amount.IsPositive() {
			s.errorf("%s: amount %s, want > 0", dwhat, d.Amount)
		}
		if !slices.Contains(transferStatuses, d.Status) {
			s.errorf("%s: status %q, want one of %v", dwhat, d.Status, transferStatuses)
		}
		if d.RawStatus == "" {
			s.errorf("%s: empty rawStatus, want the exchange's own status", dwhat)
		}
		if i > 0 && d.Timestamp > ds[i-1].Timestamp {
			s.errorf("%s: timestamp %d after %d, want newest first", dwhat, d.Timestamp, ds[i-1].Timestamp)
		}
	}
}

func testDeposits(t *testing.T, s *suite) {
	ctx := t.Context()
	all, err := s.Exchange.RecentDeposits(ctx, s.Credential, exgate.DepositFilter{})
	if err != nil {
		s.fatalf("RecentDeposits(no filter): %v", err)
	}
	if len(all) == 0 {
		s.fatalf("RecentDeposits(no filter) returned none, want the account's deposit history")
	}
	s.checkDeposits("RecentDeposits(no filter)", all)

	byAsset := map[string]int{}
	byStatus := map[exgate.TransferStatus]int{}
	for _, d := range all {
		byAsset[d.Asset]++
		byStatus[d.Status]++
	}
	// want: the unfiltered list has a match, so the filtered one must too.
	type filter struct {
		exgate.DepositFilter
		want bool
	}
	var filters []filter
	for asset := range byAsset {
		filters = append(filters, filter{exgate.DepositFilter{Asset: asset}, true})
	}
	for _, st := range transferStatuses {
		filters = append(filters, filter{exgate.DepositFilter{Status: st}, byStatus[st] > 0})
	}
	filters = append(filters, filter{exgate.DepositFilter{Asset: all[0].Asset, Status: all[0].Status}, true})
	for _, f := range filters {
		what := fmt.Sprintf("RecentDeposits(asset %q, status %q)", f.Asset, f.Status)
		got, err := s.Exchange.RecentDeposits(ctx, s.Credential, f.DepositFilter)
		if err != nil {
			s.errorf("%s: %v", what, err)
			continue
		}
		s.checkDeposits(what, got)
		for _, d := range got {
			if (f.Asset != "" && d.Asset != f.Asset) || (f.Status != "" && d.Status != f.Status) {
				s.errorf("%s: deposit %s does not match the filter", what, show(d))
			}
		}
		if f.want && len(got) == 0 {
			s.errorf("%s returned none, but the unfiltered list has matching deposits", what)
		}
	}
}

func testDepositAddress(t *testing.T, s *suite) {
	req := s.DepositAddress
	a, err := s.Exchange.DepositAddress(t.Context(), s.Credential, req)
	what := fmt.Sprintf("DepositAddress(%s on %s)", req.Asset, req.Network)
	if err != nil {
		s.fatalf("%s: %v", what, err)
	}
	if a.Asset != req.Asset || a.Network != req.Network {
		s.errorf("%s: asset %q network %q, want %q and %q; address %s", what, a.Asset, a.Network, req.Asset, req.Network, show(a))
	}
	if a.Address == "" || strings.TrimSpace(a.Address) != a.Address {
		s.errorf("%s: address %q, want a non-empty address without surrounding spaces", what, a.Address)
	}
	if a.Tag != nil && *a.Tag == "" {
		s.errorf("%s: tag is an empty string, want null when the network has no tag", what)
	}
}

// checkWithdrawal checks a withdrawal read back from Withdraw or
// QueryWithdrawal.
func (s *suite) checkWithdrawal(what string, w exgate.Withdrawal, req exgate.WithdrawalRequest) {
	s.t.Helper()
	js := show(w)
	if w.ID != req.ClientWithdrawalID {
		s.errorf("%s: id %q, want the client withdrawal id sent %q; withdrawal %s", what, w.ID, req.ClientWithdrawalID, js)
	}
	if w.Exchange != s.name {
		s.errorf("%s: exchange %q, want %q; withdrawal %s", what, w.Exchange, s.name, js)
	}
	if w.Asset != req.Asset || w.Network != req.Network || w.ToAddress != req.Address {
		s.errorf("%s: asset %q network %q toAddress %q, want %q %q %q; withdrawal %s",
			what, w.Asset, w.Network, w.ToAddress, req.Asset, req.Network, req.Address, js)
	}
	if req.Tag != "" && w.Tag != req.Tag {
		s.errorf("%s: tag %q, want %q; withdrawal %s", what, w.Tag, req.Tag, js)
	}
	if !w.Amount.IsPositive() || w.Amount.GreaterThan(req.Amount) {
		s.errorf("%s: amount %s, want > 0 and <= the requested %s; withdrawal %s", what, w.Amount, req.Amount, js)
	}
	if w.Fees != nil {
		if w.Fees.IsNegative() {
			s.errorf("%s: fees %s, want >= 0 or null; withdrawal %s", what, w.Fees, js)
		}
		if sum := w.Amount.Add(w.Fees.Decimal); !w.TotalAmount.Equal(sum) {
			s.errorf("%s: totalAmount %s, want amount + fees = %s; withdrawal %s", what, w.TotalAmount, sum, js)
		}
	}
	if !slices.Contains(transferStatuses, w.Status) {
		s.errorf("%s: status %q, want one of %v; withdrawal %s", what, w.Status, transferStatuses, js)
	}
	if w.RawStatus == "" {
		s.errorf("%s: empty rawStatus, want the exchange's own status; withdrawal %s", what, js)
	}
	if w.Timestamp <= 0 {
		s.errorf("%s: timestamp %d, want > 0; withdrawal %s", what, w.Timestamp, js)
	}
}

func testWithdraw(t *testing.T, s *suite) {
	req := s.Withdrawal
	req.ClientWithdrawalID = exgate.NewID('w')
	what := fmt.Sprintf("Withdraw(%s %s on %s to %s)", req.Amount, req.Asset, req.Network, req.Address)
	w, err := s.Exchange.Withdraw(t.Context(), s.Credential, req)
	if err != nil {
		s.fatalf("%s: %v", what, err)
	}
	s.checkWithdrawal(what, w, req)

	q := exgate.WithdrawalQuery{Asset: req.Asset, ClientWithdrawalID: req.ClientWithdrawalID, ExchangeID: w.ExchangeID}
	qwhat := fmt.Sprintf("QueryWithdrawal(%s, clientWithdrawalId %s, exchangeId %q) after %s", q.Asset, q.ClientWithdrawalID, q.ExchangeID, what)
	got, err := s.Exchange.QueryWithdrawal(t.Context(), s.Credential, q)
	if err != nil {
		s.fatalf("%s: %v", qwhat, err)
	}
	s.checkWithdrawal(qwhat, got, req)
	if !got.Amount.Equal(w.Amount.Decimal) {
		s.errorf("%s: amount %s, Withdraw said %s", qwhat, got.Amount, w.Amount)
	}
	if w.Status.Final() && got.Status != w.Status {
		s.errorf("%s: status %s, Withdraw said the final %s", qwhat, got.Status, w.Status)
	}
	if w.ExchangeID != "" && got.ExchangeID != "" && got.ExchangeID != w.ExchangeID {
		s.errorf("%s: exchangeId %q, Withdraw said %q", qwhat, got.ExchangeID, w.ExchangeID)
	}
}

func testQueryWithdrawalUnknown(t *testing.T, s *suite) {
	q := exgate.WithdrawalQuery{Asset: s.Withdrawal.Asset, ClientWithdrawalID: exgate.NewID('w')}
	w, err := s.Exchange.QueryWithdrawal(t.Context(), s.Credential, q)
	if !errors.Is(err, exgate.ErrNotFound) {
		s.errorf("QueryWithdrawal(%s, unknown clientWithdrawalId %s) = %s, %v; want an error wrapping exgate.ErrNotFound", q.Asset, q.ClientWithdrawalID, show(w), err)
	}
}
