package exgate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// OrderManager is the full order lifecycle of docs/contract.md 2.4: limit orders,
// cancels, open and recent orders, fills, markets, recent withdrawals and
// test orders. It is a capability apart from Exchange, found by type
// assertion, so that an adapter can gain it without the others changing;
// the HTTP API answers 501 NOT_IMPLEMENTED on an exchange whose adapter
// lacks it.
//
// Each method maps onto the exchange's own calls:
//
//	             Binance Spot                 Kraken Spot                Gate.io Spot v4
//	limit        POST /api/v3/order LIMIT,    AddOrder ordertype=limit,  POST /spot/orders type=limit,
//	             LIMIT_MAKER (postOnly)       oflags=post, timeinforce   time_in_force gtc/ioc/fok/poc
//	test         POST /api/v3/order/test      AddOrder validate=true     local checks
//	cancel       DELETE /api/v3/order by      CancelOrder by cl_ord_id   DELETE /spot/orders/{t-text}
//	             origClientOrderId
//	open         GET /api/v3/openOrders       OpenOrders                 GET /spot/open_orders
//	recent       GET /api/v3/allOrders        ClosedOrders + OpenOrders  GET /spot/orders?status=finished
//	fills        GET /api/v3/myTrades         TradesHistory              GET /spot/my_trades
//	symbols      GET /api/v3/exchangeInfo     AssetPairs                 GET /spot/currency_pairs
//	withdrawals  GET /sapi/v1/capital/        WithdrawStatus             GET /wallet/withdrawals
//	             withdraw/history
type OrderManager interface {
	LimitOrders
	OrderHistory
	SymbolLister
	// RecentWithdrawals returns withdrawals newest first, filtered by the
	// optional asset and status, including those made outside the
	// gateway.
	RecentWithdrawals(ctx context.Context, cred Credential, f WithdrawalFilter) ([]Withdrawal, error)
}

// LimitOrders places, tests and cancels orders.
type LimitOrders interface {
	// PlaceLimitOrder sends one limit order carrying req.ClientOrderID;
	// never retried by the adapter. The quantity has been rounded down to
	// the market's step and the price checked against its tick by the
	// caller only when the caller knows the market; the adapter checks
	// again. Returns the errors of PlaceMarketOrder, ORDER_REJECTED for a
	// postOnly order that would trade, and INVALID_PARAMETER (param
	// price) for a price off the tick.
	PlaceLimitOrder(ctx context.Context, cred Credential, req LimitOrderRequest) (Order, error)
	// TestOrder checks a market or limit order as PlaceMarketOrder and
	// PlaceLimitOrder would (with the exchange's own test or validate
	// call where it has one) and returns the Order as it would be sent,
	// status TEST. Nothing is placed.
	TestOrder(ctx context.Context, cred Credential, req TestOrderRequest) (Order, error)
	// CancelOrder cancels an open order by its client order id. Returns
	// the order as it is after the cancel: CANCELED, or its final status
	// when it ended first (FILLED, EXPIRED). Returns an error wrapping
	// ErrNotFound when the exchange has no such order; EXCHANGE_TIMEOUT
	// when the outcome is unknown (the caller then reads the order).
	CancelOrder(ctx context.Context, cred Credential, req CancelRequest) (Order, error)
}

// OrderHistory reads orders and fills, including those placed outside the
// gateway (with the exchange's id and no client id of the gateway's).
type OrderHistory interface {
	// OpenOrders returns the open orders (PENDING or PARTIALLY_FILLED),
	// newest first, of f.Symbol or of every pair when it is zero.
	OpenOrders(ctx context.Context, cred Credential, f OrderFilter) ([]Order, error)
	// RecentOrders returns at most f.Limit orders of f.Symbol, open and
	// closed, newest first.
	RecentOrders(ctx context.Context, cred Credential, f OrderFilter) ([]Order, error)
	// Fills returns at most f.Limit fills of f.Symbol, newest first.
	Fills(ctx context.Context, cred Credential, f OrderFilter) ([]Fill, error)
}

// SymbolLister lists the exchange's markets.
type SymbolLister interface {
	// Symbols returns the markets, of f.Symbol only when it is not zero
	// (an empty list when it is not listed).
	Symbols(ctx context.Context, cred Credential, f SymbolFilter) ([]SymbolInfo, error)
}

// LookupSymbol finds sym among l's markets: its market, or, when only
// the inverse pair is listed, inverse true and the inverse's market. Not
// listed either way is found false. An error of the lister's first call
// is returned as it is; one of the inverse's is taken for not listed.
func LookupSymbol(ctx context.Context, l SymbolLister, cred Credential, sym Symbol) (info SymbolInfo, inverse, found bool, err error) {
	infos, err := l.Symbols(ctx, cred, SymbolFilter{Symbol: sym})
	if err != nil {
		return SymbolInfo{}, false, false, err
	}
	if len(infos) > 0 {
		return infos[0], false, true, nil
	}
	if inv, err := l.Symbols(ctx, cred, SymbolFilter{Symbol: sym.Inverse()}); err == nil && len(inv) > 0 {
		return inv[0], true, true, nil
	}
	return SymbolInfo{}, false, false, nil
}

// ListedSymbol is sym's market on l's exchange. A pair not listed is
// UNKNOWN_SYMBOL, naming the inverse pair when that one is listed
// (docs/contract.md 2.3): the one wording of that rule, for the API's
// routes and the stream's subscriptions alike.
func ListedSymbol(ctx context.Context, l SymbolLister, cred Credential, sym Symbol) (SymbolInfo, error) {
	info, inverse, found, err := LookupSymbol(ctx, l, cred, sym)
	switch {
	case err != nil:
		return SymbolInfo{}, err
	case inverse:
		return SymbolInfo{}, Errorf(CodeUnknownSymbol, "%s is not listed on %s; the pair is listed the other way round as %s", sym, cred.Exchange, sym.Inverse())
	case !found:
		return SymbolInfo{}, Errorf(CodeUnknownSymbol, "%s is not listed on %s", sym, cred.Exchange)
	}
	return info, nil
}

// TimeInForce says how long a limit order works.
type TimeInForce string

// Times in force (docs/contract.md 2.4).
const (
	// GTC rests on the book until filled or canceled.
	GTC TimeInForce = "GTC"
	// IOC fills what it can at once; the rest expires.
	IOC TimeInForce = "IOC"
	// FOK fills completely at once or not at all (EXPIRED).
	FOK TimeInForce = "FOK"
)

// ParseTimeInForce accepts GTC, IOC or FOK in any case.
func ParseTimeInForce(s string) (TimeInForce, error) {
	switch t := TimeInForce(strings.ToUpper(s)); t {
	case GTC, IOC, FOK:
		return t, nil
	}
	return "", fmt.Errorf("timeInForce must be GTC, IOC or FOK, not %q", s)
}

// LimitOrderRequest is a validated limit order. Quantity is in the base
// asset (asset1), Price in the quote asset per base asset.
type LimitOrderRequest struct {
	Symbol      Symbol
	Side        Side
	Quantity    decimal.Decimal
	Price       decimal.Decimal
	TimeInForce TimeInForce
	// PostOnly: the order must rest on the book; one that would trade at
	// once is refused (ORDER_REJECTED). Only with GTC.
	PostOnly bool
	// ClientOrderID is the gateway's id, as OrderRequest.ClientOrderID.
	ClientOrderID string
}

// Validate checks what does not depend on the market: a positive
// quantity and price, a known side and time in force, postOnly only with
// GTC. The errors name the parameter.
func (r LimitOrderRequest) Validate() error {
	switch {
	case r.Side != SideBuy && r.Side != SideSell:
		return ParamError("side", "side must be BUY or SELL, not %q", r.Side)
	case !r.Quantity.IsPositive():
		return ParamError("quantity", "quantity must be greater than zero")
	case !r.Price.IsPositive():
		return ParamError("price", "price must be greater than zero")
	}
	if _, err := ParseTimeInForce(string(r.TimeInForce)); err != nil {
		return ParamError("timeInForce", "%v", err)
	}
	if r.PostOnly && r.TimeInForce != GTC {
		return ParamError("postOnly", "postOnly works only with timeInForce GTC, not %s", r.TimeInForce)
	}
	return nil
}

// TestOrderRequest is an order to check without placing it: exactly one of
// Market and Limit is set.
type TestOrderRequest struct {
	Market *OrderRequest
	Limit  *LimitOrderRequest
}

// CancelRequest names the order to cancel. ClientOrderID is the gateway's
// id of the order (its client order id on the exchange); ExchangeOrderID
// is the exchange's own id when known. Cancels go by client order id, which
// can name no other order.
type CancelRequest struct {
	Symbol          Symbol
	ClientOrderID   string
	ExchangeOrderID string
}

// OrderFilter narrows OpenOrders, RecentOrders and Fills. A zero Symbol
// means every pair (OpenOrders only); Limit <= 0 means the default.
type OrderFilter struct {
	Symbol Symbol
	Limit  int
}

// Limits of the order history routes (docs/contract.md 2.4).
const (
	DefaultRecentLimit = 100
	MaxRecentLimit     = 500
)

// Fill is one trade of an order. OrderID is the gateway's id when the
// gateway placed the order, else the exchange's. Quantity is in asset1,
// QuoteQuantity in asset2, Price in asset2 per asset1.
type Fill struct {
	ID            string `json:"id"`
	OrderID       string `json:"orderId"`
	Asset1        string `json:"asset1"`
	Asset2        string `json:"asset2"`
	Side          Side   `json:"side"`
	Price         Number `json:"price"`
	Quantity      Number `json:"quantity"`
	QuoteQuantity Number `json:"quoteQuantity"`
	Fee           Number `json:"fee"`
	FeeIn         string `json:"feeIn"`
	Maker         bool   `json:"maker"`
	Timestamp     int64  `json:"timestamp"`
	// ClientOrderID is the exchange's client order id of the order: the
	// gateway's id when the gateway placed it.
	ClientOrderID string `json:"clientOrderId,omitempty"`
	// Paper is true for a fill of a paper key (docs/contract.md 2.9).
	Paper bool `json:"paper,omitempty"`
}

// SymbolStatus says whether a market trades.
type SymbolStatus string

// Market states.
const (
	SymbolTrading SymbolStatus = "TRADING"
	SymbolHalted  SymbolStatus = "HALTED"
)

// SymbolInfo is one market and its rules; the steps and minimums are
// plain decimal strings.
type SymbolInfo struct {
	Asset1       string       `json:"asset1"`
	Asset2       string       `json:"asset2"`
	Status       SymbolStatus `json:"status"`
	QuantityStep string       `json:"quantityStep"`
	PriceStep    string       `json:"priceStep"`
	MinQuantity  string       `json:"minQuantity"`
	MinNotional  string       `json:"minNotional"`
	OrderTypes   []string     `json:"orderTypes"`
}

// SortSymbols puts a symbol list in the order GET /v1/market/symbols
// answers it on every exchange (docs/contract.md 2.4): by asset1, then
// asset2.
func SortSymbols(list []SymbolInfo) {
	slices.SortFunc(list, func(a, b SymbolInfo) int {
		return cmp.Or(cmp.Compare(a.Asset1, b.Asset1), cmp.Compare(a.Asset2, b.Asset2))
	})
}

// SymbolFilter narrows Symbols to one pair when Symbol is not zero.
type SymbolFilter struct {
	Symbol Symbol
}

// WithdrawalFilter narrows RecentWithdrawals; empty fields match
// everything.
type WithdrawalFilter struct {
	Asset  string
	Status TransferStatus
}

// CheckPrice refuses a price that is not a multiple of tick (never moved
// silently, docs/contract.md 2.4), naming the parameter price.
func CheckPrice(price, tick decimal.Decimal) error {
	if tick.IsPositive() && !price.Mod(tick).IsZero() {
		return ParamError("price", "price %s is not a multiple of the market's price step %s", price, tick)
	}
	return nil
}

// Inverted turns an order placed on the listed pair back into the
// orientation the client named (docs/contract.md 2.4): asset1 and asset2 swap,
// the side flips, executedQuantity and quoteQuantity swap and the average
// price is inverted. Quantity, quantityIn and the fees are in an asset's
// own code and stay as they are.
func (o Order) Inverted() Order {
	o.Asset1, o.Asset2 = o.Asset2, o.Asset1
	if o.Side == SideBuy {
		o.Side = SideSell
	} else if o.Side == SideSell {
		o.Side = SideBuy
	}
	o.ExecutedQuantity, o.QuoteQuantity = o.QuoteQuantity, o.ExecutedQuantity
	o.AveragePrice = nil
	if o.ExecutedQuantity != nil && o.QuoteQuantity != nil {
		o.AveragePrice = AveragePrice(o.QuoteQuantity.Decimal, o.ExecutedQuantity.Decimal)
	}
	return o
}

// InvertOrderRequest is the market order on the listed pair sym.Inverse()
// that does what req asks on sym (docs/contract.md 2.4): the opposite side, the
// same amount of the same asset. BUY BTC/ETH spending 0.1 ETH is SELL 0.1
// ETH on ETH/BTC; BUY 0.1 BTC paying in ETH is SELL ETH on ETH/BTC for 0.1
// BTC of proceeds.
func InvertOrderRequest(req OrderRequest) OrderRequest {
	req.Symbol = req.Symbol.Inverse()
	if req.Side == SideBuy {
		req.Side = SideSell
	} else {
		req.Side = SideBuy
	}
	if req.QuantityIn == InBase {
		req.QuantityIn = InQuote
	} else {
		req.QuantityIn = InBase
	}
	req.Inverted = true
	return req
}

// Unwrapper is an Exchange that wraps another (a market-data cache, a
// fault injector in tests) and passes everything else through. Ability
// looks through it.
type Unwrapper interface {
	Unwrap() Exchange
}
