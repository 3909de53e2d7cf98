package risk

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// usdAssets count at 1 USD each (docs/contract.md 2.8).
var usdAssets = map[string]bool{"USD": true, "USDT": true, "USDC": true, "FDUSD": true}

// pricer reads the prices the checks need from the exchange's order
// books: the live book the exchange streams when there is one (live),
// else through the gateway's (coalescing) adapter.
type pricer struct {
	ex    exgate.Exchange
	cred  exgate.Credential
	depth int
	live  *heldBooks
}

// noValue is the fail-closed refusal: without a price the order is not
// checked, so it is not sent.
func noValue(what string, err error) error {
	return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second,
		Detail: "the risk limits need " + what + ", which cannot be had from the exchange now; nothing was sent", Err: err}
}

// book returns sym's book, at least depth levels a side where the book
// has them. A live book has up to exgate.MaxStreamDepth.
func (p pricer) book(ctx context.Context, sym exgate.Symbol, depth int) (exgate.OrderBook, error) {
	if depth <= exgate.MaxStreamDepth {
		if b, ok := p.live.book(p.cred.Exchange, sym); ok {
			return b, nil
		}
	}
	return p.ex.OrderBook(ctx, p.cred, exgate.OrderBookRequest{Symbol: sym, Limit: depth})
}

// midOf is the midpoint of a book's best bid and ask.
func midOf(b exgate.OrderBook) (decimal.Decimal, bool) {
	if len(b.Bids) == 0 || len(b.Asks) == 0 {
		return decimal.Decimal{}, false
	}
	bid, err1 := decimal.NewFromString(b.Bids[0].Price)
	ask, err2 := decimal.NewFromString(b.Asks[0].Price)
	if err1 != nil || err2 != nil || !bid.IsPositive() || !ask.IsPositive() {
		return decimal.Decimal{}, false
	}
	return bid.Add(ask).Div(decimal.NewFromInt(2)), true
}

// mid is the midpoint of sym's book.
func (p pricer) mid(ctx context.Context, sym exgate.Symbol) (decimal.Decimal, error) {
	b, err := p.book(ctx, sym, 5)
	if err != nil {
		return decimal.Decimal{}, noValue("the mid price of "+sym.String(), err)
	}
	m, ok := midOf(b)
	if !ok {
		return decimal.Decimal{}, noValue("the mid price of "+sym.String(), fmt.Errorf("one side of the %s book is empty", sym))
	}
	return m, nil
}

// usd is the USD value of one unit of asset: 1 for USD and the
// stablecoins, else its mid against USDT, else against USD, on the same
// exchange.
func (p pricer) usd(ctx context.Context, asset string) (decimal.Decimal, error) {
	if usdAssets[asset] {
		return decimal.NewFromInt(1), nil
	}
	var last error
	for _, q := range []string{"USDT", "USD"} {
		b, err := p.book(ctx, exgate.Symbol{Base: asset, Quote: q}, 5)
		if err != nil {
			last = err
			continue
		}
		if m, ok := midOf(b); ok {
			return m, nil
		}
		last = fmt.Errorf("the %s/%s book is empty", asset, q)
	}
	return decimal.Decimal{}, noValue("the USD value of "+asset, last)
}

// checkBand applies the price band: a limit order's price, or a market
// order's expected average price walked from the book, at most band
// percent from the mid on the side it trades.
func (p pricer) checkBand(ctx context.Context, o Order, band decimal.Decimal) error {
	b, err := p.book(ctx, o.Symbol, p.depth)
	if err != nil {
		return noValue("the order book of "+o.Symbol.String(), err)
	}
	mid, ok := midOf(b)
	if !ok {
		return noValue("the mid price of "+o.Symbol.String(), fmt.Errorf("one side of the %s book is empty", o.Symbol))
	}
	hundred := decimal.NewFromInt(100)
	up := mid.Mul(hundred.Add(band)).Div(hundred)
	down := mid.Mul(hundred.Sub(band)).Div(hundred)
	price := o.Price
	if price == nil {
		levels := b.Asks
		if o.Side == exgate.SideSell {
			levels = b.Bids
		}
		avg, ok := walk(levels, o.Quantity, o.QuantityIn == exgate.InQuote)
		if !ok {
			return noValue("the expected price of this market order", fmt.Errorf("the %s book has no levels on its side", o.Symbol))
		}
		price = &avg
	}
	if o.Side == exgate.SideBuy && price.GreaterThan(up) {
		return exgate.RiskRefusal(exgate.LimitPriceBand, price.String(), up.String(),
			"a buy at %s is more than %s%% above the mid price %s (at most %s)", price, band, mid, up)
	}
	if o.Side == exgate.SideSell && price.LessThan(down) {
		return exgate.RiskRefusal(exgate.LimitPriceBand, price.String(), down.String(),
			"a sell at %s is more than %s%% below the mid price %s (at least %s)", price, band, mid, down)
	}
	return nil
}

// walk is the average price of taking qty (in the quote asset when
// inQuote) from levels, best first; what the levels cannot fill is left
// out. It reports false when nothing can be taken.
func walk(levels []exgate.Level, qty decimal.Decimal, inQuote bool) (decimal.Decimal, bool) {
	var base, quote decimal.Decimal
	left := qty
	for _, l := range levels {
		if !left.IsPositive() {
			break
		}
		price, err1 := decimal.NewFromString(l.Price)
		size, err2 := decimal.NewFromString(l.Quantity)
		if err1 != nil || err2 != nil || !price.IsPositive() || !size.IsPositive() {
			continue
		}
		take := size
		if inQuote {
			if v := size.Mul(price); v.GreaterThan(left) {
				take = left.Div(price)
			}
			left = left.Sub(take.Mul(price))
		} else {
			take = decimal.Min(size, left)
			left = left.Sub(take)
		}
		base = base.Add(take)
		quote = quote.Add(take.Mul(price))
	}
	if !base.IsPositive() {
		return decimal.Decimal{}, false
	}
	return quote.Div(base), true
}
