package gateio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// clientIDPattern is what Gate accepts after the "t-" prefix of an order's
// text: at most 28 bytes of 0-9 A-Z a-z _ - . (Gate API v4 docs, Order
// `text`).
var clientIDPattern = regexp.MustCompile(`^[0-9A-Za-z_.-]{1,28}$`)

// textPrefix starts every client order id Gate accepts.
const textPrefix = "t-"

// orderPlan is what PlaceMarketOrder sends and reports.
type orderPlan struct {
	// amount is Gate's `amount`: quote to spend for a buy, base to sell
	// for a sell.
	amount decimal.Decimal
	// qty is the requested quantity after rounding, in the requested
	// asset: the order's reported quantity.
	qty decimal.Decimal
}

// createOrderBody is POST /spot/orders. Field order is the order sent.
type createOrderBody struct {
	Text         string `json:"text"`
	CurrencyPair string `json:"currency_pair"`
	Type         string `json:"type"`
	Account      string `json:"account"`
	Side         string `json:"side"`
	Amount       string `json:"amount"`
	TimeInForce  string `json:"time_in_force"`
	ActionMode   string `json:"action_mode"`
}

// PlaceMarketOrder sends one market IOC order with text = "t-" +
// req.ClientOrderID. Gate takes a market buy's amount in the quote asset
// and a market sell's in the base asset: those two forms are sent as they
// are; a buy in base and a sell in quote are converted against the live
// order book first (see plan). Quantities are rounded down and refused
// locally (nothing sent) under the pair's minimums.
func (e *Exchange) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	if !clientIDPattern.MatchString(req.ClientOrderID) {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "gateio takes 1 to 28 characters of [0-9A-Za-z_.-] as a client order id")
	}
	if err := rest.CheckOrder(req); err != nil {
		return exgate.Order{}, err
	}
	p, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	if why := p.canTrade(req.Side, e.c.serverNow()); why != "" {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "gateio refuses %s orders on %s: %s", req.Side, p.sym, why)
	}
	plan, err := e.plan(ctx, cred, p, req)
	if err != nil {
		return exgate.Order{}, err
	}
	body, err := json.Marshal(createOrderBody{
		Text:         textPrefix + req.ClientOrderID,
		CurrencyPair: p.id,
		Type:         "market",
		Account:      "spot",
		Side:         strings.ToLower(string(req.Side)),
		Amount:       plan.amount.String(),
		TimeInForce:  "ioc",
		ActionMode:   "FULL",
	})
	if err != nil {
		return exgate.Order{}, fmt.Errorf("gateio: encoding order: %w", err)
	}
	r := request{ep: epCreateOrder, body: body, cred: &cred, pair: p.id, expires: e.expiry(ctx)}
	answer, err := e.c.do(ctx, r)
	if err != nil {
		e.log.WarnContext(ctx, "gateio order not placed", "clientOrderId", req.ClientOrderID, "pair", p.id, "err", err)
		return exgate.Order{}, err
	}
	o, err := parseOrder(answer)
	if err != nil {
		e.log.ErrorContext(ctx, "gateio order answer unreadable", "clientOrderId", req.ClientOrderID, "err", err)
		return exgate.Order{}, badAnswer(epCreateOrder, err)
	}
	if o.Text != textPrefix+req.ClientOrderID {
		e.log.WarnContext(ctx, "gateio answered with another text", "sent", textPrefix+req.ClientOrderID, "got", o.Text)
	}
	e.log.InfoContext(ctx, "gateio order placed", "clientOrderId", req.ClientOrderID, "orderId", o.ID, "status", o.Status, "finishAs", o.FinishAs)
	if o.Status == "open" || !o.Fee.Set {
		// Not finished yet, or an answer without the clearing fields:
		// read the order back once by its id for fills, fees and times.
		if back, err := e.getOrder(ctx, cred, p, string(o.ID)); err == nil {
			o = back
		} else {
			e.log.WarnContext(ctx, "gateio order not read back; reporting the placement answer", "orderId", o.ID, "err", err)
		}
	}
	out := e.normalizeOrder(p, o, req.ClientOrderID, plan.qty, req.QuantityIn)
	return out, nil
}

// expiry is the x-gate-exptime of an order: after it Gate refuses the
// request, which bounds how late a lost request could still execute.
func (e *Exchange) expiry(ctx context.Context) time.Time {
	d := maxOrderExpiry
	if deadline, ok := ctx.Deadline(); ok {
		d = min(max(time.Until(deadline)+5*time.Second, 5*time.Second), maxOrderExpiry)
	}
	return e.c.serverNow().Add(d)
}

// plan rounds the quantity, converts it against the order book when Gate
// cannot take it in the requested asset, and checks the pair's minimums
// and maximums:
//
//   - BUY in quote: amount = quantity rounded down to the price precision.
//   - SELL in base: amount = quantity rounded down to the amount precision.
//   - BUY in base: the base quantity is rounded down, the quote it costs
//     is found by walking the asks, and that cost rounded down to the price
//     precision is sent (so the fill may come out a hair under the base
//     asked for, never over).
//   - SELL in quote: the quote is rounded down, the base that must be sold
//     to receive it is found by walking the bids and rounded down to the
//     amount precision (proceeds a hair under the quote asked for, never
//     over).
//
// The minimum in the other asset is checked with the book's estimate.
func (e *Exchange) plan(ctx context.Context, cred exgate.Credential, p *pair, req exgate.OrderRequest) (orderPlan, error) {
	buy := req.Side == exgate.SideBuy
	var base, quote decimal.Decimal // the amounts of the order in both assets
	var baseKnown, quoteKnown bool
	var plan orderPlan
	switch {
	case buy && req.QuantityIn == exgate.InQuote:
		quote, quoteKnown = p.roundQuote(req.Quantity), true
		if err := p.checkQuote(req.Quantity, quote, ""); err != nil {
			return orderPlan{}, err
		}
		plan = orderPlan{amount: quote, qty: quote}
		if p.minBase.IsPositive() {
			side, err := e.bookSide(ctx, cred, p, buy, func(ls []level) bool { _, ok := walkQuote(ls, quote); return ok })
			if err != nil {
				return orderPlan{}, err
			}
			if b, ok := walkQuote(side, quote); ok {
				base, baseKnown = p.roundBase(b), true
			}
		}
	case !buy && req.QuantityIn == exgate.InBase:
		base, baseKnown = p.roundBase(req.Quantity), true
		if err := p.checkBase(req.Quantity, base, ""); err != nil {
			return orderPlan{}, err
		}
		plan = orderPlan{amount: base, qty: base}
		if p.minQuote.IsPositive() {
			side, err := e.bookSide(ctx, cred, p, buy, func(ls []level) bool { _, ok := walkBase(ls, base); return ok })
			if err != nil {
				return orderPlan{}, err
			}
			if q, ok := walkBase(side, base); ok {
				quote, quoteKnown = q, true
			}
		}
	case buy: // in base: convert to the quote it costs at the asks
		base, baseKnown = p.roundBase(req.Quantity), true
		if err := p.checkBase(req.Quantity, base, ""); err != nil {
			return orderPlan{}, err
		}
		side, err := e.bookSide(ctx, cred, p, buy, func(ls []level) bool { _, ok := walkBase(ls, base); return ok })
		if err != nil {
			return orderPlan{}, err
		}
		cost, ok := walkBase(side, base)
		if !ok {
			return orderPlan{}, exgate.Errorf(exgate.CodeOrderRejected,
				"gateio's %s asks hold less than %s %s; cannot convert the order to a quote amount", p.sym, base, p.sym.Base)
		}
		quote, quoteKnown = p.roundQuote(cost), true
		note := fmt.Sprintf(" (%s %s converted at the asks)", base, p.sym.Base)
		if err := p.checkQuote(cost, quote, note); err != nil {
			return orderPlan{}, err
		}
		plan = orderPlan{amount: quote, qty: base}
	default: // sell in quote: convert to the base that brings it at the bids
		quote, quoteKnown = p.roundQuote(req.Quantity), true
		if err := p.checkQuote(req.Quantity, quote, ""); err != nil {
			return orderPlan{}, err
		}
		side, err := e.bookSide(ctx, cred, p, buy, func(ls []level) bool { _, ok := walkQuote(ls, quote); return ok })
		if err != nil {
			return orderPlan{}, err
		}
		need, ok := walkQuote(side, quote)
		if !ok {
			return orderPlan{}, exgate.Errorf(exgate.CodeOrderRejected,
				"gateio's %s bids are worth less than %s %s; cannot convert the order to a base amount", p.sym, quote, p.sym.Quote)
		}
		base, baseKnown = p.roundBase(need), true
		note := fmt.Sprintf(" (%s %s converted at the bids)", quote, p.sym.Quote)
		if err := p.checkBase(need, base, note); err != nil {
			return orderPlan{}, err
		}
		plan = orderPlan{amount: base, qty: quote}
	}
	if baseKnown && p.minBase.IsPositive() && base.LessThan(p.minBase) {
		return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"the order is about %s %s at the order book, under gateio's minimum %s %s for %s (min_base_amount)", base, p.sym.Base, p.minBase, p.sym.Base, p.sym)
	}
	if quoteKnown && p.minQuote.IsPositive() && quote.LessThan(p.minQuote) {
		return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"the order is worth about %s %s at the order book, under gateio's minimum %s %s for %s (min_quote_amount)", quote.Round(p.precision), p.sym.Quote, p.minQuote, p.sym.Quote, p.sym)
	}
	return plan, nil
}

// checkBase refuses a rounded base amount q (from asked) that is zero,
// under min_base_amount or over max_base_amount.
func (p *pair) checkBase(asked, q decimal.Decimal, note string) error {
	if !q.IsPositive() || (p.minBase.IsPositive() && q.LessThan(p.minBase)) {
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s%s rounds down to %s at gateio's %d decimals, under the minimum %s %s for %s (min_base_amount)",
			asked, p.sym.Base, note, q, p.amountPrecision, minText(p.minBase, p.amountPrecision), p.sym.Base, p.sym)
	}
	if p.maxBase.IsPositive() && q.GreaterThan(p.maxBase) {
		return exgate.Errorf(exgate.CodeOrderRejected, "quantity %s %s%s is over gateio's maximum %s %s for %s (max_base_amount)", q, p.sym.Base, note, p.maxBase, p.sym.Base, p.sym)
	}
	return nil
}

// checkQuote refuses a rounded quote amount q (from asked) that is zero,
// under min_quote_amount or over max_quote_amount.
func (p *pair) checkQuote(asked, q decimal.Decimal, note string) error {
	if !q.IsPositive() || (p.minQuote.IsPositive() && q.LessThan(p.minQuote)) {
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s%s rounds down to %s at gateio's %d decimals, under the minimum %s %s for %s (min_quote_amount)",
			asked, p.sym.Quote, note, q, p.precision, minText(p.minQuote, p.precision), p.sym.Quote, p.sym)
	}
	if p.maxQuote.IsPositive() && q.GreaterThan(p.maxQuote) {
		return exgate.Errorf(exgate.CodeOrderRejected, "quantity %s %s%s is over gateio's maximum %s %s for %s (max_quote_amount)", q, p.sym.Quote, note, p.maxQuote, p.sym.Quote, p.sym)
	}
	return nil
}

// minText writes a minimum, or the smallest step when the pair has none.
func minText(m decimal.Decimal, precision int32) string {
	if m.IsPositive() {
		return m.String()
	}
	return decimal.New(1, -precision).String()
}

// walkBase returns what base of the book's levels costs (asks) or brings
// (bids) in quote; ok is false when the side holds less than base.
func walkBase(levels []level, base decimal.Decimal) (quote decimal.Decimal, ok bool) {
	left := base
	for _, l := range levels {
		take := decimal.Min(l.qtyDec, left)
		quote = quote.Add(take.Mul(l.priceDec))
		left = left.Sub(take)
		if !left.IsPositive() {
			return quote, true
		}
	}
	return quote, false
}

// walkQuote returns how much base the quote amount buys at the asks (or
// must be sold at the bids to receive it); ok is false when the side is
// worth less than quote.
func walkQuote(levels []level, quote decimal.Decimal) (base decimal.Decimal, ok bool) {
	left := quote
	for _, l := range levels {
		value := l.qtyDec.Mul(l.priceDec)
		if value.GreaterThanOrEqual(left) {
			return base.Add(left.DivRound(l.priceDec, 18)), true
		}
		base = base.Add(l.qtyDec)
		left = left.Sub(value)
	}
	return base, false
}

// bookSide reads the side of the book an order on p takes from: the asks
// for a buy, the bids for a sell. When enough says the first 100 levels do
// not cover the order, the book is read again 1000 levels deep.
func (e *Exchange) bookSide(ctx context.Context, cred exgate.Credential, p *pair, buy bool, enough func([]level) bool) ([]level, error) {
	pick := func(bids, asks []level) []level {
		if buy {
			return asks
		}
		return bids
	}
	bids, asks, err := e.book(ctx, cred, p, 100)
	if err != nil {
		return nil, err
	}
	side := pick(bids, asks)
	if len(side) < 100 || enough(side) {
		return side, nil
	}
	if bids, asks, err = e.book(ctx, cred, p, maxBookLimit); err != nil {
		return nil, err
	}
	return pick(bids, asks), nil
}

// QueryOrder reads an order back. Gate finds an order by its text only
// while it is open ("Operations based on custom IDs can only be checked
// in pending orders", GET /spot/orders/{order_id}); so the order is asked
// for by its numeric id when the gateway knows it, else by text, and when
// Gate says CLIENT_ID_NOT_FOUND the finished orders of the pair over the
// last 7 days are searched for the text. Not found anywhere: an error
// wrapping exgate.ErrNotFound. (Gate does not keep IOC orders that
// cancelled without any fill, which is the same as never placed.)
func (e *Exchange) QueryOrder(ctx context.Context, cred exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	if q.ClientOrderID == "" && q.ExchangeOrderID == "" {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "an order is looked up by its client order id")
	}
	if q.ClientOrderID != "" && !clientIDPattern.MatchString(q.ClientOrderID) {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "gateio takes 1 to 28 characters of [0-9A-Za-z_.-] as a client order id")
	}
	p, err := e.markets.lookup(ctx, q.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	text := textPrefix + q.ClientOrderID
	var o orderJSON
	found := false
	if q.ExchangeOrderID != "" {
		o, err = e.getOrder(ctx, cred, p, q.ExchangeOrderID)
		switch {
		case err == nil && (q.ClientOrderID == "" || o.Text == text):
			found = true
		case err == nil:
			e.log.WarnContext(ctx, "gateio order id belongs to another text", "orderId", q.ExchangeOrderID, "text", o.Text, "want", text)
		case !errors.Is(err, exgate.ErrNotFound) || q.ClientOrderID == "":
			return exgate.Order{}, err
		}
	}
	if !found && q.ClientOrderID != "" {
		o, err = e.getOrder(ctx, cred, p, text)
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, exgate.ErrNotFound):
			return exgate.Order{}, err
		default:
			if o, found, err = e.findFinished(ctx, cred, p, text); err != nil {
				return exgate.Order{}, err
			}
		}
	}
	if !found {
		return exgate.Order{}, &exgate.Error{Code: exgate.CodeNotFound,
			Detail: fmt.Sprintf("gateio has no order %s on %s", orderName(q), p.sym),
			Err:    fmt.Errorf("gateio: order %s: %w", orderName(q), exgate.ErrNotFound)}
	}
	id := q.ClientOrderID
	if id == "" {
		id = strings.TrimPrefix(o.Text, textPrefix)
	}
	return e.normalizeOrder(p, o, id, o.Amount.Decimal, amountIn(o)), nil
}

// amountIn is the asset of an order's amount: quote for a market buy,
// base otherwise (Gate API v4 docs, Order `amount`).
func amountIn(o orderJSON) exgate.QuantityIn {
	if o.Side == "buy" && (o.Type == "market" || o.Type == "") {
		return exgate.InQuote
	}
	return exgate.InBase
}

func orderName(q exgate.OrderQuery) string {
	if q.ClientOrderID != "" {
		return "with client order id " + q.ClientOrderID
	}
	return "with order id " + q.ExchangeOrderID
}

// getOrder reads GET /spot/orders/{id}?currency_pair=; id is the numeric
// id or "t-" + the client id. A miss is an error wrapping
// exgate.ErrNotFound.
func (e *Exchange) getOrder(ctx context.Context, cred exgate.Credential, p *pair, id string) (orderJSON, error) {
	var ps rest.Params
	ps.Add("currency_pair", p.id)
	body, err := e.c.do(ctx, request{ep: epGetOrder, id: id, params: ps, cred: &cred})
	if err != nil {
		return orderJSON{}, err
	}
	o, err := parseOrder(body)
	if err != nil {
		return orderJSON{}, badAnswer(epGetOrder, err)
	}
	return o, nil
}

// Finished-order search: pages of listPageSize orders, at most
// listMaxPages of them, over the last listWindow.
const (
	listPageSize = 100
	listMaxPages = 10
	listWindow   = 7 * 24 * time.Hour
)

// findFinished searches GET /spot/orders?status=finished for text.
func (e *Exchange) findFinished(ctx context.Context, cred exgate.Credential, p *pair, text string) (orderJSON, bool, error) {
	now := e.c.serverNow()
	for page := 1; page <= listMaxPages; page++ {
		var ps rest.Params
		ps.Add("currency_pair", p.id)
		ps.Add("status", "finished")
		ps.Add("page", strconv.Itoa(page))
		ps.Add("limit", strconv.Itoa(listPageSize))
		ps.Add("from", strconv.FormatInt(now.Add(-listWindow).Unix(), 10))
		ps.Add("to", strconv.FormatInt(now.Add(time.Minute).Unix(), 10))
		body, err := e.c.do(ctx, request{ep: epListOrders, params: ps, cred: &cred})
		if err != nil {
			return orderJSON{}, false, err
		}
		os, err := parseOrders(body)
		if err != nil {
			return orderJSON{}, false, badAnswer(epListOrders, err)
		}
		for _, o := range os {
			if o.Text == text {
				return o, true, nil
			}
		}
		if len(os) < listPageSize {
			break
		}
	}
	return orderJSON{}, false, nil
}

// normalizeOrder builds the gateway's order from Gate's; qty and in are
// the quantity to report and its asset.
func (e *Exchange) normalizeOrder(p *pair, o orderJSON, id string, qty decimal.Decimal, in exgate.QuantityIn) exgate.Order {
	executed, executedKnown := o.FilledAmount.Decimal, o.FilledAmount.Set
	if !executedKnown && o.FilledTotal.Set && o.AvgDealPrice.IsPositive() {
		executed, executedKnown = o.FilledTotal.DivRound(o.AvgDealPrice.Decimal, p.amountPrecision), true
	}
	filled := o.FilledTotal.IsPositive() || executed.IsPositive()
	out := exgate.Order{
		ID:              id,
		Asset1:          p.sym.Base,
		Asset2:          p.sym.Quote,
		Status:          orderStatus(o.Status, o.FinishAs, filled),
		RawStatus:       rawOrderStatus(o.Status, o.FinishAs),
		Type:            exgate.OrderTypeMarket,
		Side:            exgate.Side(strings.ToUpper(o.Side)),
		Quantity:        exgate.NewNumber(qty),
		QuantityIn:      in.Asset(p.sym),
		Exchange:        exgate.ExchangeGateio,
		ClientOrderID:   id,
		ExchangeOrderID: string(o.ID),
	}
	if executedKnown {
		out.ExecutedQuantity = exgate.NumberPtr(executed)
	}
	if o.FilledTotal.Set {
		out.QuoteQuantity = exgate.NumberPtr(o.FilledTotal.Decimal)
	}
	switch {
	case o.AvgDealPrice.IsPositive():
		out.AveragePrice = exgate.NumberPtr(o.AvgDealPrice.Decimal)
	case executed.IsPositive() && o.FilledTotal.Set:
		out.AveragePrice = exgate.NumberPtr(o.FilledTotal.DivRound(executed, 16))
	}
	// Gate charges the fee in fee_currency, or in GT (gt_fee) or points
	// (point_fee) when the account deducts fees that way.
	switch {
	case o.Fee.IsPositive() && o.FeeCurrency != "":
		out.Fees, out.FeesIn = exgate.NumberPtr(o.Fee.Decimal), exgate.NormalizeAsset(o.FeeCurrency)
	case o.GTFee.IsPositive():
		out.Fees, out.FeesIn = exgate.NumberPtr(o.GTFee.Decimal), "GT"
	case o.PointFee.IsPositive():
		out.Fees, out.FeesIn = exgate.NumberPtr(o.PointFee.Decimal), "POINT"
	case o.Fee.Set && o.FeeCurrency != "":
		out.Fees, out.FeesIn = exgate.NumberPtr(o.Fee.Decimal), exgate.NormalizeAsset(o.FeeCurrency)
	}
	out.OpenAt = o.createdMillis
	if out.OpenAt == 0 {
		out.OpenAt = e.c.Now().UnixMilli()
	}
	out.CloseAt = out.OpenAt
	if out.Status != exgate.OrderPending && o.updatedMillis > out.OpenAt {
		out.CloseAt = o.updatedMillis
	}
	return out
}
