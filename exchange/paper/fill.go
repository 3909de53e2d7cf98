package paper

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// bookDepth is how many levels a side of the live book a paper order can
// fill against at placement (the exchanges' own order-book limit caps it).
const bookDepth = 1000

// restingDepth is how many levels a side the watcher reads to fill a
// resting order: a resting order fills at its own price, against the
// levels that cross it, and 100 is the cheapest depth of most exchanges.
const restingDepth = 100

// market is a pair's rules as the real exchange lists them.
type market struct {
	sym                             exgate.Symbol
	step, tick, minQty, minNotional decimal.Decimal
}

// market reads the rules of sym from the real exchange.
func (e *Exchange) market(ctx context.Context, cred exgate.Credential, sym exgate.Symbol) (market, error) {
	list, err := e.Symbols(ctx, cred, exgate.SymbolFilter{Symbol: sym})
	if err != nil {
		return market{}, err
	}
	if len(list) == 0 || list[0].Asset1 != sym.Base || list[0].Asset2 != sym.Quote {
		return market{}, exgate.Errorf(exgate.CodeUnknownSymbol, "%s is not listed on %s", sym, e.live.Name())
	}
	info := list[0]
	if info.Status != exgate.SymbolTrading {
		return market{}, exgate.Errorf(exgate.CodeOrderRejected, "%s does not trade on %s now (%s)", sym, e.live.Name(), info.Status)
	}
	m := market{sym: sym}
	for _, f := range []struct {
		text string
		to   *decimal.Decimal
	}{{info.QuantityStep, &m.step}, {info.PriceStep, &m.tick}, {info.MinQuantity, &m.minQty}, {info.MinNotional, &m.minNotional}} {
		d, err := decimal.NewFromString(f.text)
		if err != nil || d.IsNegative() {
			return market{}, exgate.Errorf(exgate.CodeExchangeError, "%s lists %s with an unreadable rule %q", e.live.Name(), sym, f.text)
		}
		*f.to = d
	}
	return m, nil
}

// roundDown rounds q down to a multiple of step (no step: q).
func roundDown(q, step decimal.Decimal) decimal.Decimal {
	if !step.IsPositive() {
		return q
	}
	n, _ := q.QuoRem(step, 0)
	return n.Mul(step)
}

// take is what an order takes from one level of the book.
type take struct{ price, qty decimal.Decimal }

// level is one parsed level of the live book.
type level struct{ price, qty decimal.Decimal }

// side returns the levels of the book an order of side s takes from:
// the asks for a buy, the bids for a sell.
func side(book exgate.OrderBook, s exgate.Side) ([]level, error) {
	src := book.Asks
	if s == exgate.SideSell {
		src = book.Bids
	}
	out := make([]level, 0, len(src))
	for _, l := range src {
		p, err := decimal.NewFromString(l.Price)
		if err != nil {
			return nil, fmt.Errorf("book level price %q: %w", l.Price, err)
		}
		q, err := decimal.NewFromString(l.Quantity)
		if err != nil {
			return nil, fmt.Errorf("book level quantity %q: %w", l.Quantity, err)
		}
		out = append(out, level{price: p, qty: q})
	}
	return out, nil
}

// crosses reports whether a level at price trades with an order of side
// s at limit.
func crosses(s exgate.Side, price, limit decimal.Decimal) bool {
	if s == exgate.SideBuy {
		return price.LessThanOrEqual(limit)
	}
	return price.GreaterThanOrEqual(limit)
}

// walk takes from levels, best first, until qty is filled: qty is in the
// base asset, or with inQuote in the quote asset (then each level gives
// the whole steps of base the rest pays for). With a limit it stops at
// the first level that does not cross it. It returns the takes and
// whether qty was filled (with inQuote: less than one step is left).
func walk(levels []level, m market, s exgate.Side, qty decimal.Decimal, inQuote bool, limit *decimal.Decimal) ([]take, bool) {
	var out []take
	left := qty
	for _, l := range levels {
		if !left.IsPositive() {
			return out, true
		}
		if limit != nil && !crosses(s, l.price, *limit) {
			return out, false
		}
		if !l.price.IsPositive() || !l.qty.IsPositive() {
			continue
		}
		q := decimal.Min(l.qty, left)
		if inQuote {
			q = decimal.Min(l.qty, roundDown(left.Div(l.price), m.step))
			if !q.IsPositive() {
				return out, true // less than one step is left
			}
			left = left.Sub(q.Mul(l.price))
		} else {
			left = left.Sub(q)
		}
		out = append(out, take{price: l.price, qty: q})
	}
	return out, !left.IsPositive()
}

// sum adds up takes: the base and quote amounts exchanged.
func sum(ts []take) (base, quote decimal.Decimal) {
	base, quote = decimal.Zero, decimal.Zero
	for _, t := range ts {
		base = base.Add(t.qty)
		quote = quote.Add(t.qty.Mul(t.price))
	}
	return base, quote
}

// book reads the live book of m's pair, depth levels a side.
func (e *Exchange) book(ctx context.Context, cred exgate.Credential, sym exgate.Symbol, depth int) (exgate.OrderBook, error) {
	return e.OrderBook(ctx, publicCred(cred), exgate.OrderBookRequest{Symbol: sym, Limit: depth})
}
