package exgate

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Side is BUY or SELL.
type Side string

// Order sides.
const (
	SideBuy  Side = "BUY"
	SideSell Side = "SELL"
)

// ParseSide accepts BUY or SELL in any case.
func ParseSide(s string) (Side, error) {
	switch Side(strings.ToUpper(s)) {
	case SideBuy:
		return SideBuy, nil
	case SideSell:
		return SideSell, nil
	}
	return "", fmt.Errorf("side must be BUY or SELL, not %q", s)
}

// QuantityIn says which asset of the pair an order quantity is expressed in.
type QuantityIn int

// The two assets an order quantity can be expressed in.
const (
	InBase  QuantityIn = iota + 1 // asset1
	InQuote                       // asset2
)

// Asset returns the asset code q refers to in s.
func (q QuantityIn) Asset(s Symbol) string {
	if q == InQuote {
		return s.Quote
	}
	return s.Base
}

// ParseQuantityIn accepts asset1, asset2 or either asset's own code, in any
// case.
func ParseQuantityIn(s string, sym Symbol) (QuantityIn, error) {
	switch u := strings.ToUpper(strings.TrimSpace(s)); u {
	case "ASSET1", sym.Base:
		return InBase, nil
	case "ASSET2", sym.Quote:
		return InQuote, nil
	}
	return 0, fmt.Errorf("quantityIn must be asset1, asset2, %s or %s, not %q", sym.Base, sym.Quote, s)
}

// OrderStatus is the normalized state of an order.
type OrderStatus string

// Order states (docs/contract.md 2.3). PENDING means accepted but not yet known to
// be filled; it is also the state of an order whose outcome is being
// reconciled.
const (
	OrderPending         OrderStatus = "PENDING"
	OrderPartiallyFilled OrderStatus = "PARTIALLY_FILLED"
	OrderFilled          OrderStatus = "FILLED"
	OrderCanceled        OrderStatus = "CANCELED"
	OrderRejected        OrderStatus = "REJECTED"
	OrderExpired         OrderStatus = "EXPIRED"
	// OrderTest is the status of an order checked with test: true and
	// never placed (docs/contract.md 2.4).
	OrderTest OrderStatus = "TEST"
)

// Final reports whether the status can no longer change. A market order
// that is PARTIALLY_FILLED may still fill, so it is not final.
func (s OrderStatus) Final() bool {
	switch s {
	case OrderFilled, OrderCanceled, OrderRejected, OrderExpired, OrderTest:
		return true
	}
	return false
}

// OrderRequest is a validated market order.
type OrderRequest struct {
	Symbol     Symbol
	Side       Side
	Quantity   decimal.Decimal
	QuantityIn QuantityIn
	// ClientOrderID is the gateway's id for the order, sent to the
	// exchange as its client order id: at most 18 characters of [a-z0-9],
	// accepted by every exchange's client id rules.
	ClientOrderID string
	// Inverted records that the client named the pair the other way round
	// (docs/contract.md 2.4): Symbol, Side and QuantityIn are already those of
	// the listed pair, and the gateway answers with Order.Inverted.
	// Adapters ignore it.
	Inverted bool `json:",omitempty"`
}

// OrderQuery names an order placed through PlaceMarketOrder.
type OrderQuery struct {
	Symbol        Symbol
	ClientOrderID string
	// ExchangeOrderID is the exchange's own id when the gateway knows it.
	ExchangeOrderID string
}

// Order is a market order as the API returns it. The spec fields come first;
// the rest are the gateway's additions.
type Order struct {
	ID         string      `json:"id"`
	Asset1     string      `json:"asset1"`
	Asset2     string      `json:"asset2"`
	Status     OrderStatus `json:"status"`
	Type       string      `json:"type"`
	Side       Side        `json:"side"`
	Quantity   Number      `json:"quantity"`
	QuantityIn string      `json:"quantityIn"`
	Fees       *Number     `json:"fees"`
	FeesIn     string      `json:"feesIn"`
	OpenAt     int64       `json:"openAt"`
	CloseAt    int64       `json:"closeAt"`

	Exchange        string `json:"exchange"`
	ClientOrderID   string `json:"clientOrderId,omitempty"`
	ExchangeOrderID string `json:"exchangeOrderId,omitempty"`
	// ExecutedQuantity is the filled amount of asset1, QuoteQuantity the
	// amount of asset2 exchanged, AveragePrice their ratio.
	ExecutedQuantity *Number `json:"executedQuantity"`
	QuoteQuantity    *Number `json:"quoteQuantity"`
	AveragePrice     *Number `json:"averagePrice"`
	RawStatus        string  `json:"rawStatus,omitempty"`

	// Price is a limit order's price in asset2 per asset1, nil (null) for
	// a market order; TimeInForce and PostOnly are a limit order's.
	Price       *Number     `json:"price"`
	TimeInForce TimeInForce `json:"timeInForce,omitempty"`
	PostOnly    bool        `json:"postOnly"`
	// Reason says why an order is REJECTED: the problem code and detail
	// of the refusal (docs/contract.md 2.4).
	Reason *Reason `json:"reason,omitempty"`
	// Paper is true for an order of a paper key (docs/contract.md 2.9).
	Paper bool `json:"paper,omitempty"`
}

// Reason is why an order or a withdrawal was refused or found never
// placed.
type Reason struct {
	Code   Code   `json:"code"`
	Detail string `json:"detail"`
}

// Order types (docs/contract.md 2.4).
const (
	OrderTypeMarket = "MARKET"
	OrderTypeLimit  = "LIMIT"
)

// Advances reports whether next is a later state of the same order than
// o: a final status after an open one, PARTIALLY_FILLED after PENDING, or
// more executed while it stays open. A final order never advances, so a
// stale or repeated update (a stream replaying an order after a
// reconnect, a read that raced a fill) cannot move it back.
func (o Order) Advances(next Order) bool {
	rank := func(s OrderStatus) int {
		switch {
		case s.Final():
			return 2
		case s == OrderPartiallyFilled:
			return 1
		}
		return 0
	}
	if o.Status.Final() {
		return false
	}
	if r0, r1 := rank(o.Status), rank(next.Status); r1 != r0 {
		return r1 > r0
	}
	executed := func(o Order) decimal.Decimal {
		if o.ExecutedQuantity == nil {
			return decimal.Zero
		}
		return o.ExecutedQuantity.Decimal
	}
	return executed(next).GreaterThan(executed(o))
}
