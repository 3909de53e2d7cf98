package gateio

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// clientIDRule is the gateway's client id rule (docs/contract.md 2.4: 1 to
// 36 characters of [A-Za-z0-9_-]; Gate's "." is taken too), which the
// adapter takes on Gate by sending textOf the id.
var clientIDRule = rest.ClientIDRule{Exchange: "gateio", Pattern: regexp.MustCompile(`^[0-9A-Za-z_.-]{1,36}$`), Allowed: "1 to 36 characters of [A-Za-z0-9_-]"}

// textPattern is what Gate accepts after the "t-" prefix of an order's
// text: at most 28 bytes of 0-9 A-Z a-z _ - . (Gate API v4 docs, Order
// `text`).
var textPattern = regexp.MustCompile(`^[0-9A-Za-z_.-]{1,28}$`)

// textPrefix starts every client order id Gate accepts.
const textPrefix = "t-"

// textOf is the text sent for the gateway's client id: "t-" and the id
// when Gate takes it (the gateway's own ids always qualify), else "t-x"
// and the first 27 hex digits of the id's SHA-256, which fits Gate's 28
// characters and is computed again whenever the order is looked up or
// canceled by the client's id, so the mapping needs no storage. The
// adapter answers with the client's own id.
func textOf(id string) string {
	if textPattern.MatchString(id) {
		return textPrefix + id
	}
	sum := sha256.Sum256([]byte(id))
	return textPrefix + "x" + hex.EncodeToString(sum[:])[:27]
}

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
	Price        string `json:"price,omitempty"`
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
	p, err := rest.PrepareOrder(ctx, req, clientIDRule, true, e.markets.Lookup)
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
		Text:         textOf(req.ClientOrderID),
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
	o, err := rest.SendOrder(ctx, e.log, "gateio", "order", e.c.do, r, parseOrder, req.ClientOrderID, "pair", p.id)
	if err != nil {
		return exgate.Order{}, err
	}
	if o.Text != textOf(req.ClientOrderID) {
		e.log.WarnContext(ctx, "gateio answered with another text", "sent", textOf(req.ClientOrderID), "got", o.Text)
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
	if err := clientIDRule.Check(q.ClientOrderID, false); err != nil {
		return exgate.Order{}, err
	}
	p, err := e.markets.Lookup(ctx, q.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	text := textOf(q.ClientOrderID)
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
	return e.orderFromGate(p, o, id), nil
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
	return rest.Fetch(ctx, e.c.do, request{ep: epGetOrder, id: id, params: ps, cred: &cred}, parseOrder)
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
		os, err := rest.Fetch(ctx, e.c.do, request{ep: epListOrders, params: ps, cred: &cred}, parseOrders)
		if err != nil {
			return orderJSON{}, false, err
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
		Exchange:        Name,
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
		out.AveragePrice = exgate.AveragePrice(o.FilledTotal.Decimal, executed)
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

var _ exgate.OrderManager = (*Exchange)(nil)

// checkLimit makes the checks of a limit order that need no call to Gate
// but the cached pair list: a client order id Gate takes (a test order
// may have none), the request's
// own rules, the pair's trade status, a price on the pair's tick (refused,
// never moved: INVALID_PARAMETER naming price), the quantity rounded down
// to the pair's step and the pair's minimums and maximums of the base
// amount and of the notional (QUANTITY_TOO_SMALL with the limit). It
// returns the pair and the rounded quantity.
func (e *Exchange) checkLimit(ctx context.Context, req exgate.LimitOrderRequest) (*pair, decimal.Decimal, error) {
	if err := clientIDRule.Check(req.ClientOrderID, false); err != nil {
		return nil, decimal.Decimal{}, err
	}
	if err := req.Validate(); err != nil {
		return nil, decimal.Decimal{}, err
	}
	p, err := e.markets.Lookup(ctx, req.Symbol)
	if err != nil {
		return nil, decimal.Decimal{}, err
	}
	if why := p.canTrade(req.Side, e.c.serverNow()); why != "" {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeOrderRejected, "gateio refuses %s orders on %s: %s", req.Side, p.sym, why)
	}
	if err := exgate.CheckPrice(req.Price, p.tick()); err != nil {
		return nil, decimal.Decimal{}, err
	}
	qty := p.roundBase(req.Quantity)
	if err := p.checkBase(req.Quantity, qty, ""); err != nil {
		return nil, decimal.Decimal{}, err
	}
	notional := qty.Mul(req.Price)
	if p.minQuote.IsPositive() && notional.LessThan(p.minQuote) {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s at %s is worth %s %s, under gateio's minimum %s %s for %s (min_quote_amount)",
			qty, p.sym.Base, req.Price, notional, p.sym.Quote, p.minQuote, p.sym.Quote, p.sym)
	}
	if p.maxQuote.IsPositive() && notional.GreaterThan(p.maxQuote) {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeOrderRejected,
			"%s %s at %s is worth %s %s, over gateio's maximum %s %s for %s (max_quote_amount)",
			qty, p.sym.Base, req.Price, notional, p.sym.Quote, p.maxQuote, p.sym.Quote, p.sym)
	}
	return p, qty, nil
}

// limitAsSent is a limit order as it is sent: nothing executed yet.
func (e *Exchange) limitAsSent(p *pair, req exgate.LimitOrderRequest, qty decimal.Decimal, status exgate.OrderStatus) exgate.Order {
	now := e.c.Now().UnixMilli()
	return exgate.Order{
		ID: req.ClientOrderID, Asset1: p.sym.Base, Asset2: p.sym.Quote, Status: status, Type: exgate.OrderTypeLimit,
		Side: req.Side, Quantity: exgate.NewNumber(qty), QuantityIn: p.sym.Base, OpenAt: now, CloseAt: now,
		Exchange: Name, ClientOrderID: req.ClientOrderID,
		Price: exgate.NumberPtr(req.Price), TimeInForce: req.TimeInForce, PostOnly: req.PostOnly,
	}
}

// PlaceLimitOrder sends one limit order, POST /spot/orders type=limit with
// time_in_force gtc, ioc, fok or poc (postOnly) and text "t-" + the client
// order id; never retried. A postOnly order that would trade is refused by
// Gate (POC_FILL_IMMEDIATELY, or an order finished as poc with nothing
// filled): ORDER_REJECTED either way. A lost answer is EXCHANGE_TIMEOUT;
// the journal then reads the order by its text.
func (e *Exchange) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, error) {
	if req.ClientOrderID == "" {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "gateio needs a client order id to place an order")
	}
	p, qty, err := e.checkLimit(ctx, req)
	if err != nil {
		return exgate.Order{}, err
	}
	body, err := json.Marshal(createOrderBody{
		Text:         textOf(req.ClientOrderID),
		CurrencyPair: p.id,
		Type:         "limit",
		Account:      "spot",
		Side:         strings.ToLower(string(req.Side)),
		Amount:       qty.String(),
		Price:        req.Price.String(),
		TimeInForce:  gateTimeInForce(req.TimeInForce, req.PostOnly),
		ActionMode:   "FULL",
	})
	if err != nil {
		return exgate.Order{}, fmt.Errorf("gateio: encoding order: %w", err)
	}
	o, err := rest.SendOrder(ctx, e.log, "gateio", "limit order", e.c.do, request{ep: epCreateOrder, body: body, cred: &cred, pair: p.id, expires: e.expiry(ctx)}, parseOrder, req.ClientOrderID, "pair", p.id)
	if err != nil {
		return exgate.Order{}, err
	}
	e.log.InfoContext(ctx, "gateio limit order placed", "clientOrderId", req.ClientOrderID, "orderId", o.ID, "status", o.Status, "finishAs", o.FinishAs)
	if o.Status == "cancelled" && o.FinishAs == "poc" && !o.FilledAmount.IsPositive() {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected,
			"gateio did not place the postOnly order: %s %s at %s would trade at once (finish_as poc)", req.Side, p.sym, req.Price)
	}
	return e.orderFromGate(p, o, req.ClientOrderID), nil
}

// orderFromGate builds the gateway's order from Gate's. id is the
// gateway's id when known; otherwise an order whose text is "t-..." gets
// the rest of its text as its id and client order id, and any other (an
// order placed on Gate's site or apps, whose text is an origin tag such as
// "3" or "apiv4") gets Gate's id and no client order id.
func (e *Exchange) orderFromGate(p *pair, o orderJSON, id string) exgate.Order {
	client := id
	if client == "" {
		if cid, ok := strings.CutPrefix(o.Text, textPrefix); ok && cid != "" {
			client = cid
		}
	}
	if id == "" {
		id = client
	}
	if id == "" {
		id = string(o.ID)
	}
	out := e.normalizeOrder(p, o, id, o.Amount.Decimal, amountIn(o))
	out.ClientOrderID = client
	if o.Type == "limit" {
		out.Type = exgate.OrderTypeLimit
		out.Price = exgate.NumberPtr(o.Price.Decimal)
		out.TimeInForce, out.PostOnly = fromGateTimeInForce(o.TimeInForce)
		if out.ExecutedQuantity == nil {
			out.ExecutedQuantity = exgate.NumberPtr(decimal.Zero)
		}
	}
	return out
}

// TestOrder checks an order without placing it. Gate has no test-order
// call, so the checks are the adapter's own: those of PlaceLimitOrder
// before anything is sent, or those of PlaceMarketOrder including the
// conversion against the order book (a public read). Nothing reaches
// POST /spot/orders.
func (e *Exchange) TestOrder(ctx context.Context, cred exgate.Credential, req exgate.TestOrderRequest) (exgate.Order, error) {
	switch {
	case req.Limit != nil:
		p, qty, err := e.checkLimit(ctx, *req.Limit)
		if err != nil {
			return exgate.Order{}, err
		}
		return e.limitAsSent(p, *req.Limit, qty, exgate.OrderTest), nil
	case req.Market != nil:
		r := *req.Market
		p, err := rest.PrepareOrder(ctx, r, clientIDRule, false, e.markets.Lookup)
		if err != nil {
			return exgate.Order{}, err
		}
		if why := p.canTrade(r.Side, e.c.serverNow()); why != "" {
			return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "gateio refuses %s orders on %s: %s", r.Side, p.sym, why)
		}
		plan, err := e.plan(ctx, cred, p, r)
		if err != nil {
			return exgate.Order{}, err
		}
		return rest.TestedMarketOrder(Name, r, p.sym, plan.qty, r.QuantityIn, e.c.Now().UnixMilli()), nil
	}
	return exgate.Order{}, exgate.ParamError("test", "nothing to test")
}

// cancelMissLabels are Gate's answers to a cancel of an order it cannot
// cancel: no open order with that text or id (a text names open orders
// only), or one that finished first. The order is then read to answer
// with its final state, or NOT_FOUND. Source: Gate API v4 docs, "Cancel a
// single order" and the error label list (ORDER_NOT_FOUND, ORDER_CLOSED,
// ORDER_CANCELLED) and real CLIENT_ID_NOT_FOUND answers.
var cancelMissLabels = map[string]bool{
	labelClientIDNotFound: true,
	labelOrderNotFound:    true,
	labelOrderClosed:      true,
	labelOrderCancelled:   true,
}

// CancelOrder cancels an open order with DELETE /spot/orders/{order_id}
// and currency_pair: by its text "t-" + the client order id, which names
// only that order, or (for an order placed outside the gateway, which has
// no client order id of the gateway's) by Gate's numeric id. The cancel is
// never retried: a lost answer is EXCHANGE_TIMEOUT and the journal reads
// the order. When Gate has no open order by that name, the order is read:
// one that finished first is answered with its final status (FILLED,
// EXPIRED, CANCELED); none at all is an error wrapping exgate.ErrNotFound.
func (e *Exchange) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	name := req.ExchangeOrderID
	switch {
	case req.ClientOrderID != "":
		if err := clientIDRule.Check(req.ClientOrderID, true); err != nil {
			return exgate.Order{}, err
		}
		name = textOf(req.ClientOrderID)
	case name == "":
		return exgate.Order{}, fmt.Errorf("gateio: cancel without an order id: %w", exgate.ErrNotFound)
	}
	p, err := e.markets.Lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	o, err := e.cancel(ctx, cred, p, name)
	if err == nil {
		return e.orderFromGate(p, o, req.ClientOrderID), nil
	}
	if ae, ok := errors.AsType[*apiError](err); !ok || !cancelMissLabels[ae.label] {
		return exgate.Order{}, err
	}
	got, qerr := e.QueryOrder(ctx, cred, exgate.OrderQuery(req))
	if qerr != nil {
		return exgate.Order{}, qerr
	}
	if got.Status.Final() {
		return got, nil
	}
	// Open after all (Gate can take a moment to list a new order under
	// its text): cancel it once by its numeric id, which names it alone.
	if got.ExchangeOrderID == "" || got.ExchangeOrderID == name {
		return exgate.Order{}, err
	}
	o, err = e.cancel(ctx, cred, p, got.ExchangeOrderID)
	if err != nil {
		return exgate.Order{}, err
	}
	return e.orderFromGate(p, o, req.ClientOrderID), nil
}

// cancel sends one DELETE /spot/orders/{name}.
func (e *Exchange) cancel(ctx context.Context, cred exgate.Credential, p *pair, name string) (orderJSON, error) {
	var ps rest.Params
	ps.Add("currency_pair", p.id)
	body, err := e.c.do(ctx, request{ep: epCancelOrder, id: name, params: ps, cred: &cred, expires: e.expiry(ctx)})
	if err != nil {
		e.log.WarnContext(ctx, "gateio cancel not confirmed", "order", name, "pair", p.id, "err", err)
		return orderJSON{}, err
	}
	o, err := parseOrder(body)
	if err != nil {
		return orderJSON{}, badAnswer(epCancelOrder, err)
	}
	return o, nil
}

// openPageSize is Gate's largest page of open orders (per pair on
// GET /spot/open_orders).
const openPageSize = 100

// OpenOrders returns the open orders, newest first: of one pair from
// GET /spot/orders?status=open, of every pair from GET /spot/open_orders.
// Orders placed outside the gateway are included, with Gate's id and no
// client order id.
func (e *Exchange) OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	var out []exgate.Order
	if (f.Symbol != exgate.Symbol{}) {
		p, err := e.markets.Lookup(ctx, f.Symbol)
		if err != nil {
			return nil, err
		}
		os, err := e.listOrders(ctx, cred, p, "open", listMaxPages*openPageSize)
		if err != nil {
			return nil, err
		}
		for _, o := range os {
			out = append(out, e.orderFromGate(p, o, ""))
		}
	} else {
		for page := 1; page <= listMaxPages; page++ {
			var ps rest.Params
			ps.Add("page", strconv.Itoa(page))
			ps.Add("limit", strconv.Itoa(openPageSize))
			body, err := e.c.do(ctx, request{ep: epOpenOrders, params: ps, cred: &cred})
			if err != nil {
				return nil, err
			}
			os, err := parseOpenOrders(body)
			if err != nil {
				return nil, badAnswer(epOpenOrders, err)
			}
			for _, o := range os {
				p, err := e.pairByID(ctx, o.CurrencyPair)
				if err != nil {
					return nil, err
				}
				out = append(out, e.orderFromGate(p, o, ""))
			}
			if !fullPage(body) {
				break
			}
		}
	}
	sortOrders(out)
	return nonNil(out), nil
}

// fullPage reports whether some pair of a GET /spot/open_orders answer
// filled its page, so that another page may hold more.
func fullPage(body []byte) bool {
	var pairs []openOrdersJSON
	if json.Unmarshal(body, &pairs) != nil {
		return false
	}
	for _, p := range pairs {
		if len(p.Orders) >= openPageSize {
			return true
		}
	}
	return false
}

// listOrders reads up to want orders of the pair with GET /spot/orders and
// status open or finished, newest first as Gate lists them.
func (e *Exchange) listOrders(ctx context.Context, cred exgate.Credential, p *pair, status string, want int) ([]orderJSON, error) {
	size := openPageSize
	if status == "finished" {
		size = min(want, 1000)
	}
	var out []orderJSON
	for page := 1; len(out) < want && page <= listMaxPages; page++ {
		var ps rest.Params
		ps.Add("currency_pair", p.id)
		ps.Add("status", status)
		ps.Add("page", strconv.Itoa(page))
		ps.Add("limit", strconv.Itoa(size))
		os, err := rest.Fetch(ctx, e.c.do, request{ep: epListOrders, params: ps, cred: &cred}, parseOrders)
		if err != nil {
			return nil, err
		}
		out = append(out, os...)
		if len(os) < size {
			break
		}
	}
	return out, nil
}

// sortOrders puts orders newest first: by creation time, then by Gate's
// id (larger is newer), numerically.
func sortOrders(os []exgate.Order) {
	slices.SortStableFunc(os, func(a, b exgate.Order) int {
		if c := cmp.Compare(b.OpenAt, a.OpenAt); c != 0 {
			return c
		}
		return compareIDs(b.ExchangeOrderID, a.ExchangeOrderID)
	})
}

// compareIDs compares Gate's numeric ids (shorter is smaller).
func compareIDs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// limitOf is the number of records a history call returns.
func limitOf(n int) int { return rest.Limit(n, exgate.DefaultRecentLimit, exgate.MaxRecentLimit) }

// RecentOrders returns at most f.Limit orders of the pair, open and
// finished, newest first: GET /spot/orders with status=open and with
// status=finished (Gate lists them apart), merged. Orders placed outside
// the gateway are included. Gate does not keep orders that were canceled
// without any fill for long (IOC and FOK orders that found nothing), so
// those may be missing.
func (e *Exchange) RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	p, err := e.markets.Lookup(ctx, f.Symbol)
	if err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	open, err := e.listOrders(ctx, cred, p, "open", limit)
	if err != nil {
		return nil, err
	}
	finished, err := e.listOrders(ctx, cred, p, "finished", limit)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Order, 0, len(open)+len(finished))
	for _, o := range append(open, finished...) {
		out = append(out, e.orderFromGate(p, o, ""))
	}
	sortOrders(out)
	return out[:min(len(out), limit)], nil
}

// Fills returns at most f.Limit fills of the pair, newest first, from
// GET /spot/my_trades. A fill's order id is the gateway's id when the
// order's text is "t-..." (Gate copies the order's text onto its trades),
// else Gate's order id.
func (e *Exchange) Fills(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	p, err := e.markets.Lookup(ctx, f.Symbol)
	if err != nil {
		return nil, err
	}
	var ps rest.Params
	ps.Add("currency_pair", p.id)
	ps.Add("limit", strconv.Itoa(limitOf(f.Limit)))
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epMyTrades, params: ps, cred: &cred}, parseTrades)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Fill, 0, len(rows))
	for _, r := range rows {
		out = append(out, fillFromGate(p, r))
	}
	slices.SortStableFunc(out, func(a, b exgate.Fill) int {
		return cmp.Or(cmp.Compare(b.Timestamp, a.Timestamp), compareIDs(b.ID, a.ID))
	})
	return out[:min(len(out), limitOf(f.Limit))], nil
}

// fillFromGate maps one of Gate's trades. The fee is in fee_currency, or
// in GT or points when the account deducts fees that way.
func fillFromGate(p *pair, r tradeJSON) exgate.Fill {
	out := exgate.Fill{
		ID: string(r.ID), OrderID: string(r.OrderID), Asset1: p.sym.Base, Asset2: p.sym.Quote,
		Side: exgate.Side(strings.ToUpper(r.Side)), Price: exgate.NewNumber(r.Price.Decimal),
		Quantity: exgate.NewNumber(r.Amount.Decimal), QuoteQuantity: exgate.NewNumber(r.Amount.Mul(r.Price.Decimal)),
		Fee: exgate.NewNumber(r.Fee.Decimal), FeeIn: exgate.NormalizeAsset(r.FeeCurrency),
		Maker: r.Role == "maker", Timestamp: r.millis,
	}
	if cid, ok := strings.CutPrefix(r.Text, textPrefix); ok && cid != "" {
		out.OrderID, out.ClientOrderID = cid, cid
	}
	switch {
	case r.Fee.IsPositive():
	case r.GTFee.IsPositive():
		out.Fee, out.FeeIn = exgate.NewNumber(r.GTFee.Decimal), "GT"
	case r.PointFee.IsPositive():
		out.Fee, out.FeeIn = exgate.NewNumber(r.PointFee.Decimal), "POINT"
	}
	return out
}
