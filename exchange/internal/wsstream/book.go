package wsstream

import (
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Book is an order book kept from a snapshot plus updates: each side
// sorted best first (bids descending, asks ascending by price), one level
// per price. Prices are compared as decimals, so "100.10" and "100.1" are
// the same level; each level keeps the strings the exchange sent. A Book
// is not safe for concurrent use: one stream goroutine owns it.
type Book struct {
	bids, asks []level
}

type level struct {
	price decimal.Decimal
	exgate.Level
}

// Side names a side of the book.
type Side int

// The sides of a book.
const (
	Bid Side = iota
	Ask
)

// Reset empties the book (before a new snapshot).
func (b *Book) Reset() {
	b.bids, b.asks = b.bids[:0], b.asks[:0]
}

// Set puts a level into the book: quantity zero (in any notation)
// removes the price, anything else replaces or adds it. Price and
// quantity must be decimals; a negative quantity is an error.
func (b *Book) Set(side Side, price, quantity string) error {
	p, err := decimal.NewFromString(price)
	if err != nil {
		return fmt.Errorf("book level price %q: %w", price, err)
	}
	q, err := decimal.NewFromString(quantity)
	if err != nil {
		return fmt.Errorf("book level quantity %q: %w", quantity, err)
	}
	if q.IsNegative() || !p.IsPositive() {
		return fmt.Errorf("book level %s @ %s out of range", quantity, price)
	}
	levels := b.side(side)
	i, found := slices.BinarySearchFunc(*levels, p, func(l level, p decimal.Decimal) int {
		if side == Bid {
			return p.Cmp(l.price)
		}
		return l.price.Cmp(p)
	})
	switch {
	case q.IsZero() && found:
		*levels = slices.Delete(*levels, i, i+1)
	case q.IsZero():
	case found:
		(*levels)[i].Level = exgate.Level{Price: price, Quantity: quantity}
	default:
		*levels = slices.Insert(*levels, i, level{price: p, Level: exgate.Level{Price: price, Quantity: quantity}})
	}
	return nil
}

// Truncate drops the levels beyond the best n of each side, as an exchange
// that keeps only n levels per subscription does (Kraken).
func (b *Book) Truncate(n int) {
	if len(b.bids) > n {
		b.bids = b.bids[:n]
	}
	if len(b.asks) > n {
		b.asks = b.asks[:n]
	}
}

// Levels returns the best n levels of a side (all when n <= 0), as sent.
func (b *Book) Levels(side Side, n int) []exgate.Level {
	levels := *b.side(side)
	if n > 0 && len(levels) > n {
		levels = levels[:n]
	}
	out := make([]exgate.Level, len(levels))
	for i, l := range levels {
		out[i] = l.Level
	}
	return out
}

// Snapshot returns a copy of the best depth levels of both sides, with
// prices and quantities in plain decimal notation (docs/contract.md 2.3).
func (b *Book) Snapshot(depth int) exgate.OrderBook {
	ob := exgate.OrderBook{Bids: b.Levels(Bid, depth), Asks: b.Levels(Ask, depth)}
	for _, side := range [][]exgate.Level{ob.Bids, ob.Asks} {
		for i, l := range side {
			side[i] = exgate.Level{Price: plain(l.Price), Quantity: plain(l.Quantity)}
		}
	}
	return ob
}

// Crossed reports whether the best bid is at or above the best ask, which
// a consistent book never is: a sign of a missed update.
func (b *Book) Crossed() bool {
	return len(b.bids) > 0 && len(b.asks) > 0 && b.bids[0].price.Cmp(b.asks[0].price) >= 0
}

func (b *Book) side(s Side) *[]level {
	if s == Bid {
		return &b.bids
	}
	return &b.asks
}

// plain writes a decimal string without an exponent; strings already
// plain are returned as they are, so the exchange's digits are kept.
func plain(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == 'e' || s[i] == 'E' {
			d, err := decimal.NewFromString(s)
			if err != nil {
				return s
			}
			return d.String()
		}
	}
	return s
}
