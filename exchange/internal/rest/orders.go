package rest

import (
	"context"
	"regexp"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// CheckOrder refuses, before anything is looked up or sent, an order
// request whose side or quantity unit is not one of the API's: the
// adapters' plans only know BUY and SELL, in the base or the quote asset.
func CheckOrder(req exgate.OrderRequest) error {
	if req.Side != exgate.SideBuy && req.Side != exgate.SideSell {
		return exgate.ParamError("side", "side must be BUY or SELL")
	}
	if req.QuantityIn != exgate.InBase && req.QuantityIn != exgate.InQuote {
		return exgate.ParamError("quantityIn", "quantityIn must be asset1 or asset2")
	}
	return nil
}

// ClientIDRule is an exchange's rule for client order ids: the pattern it
// accepts (from its docs, cited where the adapter declares the rule) and
// how the refusal names it.
type ClientIDRule struct {
	// Exchange names the exchange in the refusal ("binance").
	Exchange string
	Pattern  *regexp.Regexp
	// Allowed says what Pattern accepts, for the refusal ("1 to 36
	// characters of [a-zA-Z0-9_-]").
	Allowed string
}

// Check refuses, as INVALID_PARAMETER clientOrderId, an id the exchange
// would not take. An empty id passes when it is not required (a test
// order's, a lookup by the exchange's id).
func (r ClientIDRule) Check(id string, required bool) error {
	if (id == "" && !required) || r.Pattern.MatchString(id) {
		return nil
	}
	return exgate.ParamError("clientOrderId", "%s takes %s as a client order id", r.Exchange, r.Allowed)
}

// PrepareOrder is what an adapter does with a market order request before
// it plans the order, in this order: the client order id checked against
// the exchange's rule (required unless the order is only tested), then
// CheckOrder, then the market looked up with lookup (the adapter's market
// list), so that nothing is looked up for a request refused on its face.
func PrepareOrder[M any](ctx context.Context, req exgate.OrderRequest, rule ClientIDRule, idRequired bool, lookup func(context.Context, exgate.Symbol) (M, error)) (M, error) {
	var zero M
	if err := rule.Check(req.ClientOrderID, idRequired); err != nil {
		return zero, err
	}
	if err := CheckOrder(req); err != nil {
		return zero, err
	}
	return lookup(ctx, req.Symbol)
}

// TestedMarketOrder is the answer to a market order that was only tested
// (exgate.OrderManager.TestOrder): the order as it would have been placed,
// status TEST, opened and closed at now (Unix milliseconds). qty is the
// planned quantity, in the asset in names on pair.
func TestedMarketOrder(exchange string, r exgate.OrderRequest, pair exgate.Symbol, qty decimal.Decimal, in exgate.QuantityIn, now int64) exgate.Order {
	return exgate.Order{
		ID: r.ClientOrderID, Asset1: pair.Base, Asset2: pair.Quote, Status: exgate.OrderTest,
		Type: exgate.OrderTypeMarket, Side: r.Side, Quantity: exgate.NewNumber(qty),
		QuantityIn: in.Asset(pair), OpenAt: now, CloseAt: now,
		Exchange: exchange, ClientOrderID: r.ClientOrderID,
	}
}
