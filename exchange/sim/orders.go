package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// maxFillLevels is how deep a market order may walk the book; an order
// that needs more fills what it can and EXPIRES, as on Binance.
const maxFillLevels = 5000

// Raw order statuses of the simulated exchange.
const (
	rawOrderFilled  = "FILLED"
	rawOrderExpired = "EXPIRED"
)

// fill is the outcome of walking the book.
type fill struct {
	// quantity is the order quantity after rounding, in the QuantityIn
	// asset.
	quantity decimal.Decimal
	// base and quote are the amounts exchanged.
	base, quote decimal.Decimal
	// complete is false when the book ran out first.
	complete bool
}

// walk fills req against the book side it takes from.
func (e *Exchange) walk(p *pairInfo, req exgate.OrderRequest, t int64) fill {
	bids, asks := e.book(p, t)
	side := asks
	if req.Side == exgate.SideSell {
		side = bids
	}
	f := fill{base: decimal.Zero, quote: decimal.Zero}
	if req.QuantityIn == exgate.InQuote {
		f.quantity = req.Quantity.RoundDown(p.QuoteStepExp)
	} else {
		f.quantity = req.Quantity.RoundDown(p.StepExp)
	}
	remaining := f.quantity
	for range maxFillLevels {
		if !remaining.IsPositive() {
			f.complete = true
			return f
		}
		priceTicks, qtySteps, ok := side.next()
		if !ok {
			break
		}
		price := decimal.New(priceTicks, -p.TickExp)
		take := decimal.New(qtySteps, -p.StepExp)
		if req.QuantityIn == exgate.InQuote {
			// Whole steps that the remaining quote amount pays for.
			steps, _ := remaining.QuoRem(price.Mul(p.step), 0)
			if !steps.IsPositive() {
				f.complete = true // less than one step left
				return f
			}
			take = decimal.Min(take, steps.Mul(p.step))
			remaining = remaining.Sub(take.Mul(price))
		} else {
			take = decimal.Min(take, remaining)
			remaining = remaining.Sub(take)
		}
		f.base = f.base.Add(take)
		f.quote = f.quote.Add(take.Mul(price))
	}
	f.complete = !remaining.IsPositive()
	return f
}

// tooSmall checks the market's minimums against an order's fill.
func tooSmall(p *pairInfo, req exgate.OrderRequest, f fill) error {
	in := req.QuantityIn.Asset(p.sym)
	switch {
	case req.QuantityIn == exgate.InBase && f.quantity.LessThan(p.minQty):
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s is below the minimum %s %s of %s (step %s, rounded down to %s)",
			req.Quantity, in, p.minQty, p.Base, p.sym, p.step, f.quantity)
	case req.QuantityIn == exgate.InQuote && f.quantity.LessThan(p.minNotional):
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s is below the minimum notional %s %s of %s (step %s, rounded down to %s)",
			req.Quantity, in, p.minNotional, p.Quote, p.sym, p.quoteStep, f.quantity)
	case f.base.LessThan(p.minQty):
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s buys %s %s, below the minimum quantity %s %s of %s",
			f.quantity, in, f.base, p.Base, p.minQty, p.Base, p.sym)
	case f.quote.LessThan(p.minNotional) && req.QuantityIn == exgate.InQuote:
		// The amount to spend buys whole steps of the base asset only,
		// so it spends a little less than asked: say so, or "5 USDT is
		// worth 4.88 USDT" reads as a mistake.
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s buys %s %s (%s trades whole steps of %s %s, so a quote amount spends a little less than asked), which costs %s %s: below the minimum notional %s %s of %s",
			f.quantity, in, f.base, p.Base, p.sym, p.step, p.Base, f.quote, p.Quote, p.minNotional, p.Quote, p.sym)
	case f.quote.LessThan(p.minNotional):
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s is worth %s %s, below the minimum notional %s %s of %s",
			f.quantity, in, f.quote, p.Quote, p.minNotional, p.Quote, p.sym)
	}
	return nil
}

// PlaceMarketOrder fills a market order against the book of the current
// second and moves the balances with a 0.1% fee in the asset received.
// The order is kept under req.ClientOrderID for QueryOrder.
func (e *Exchange) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	p, err := e.market(req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	switch {
	case req.ClientOrderID == "":
		return exgate.Order{}, exgate.ParamError("clientOrderId", "sim needs a client order id")
	case req.Side != exgate.SideBuy && req.Side != exgate.SideSell:
		return exgate.Order{}, exgate.ParamError("side", "side must be BUY or SELL, not %q", req.Side)
	case req.QuantityIn != exgate.InBase && req.QuantityIn != exgate.InQuote:
		return exgate.Order{}, exgate.ParamError("quantityIn", "quantityIn must be %s or %s", p.Base, p.Quote)
	case !req.Quantity.IsPositive():
		return exgate.Order{}, exgate.ParamError("quantity", "quantity must be positive, not %s", req.Quantity)
	}
	now := e.now()
	f := e.walk(p, req, floorDiv(now.UnixMilli(), 1000))
	if err := tooSmall(p, req, f); err != nil {
		return exgate.Order{}, err
	}

	pay, payAmount, get, getAmount := p.Quote, f.quote, p.Base, f.base
	if req.Side == exgate.SideSell {
		pay, payAmount, get, getAmount = p.Base, f.base, p.Quote, f.quote
	}
	fee := getAmount.Mul(takerFee)
	status, raw := exgate.OrderFilled, rawOrderFilled
	if !f.complete {
		status, raw = exgate.OrderExpired, rawOrderExpired
	}
	order := exgate.Order{
		ID:               req.ClientOrderID,
		Asset1:           p.Base,
		Asset2:           p.Quote,
		Status:           status,
		Type:             exgate.OrderTypeMarket,
		Side:             req.Side,
		Quantity:         exgate.NewNumber(f.quantity),
		QuantityIn:       req.QuantityIn.Asset(p.sym),
		Fees:             exgate.NumberPtr(fee),
		FeesIn:           get,
		OpenAt:           now.UnixMilli(),
		CloseAt:          now.UnixMilli(),
		Exchange:         Name,
		ClientOrderID:    req.ClientOrderID,
		ExchangeOrderID:  e.exchangeID(cred, req.ClientOrderID),
		ExecutedQuantity: exgate.NumberPtr(f.base),
		QuoteQuantity:    exgate.NumberPtr(f.quote),
		AveragePrice:     exgate.AveragePrice(f.quote, f.base),
		RawStatus:        raw,
	}
	record, err := json.Marshal(order)
	if err != nil {
		return exgate.Order{}, fmt.Errorf("sim: encode order %s: %w", req.ClientOrderID, err)
	}
	op := exgate.SimOperation{
		ID:   req.ClientOrderID,
		Kind: exgate.IntentOrder,
		Changes: []exgate.BalanceChange{
			{Asset: pay, Delta: payAmount.Neg()},
			{Asset: get, Delta: getAmount.Sub(fee)},
		},
		Record:    record,
		CreatedAt: now,
	}
	err = e.withAccount(ctx, cred, func() error {
		if err := e.checkFunds(ctx, cred, pay, payAmount, marketWhat(p, req, f)); err != nil {
			return err
		}
		return e.ledger.ApplySimOperation(ctx, cred.ID, op)
	})
	if err != nil {
		return exgate.Order{}, e.applyError("order", req.ClientOrderID, err)
	}
	e.notices.notify(cred.ID, order)
	return order, nil
}

// marketWhat names a market order in the detail of checkFunds: an order
// larger than the book is named with what the book holds, so that the
// amount it "needs" is the true cost of what it can fill, never a figure
// that reads as the cost of the whole order.
func marketWhat(p *pairInfo, req exgate.OrderRequest, f fill) string {
	if f.complete {
		return "the order"
	}
	return fmt.Sprintf("the order (%s %s) is more than the book holds: filling all it holds (%s %s for %s %s)",
		f.quantity, req.QuantityIn.Asset(p.sym), f.base, p.Base, f.quote, p.Quote)
}

// checkFunds refuses an operation the balance cannot pay for, with the
// amounts in the detail. The ledger checks again atomically.
func (e *Exchange) checkFunds(ctx context.Context, cred exgate.Credential, asset string, need decimal.Decimal, what string) error {
	bals, err := e.ledger.SimBalances(ctx, cred.ID)
	if errors.Is(err, exgate.ErrNotFound) {
		return err // withAccount reopens the account
	}
	if err != nil {
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the balances", Err: err}
	}
	if have := bals[asset]; have.LessThan(need) {
		return &exgate.Error{
			Code:   exgate.CodeInsufficientFunds,
			Detail: fmt.Sprintf("%s needs %s %s, the account has %s %s available", what, need, asset, have, asset),
		}
	}
	return nil
}

// applyError turns a ledger failure into the error of an order or a
// withdrawal. An error the ledger does not classify leaves the outcome
// unknown (the transaction may have committed), so it is EXCHANGE_TIMEOUT:
// the gateway then looks the operation up instead of sending it again.
func (e *Exchange) applyError(kind, id string, err error) error {
	if _, ok := errors.AsType[*exgate.Error](err); ok {
		return err
	}
	switch {
	case errors.Is(err, exgate.ErrNotFound): // the ledger changed nothing
		return &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim has no paper account for this credential", Err: err}
	case errors.Is(err, exgate.ErrInsufficientFunds):
		return &exgate.Error{Code: exgate.CodeInsufficientFunds, Detail: "the account cannot pay for the " + kind, Err: err}
	case errors.Is(err, exgate.ErrConflict):
		code := exgate.CodeOrderRejected
		switch kind {
		case "withdrawal":
			code = exgate.CodeWithdrawalRejected
		case "transfer":
			code = exgate.CodeTransferRejected
		}
		return &exgate.Error{Code: code, Detail: fmt.Sprintf("sim already has a %s with client id %s", kind, id), Err: err}
	}
	return &exgate.Error{
		Code:   exgate.CodeExchangeTimeout,
		Detail: fmt.Sprintf("the sim ledger failed; the %s %s may or may not have been applied", kind, id),
		Err:    err,
	}
}

// exchangeID is the sim's own id of an order or withdrawal: a number
// derived from the credential and the client id.
func (e *Exchange) exchangeID(cred exgate.Credential, clientID string) string {
	return strconv.FormatUint(hash(e.seed, uint64(cred.ID), hashString(clientID))>>20, 10)
}

// QueryOrder reads an order back by its client order id.
func (e *Exchange) QueryOrder(ctx context.Context, cred exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	o, err := e.limitOrderNow(ctx, cred, q.ClientOrderID)
	if err != nil {
		return exgate.Order{}, err
	}
	if (q.Symbol != exgate.Symbol{} && (q.Symbol.Base != o.Asset1 || q.Symbol.Quote != o.Asset2)) ||
		(q.ExchangeOrderID != "" && q.ExchangeOrderID != o.ExchangeOrderID) {
		return exgate.Order{}, fmt.Errorf("sim: order %s on %s: %w", q.ClientOrderID, q.Symbol, exgate.ErrNotFound)
	}
	return o, nil
}

// readRecord decodes the record of the operation id of the given kind.
func (e *Exchange) readRecord(ctx context.Context, cred exgate.Credential, id string, kind exgate.IntentKind, v any) error {
	if id == "" {
		return fmt.Errorf("sim: %s without a client id: %w", kind, exgate.ErrNotFound)
	}
	op, err := e.ledger.SimOperation(ctx, cred.ID, id)
	if err != nil {
		return fmt.Errorf("sim: %s %s: %w", kind, id, err)
	}
	if op.Kind != kind {
		return fmt.Errorf("sim: %s %s: the id names a %s: %w", kind, id, op.Kind, exgate.ErrNotFound)
	}
	if err := json.Unmarshal(op.Record, v); err != nil {
		return fmt.Errorf("sim: %s %s: decode record: %w", kind, id, err)
	}
	return nil
}
