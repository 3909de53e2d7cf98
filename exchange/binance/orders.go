package binance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// clientIDPattern is what Binance accepts as newClientOrderId
// (errors.md, -1100 message for newClientOrderId).
var clientIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,36}$`)

// orderPlan is what PlaceMarketOrder sends: one quantity parameter, and
// the quantity it reports (the same, except for a quote quantity converted
// to a base one, which is reported as the quote quantity asked).
type orderPlan struct {
	param    string // quantity or quoteOrderQty
	qty      decimal.Decimal
	report   decimal.Decimal
	reportIn exgate.QuantityIn
}

// PlaceMarketOrder sends one MARKET order with newClientOrderId =
// req.ClientOrderID and newOrderRespType=FULL. Quantities in the base
// asset are sent as quantity, in the quote asset as quoteOrderQty (or, on
// a symbol that does not take quoteOrderQty, converted to a base quantity
// against the order book). The quantity is rounded down first, and refused
// locally (nothing sent) when under the symbol's minimums.
func (e *Exchange) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	if !clientIDPattern.MatchString(req.ClientOrderID) {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "binance takes 1 to 36 characters of [a-zA-Z0-9_-] as a client order id")
	}
	if err := rest.CheckOrder(req); err != nil {
		return exgate.Order{}, err
	}
	mk, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	if mk.status != "TRADING" {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "%s is not trading on binance (status %s)", mk.pair, mk.status)
	}
	if !mk.marketAllowed {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "binance takes no MARKET orders on %s", mk.pair)
	}
	plan, err := e.plan(ctx, cred, mk, req)
	if err != nil {
		return exgate.Order{}, err
	}
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("side", string(req.Side))
	p.Add("type", "MARKET")
	p.Add(plan.param, plan.qty.String())
	p.Add("newClientOrderId", req.ClientOrderID)
	p.Add("newOrderRespType", "FULL")
	body, err := e.c.do(ctx, request{ep: epNewOrder, params: p, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "binance order not placed", "clientOrderId", req.ClientOrderID, "symbol", mk.symbol, "err", err)
		return exgate.Order{}, err
	}
	o, err := parseOrder(body)
	if err != nil {
		e.log.ErrorContext(ctx, "binance order answer unreadable", "clientOrderId", req.ClientOrderID, "err", err)
		return exgate.Order{}, badAnswer(epNewOrder, err)
	}
	if o.ClientOrderID != req.ClientOrderID {
		e.log.WarnContext(ctx, "binance answered with another client order id", "sent", req.ClientOrderID, "got", o.ClientOrderID)
	}
	out := e.normalizeOrder(ctx, mk, o, req.ClientOrderID, plan.report, plan.reportIn)
	out.OpenAt = o.TransactTime
	if out.OpenAt == 0 {
		out.OpenAt = o.WorkingTime
	}
	out.CloseAt = out.OpenAt
	e.log.InfoContext(ctx, "binance order placed", "clientOrderId", req.ClientOrderID, "orderId", o.OrderID, "status", o.Status)
	return out, nil
}

// plan rounds the quantity and checks it against the symbol's minimums,
// reading the order book where the rules are in the other asset.
func (e *Exchange) plan(ctx context.Context, cred exgate.Credential, mk *market, req exgate.OrderRequest) (orderPlan, error) {
	switch {
	case req.QuantityIn == exgate.InBase:
		q := mk.roundBase(req.Quantity)
		if err := e.checkBase(ctx, cred, mk, req.Side, req.Quantity, q, ""); err != nil {
			return orderPlan{}, err
		}
		return orderPlan{param: "quantity", qty: q, report: q, reportIn: exgate.InBase}, nil

	case mk.quoteOrderAllowed:
		q := req.Quantity.RoundDown(mk.quotePrecision)
		if !q.IsPositive() {
			return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s rounds down to 0 at binance's %d decimals for %s", req.Quantity, mk.pair.Quote, mk.quotePrecision, mk.pair.Quote)
		}
		if mk.applyMin && q.LessThan(mk.minNotional) {
			return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s is under binance's minimum order value %s %s for %s (%s minNotional)", q, mk.pair.Quote, mk.minNotional, mk.pair.Quote, mk.pair, mk.notionalBy)
		}
		if mk.minQty.IsPositive() {
			book, err := e.book(ctx, cred, mk, 100)
			if err != nil {
				return orderPlan{}, err
			}
			if base, ok := walkQuote(book.side(req.Side), q); ok {
				if rb := mk.roundBase(base); rb.LessThan(mk.minQty) {
					return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
						"quantity %s %s is about %s %s at the order book, under binance's minimum %s %s for %s (LOT_SIZE minQty)", q, mk.pair.Quote, rb, mk.pair.Base, mk.minQty, mk.pair.Base, mk.pair)
				}
			}
		}
		return orderPlan{param: "quoteOrderQty", qty: q, report: q, reportIn: exgate.InQuote}, nil

	default:
		// The symbol does not take quoteOrderQty: convert against the
		// book (BUY: what the quote amount buys at the asks; SELL: what
		// must be sold at the bids to receive it) and send quantity.
		book, err := e.book(ctx, cred, mk, 100)
		if err != nil {
			return orderPlan{}, err
		}
		base, ok := walkQuote(book.side(req.Side), req.Quantity)
		if !ok {
			return orderPlan{}, exgate.Errorf(exgate.CodeOrderRejected, "binance's %s order book is empty on the %s side; cannot convert %s %s", mk.pair, bookSideName(req.Side), req.Quantity, mk.pair.Quote)
		}
		q := mk.roundBase(base)
		detail := fmt.Sprintf(" (%s %s converted at the order book)", req.Quantity, mk.pair.Quote)
		if err := e.checkBase(ctx, cred, mk, req.Side, base, q, detail); err != nil {
			return orderPlan{}, err
		}
		return orderPlan{param: "quantity", qty: q, report: req.Quantity.RoundDown(mk.quotePrecision), reportIn: exgate.InQuote}, nil
	}
}

// checkBase refuses a rounded base quantity q (from the client's asked)
// under the lot minimum, over the lot maximum, or whose value estimated
// at the order book is under the notional minimum.
func (e *Exchange) checkBase(ctx context.Context, cred exgate.Credential, mk *market, side exgate.Side, asked, q decimal.Decimal, note string) error {
	step := mk.lotStep
	if mk.mktStep.GreaterThan(step) {
		step = mk.mktStep
	}
	if !q.IsPositive() || q.LessThan(mk.minQty) {
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s%s rounds down to %s at step %s, under binance's minimum %s %s for %s (LOT_SIZE minQty)",
			asked, mk.pair.Base, note, q, step, mk.minQty, mk.pair.Base, mk.pair)
	}
	if mk.maxQty.IsPositive() && q.GreaterThan(mk.maxQty) {
		return exgate.Errorf(exgate.CodeOrderRejected, "quantity %s %s is over binance's maximum %s %s for a MARKET order on %s", q, mk.pair.Base, mk.maxQty, mk.pair.Base, mk.pair)
	}
	if !mk.applyMin {
		return nil
	}
	book, err := e.book(ctx, cred, mk, 100)
	if err != nil {
		return err
	}
	value, ok := walkBase(book.side(side), q)
	if ok && value.LessThan(mk.minNotional) {
		return exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s is worth about %s %s at the order book, under binance's minimum order value %s %s for %s (%s minNotional)",
			q, mk.pair.Base, value.Round(int32(mk.quotePrecision)), mk.pair.Quote, mk.minNotional, mk.pair.Quote, mk.pair, mk.notionalBy)
	}
	return nil
}

func bookSideName(s exgate.Side) string {
	if s == exgate.SideBuy {
		return "ask"
	}
	return "bid"
}

// QueryOrder reads an order back by its client order id with
// GET /api/v3/order?origClientOrderId= (or by orderId when only the
// exchange id is known), and its fees from GET /api/v3/myTrades when it
// has fills. -2013 (and -2026, archived) is an error wrapping
// exgate.ErrNotFound.
func (e *Exchange) QueryOrder(ctx context.Context, cred exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	mk, err := e.markets.lookup(ctx, q.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	var p rest.Params
	p.Add("symbol", mk.symbol)
	switch {
	case q.ClientOrderID != "":
		p.Add("origClientOrderId", q.ClientOrderID)
	case q.ExchangeOrderID != "":
		p.Add("orderId", q.ExchangeOrderID)
	default:
		return exgate.Order{}, exgate.ParamError("clientOrderId", "an order is looked up by its client order id")
	}
	body, err := e.c.do(ctx, request{ep: epQueryOrder, params: p, cred: &cred})
	if err != nil {
		if ae, ok := errors.AsType[*apiError](err); ok && (ae.code == codeNoSuchOrder || ae.code == codeOrderArchived) {
			return exgate.Order{}, &exgate.Error{Code: exgate.CodeNotFound,
				Detail: fmt.Sprintf("binance has no order %s on %s: %s", orderName(q), mk.pair, ae.msg),
				Err:    fmt.Errorf("%w: %w", exgate.ErrNotFound, ae)}
		}
		return exgate.Order{}, err
	}
	o, err := parseOrder(body)
	if err != nil {
		return exgate.Order{}, badAnswer(epQueryOrder, err)
	}
	qty, in := o.OrigQty.Decimal, exgate.InBase
	if o.OrigQuoteOrderQty.IsPositive() {
		qty, in = o.OrigQuoteOrderQty.Decimal, exgate.InQuote
	}
	id := q.ClientOrderID
	if id == "" {
		id = o.ClientOrderID
	}
	if o.ExecutedQty.IsPositive() && len(o.Fills) == 0 {
		o.Fills = e.tradeFills(ctx, cred, mk, o.OrderID)
	}
	out := e.normalizeOrder(ctx, mk, o, id, qty, in)
	out.OpenAt = o.Time
	if out.OpenAt == 0 {
		out.OpenAt = o.WorkingTime
	}
	out.CloseAt = out.OpenAt
	if out.Status.Final() && o.UpdateTime >= out.OpenAt {
		out.CloseAt = o.UpdateTime
	}
	return out, nil
}

func orderName(q exgate.OrderQuery) string {
	if q.ClientOrderID != "" {
		return "with client order id " + q.ClientOrderID
	}
	return "with order id " + q.ExchangeOrderID
}

// tradeFills reads an order's trades for their commissions. It is best
// effort: without them the order is reported with fees null.
func (e *Exchange) tradeFills(ctx context.Context, cred exgate.Credential, mk *market, orderID int64) []fillJSON {
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("orderId", strconv.FormatInt(orderID, 10))
	body, err := e.c.do(ctx, request{ep: epMyTrades, params: p, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "binance trades of an order not read; fees unknown", "orderId", orderID, "err", err)
		return nil
	}
	fills, err := parseTrades(body, orderID)
	if err != nil {
		e.log.WarnContext(ctx, "binance trades answer unreadable; fees unknown", "orderId", orderID, "err", err)
		return nil
	}
	return fills
}

// normalizeOrder builds the gateway's order from Binance's. OpenAt and
// CloseAt are set by the caller.
func (e *Exchange) normalizeOrder(ctx context.Context, mk *market, o orderJSON, id string, qty decimal.Decimal, in exgate.QuantityIn) exgate.Order {
	out := exgate.Order{
		ID:               id,
		Asset1:           mk.pair.Base,
		Asset2:           mk.pair.Quote,
		Status:           orderStatus(o.Status),
		RawStatus:        o.Status,
		Type:             exgate.OrderTypeMarket,
		Side:             exgate.Side(o.Side),
		Quantity:         exgate.NewNumber(qty),
		QuantityIn:       in.Asset(mk.pair),
		Exchange:         exgate.ExchangeBinance,
		ClientOrderID:    id,
		ExchangeOrderID:  strconv.FormatInt(o.OrderID, 10),
		ExecutedQuantity: exgate.NumberPtr(o.ExecutedQty.Decimal),
	}
	if !o.CummulativeQuoteQty.IsNegative() {
		out.QuoteQuantity = exgate.NumberPtr(o.CummulativeQuoteQty.Decimal)
		if o.ExecutedQty.IsPositive() {
			out.AveragePrice = exgate.NumberPtr(o.CummulativeQuoteQty.DivRound(o.ExecutedQty.Decimal, 16))
		}
	}
	if fee, ok := fees(mk, o.Fills); ok {
		out.Fees = exgate.NumberPtr(fee.amount)
		out.FeesIn = fee.asset
		if len(fee.dropped) > 0 {
			e.log.WarnContext(ctx, "binance commissions in several assets; reporting the majority asset only",
				"orderId", o.OrderID, "feesIn", fee.asset, "notIncluded", fee.dropped)
		}
	}
	return out
}

// feeTotal is an order's commission in one asset; dropped lists
// commissions in assets that could not be converted to it.
type feeTotal struct {
	amount  decimal.Decimal
	asset   string
	dropped []string
}

// fees sums the fills' commissions. When they come in several assets, the
// asset most fills were charged in is reported, and commissions in the
// symbol's other asset are converted at their fill's price; a commission
// in a third asset (BNB) cannot be converted with the fill prices and is
// left out (and logged).
func fees(mk *market, fills []fillJSON) (feeTotal, bool) {
	if len(fills) == 0 {
		return feeTotal{}, false
	}
	count := map[string]int{}
	var order []string
	for _, f := range fills {
		a := exgate.NormalizeAsset(f.CommissionAsset)
		if count[a] == 0 {
			order = append(order, a)
		}
		count[a]++
	}
	target := order[0]
	for _, a := range order[1:] {
		if count[a] > count[target] {
			target = a
		}
	}
	out := feeTotal{asset: target}
	for _, f := range fills {
		a := exgate.NormalizeAsset(f.CommissionAsset)
		switch {
		case a == target:
			out.amount = out.amount.Add(f.Commission.Decimal)
		case a == mk.pair.Base && target == mk.pair.Quote:
			out.amount = out.amount.Add(f.Commission.Mul(f.Price.Decimal))
		case a == mk.pair.Quote && target == mk.pair.Base && f.Price.IsPositive():
			out.amount = out.amount.Add(f.Commission.DivRound(f.Price.Decimal, max(mk.basePrecision, 8)))
		default:
			out.dropped = append(out.dropped, f.Commission.String()+" "+a)
		}
	}
	return out, true
}

// orderJSON is an order answer: POST /api/v3/order (FULL) and
// GET /api/v3/order share these fields. Quantities are decimal strings.
type orderJSON struct {
	Symbol              string       `json:"symbol"`
	OrderID             int64        `json:"orderId"`
	ClientOrderID       string       `json:"clientOrderId"`
	TransactTime        int64        `json:"transactTime"`
	Time                int64        `json:"time"`
	UpdateTime          int64        `json:"updateTime"`
	WorkingTime         int64        `json:"workingTime"`
	OrigQty             rest.Decimal `json:"origQty"`
	ExecutedQty         rest.Decimal `json:"executedQty"`
	OrigQuoteOrderQty   rest.Decimal `json:"origQuoteOrderQty"`
	CummulativeQuoteQty rest.Decimal `json:"cummulativeQuoteQty"`
	Status              string       `json:"status"`
	Type                string       `json:"type"`
	Side                string       `json:"side"`
	Fills               []fillJSON   `json:"fills"`
}

// fillJSON is one fill of a FULL answer (or one trade of myTrades).
type fillJSON struct {
	Price           rest.Decimal `json:"price"`
	Qty             rest.Decimal `json:"qty"`
	Commission      rest.Decimal `json:"commission"`
	CommissionAsset string       `json:"commissionAsset"`
}

// parseOrder reads an order answer and checks what the adapter relies on.
func parseOrder(body []byte) (orderJSON, error) {
	var o orderJSON
	if err := json.Unmarshal(body, &o); err != nil {
		return orderJSON{}, fmt.Errorf("order answer: %w", err)
	}
	if o.OrderID == 0 || o.Status == "" {
		return orderJSON{}, fmt.Errorf("order answer without orderId or status: %s", rest.Truncate(body))
	}
	if o.Side != string(exgate.SideBuy) && o.Side != string(exgate.SideSell) {
		return orderJSON{}, fmt.Errorf("order answer with side %q", o.Side)
	}
	if o.OrigQty.IsNegative() || o.ExecutedQty.IsNegative() || o.OrigQuoteOrderQty.IsNegative() {
		return orderJSON{}, fmt.Errorf("order answer with a negative quantity")
	}
	for _, f := range o.Fills {
		if f.Price.IsNegative() || f.Qty.IsNegative() || f.Commission.IsNegative() {
			return orderJSON{}, fmt.Errorf("order answer with a negative fill")
		}
	}
	return o, nil
}

// parseTrades reads GET /api/v3/myTrades, keeping the trades of orderID.
func parseTrades(body []byte, orderID int64) ([]fillJSON, error) {
	var trades []struct {
		OrderID int64 `json:"orderId"`
		fillJSON
	}
	if err := json.Unmarshal(body, &trades); err != nil {
		return nil, fmt.Errorf("trades answer: %w", err)
	}
	var out []fillJSON
	for _, t := range trades {
		if t.OrderID == orderID {
			if t.Commission.IsNegative() || t.Price.IsNegative() {
				return nil, fmt.Errorf("trades answer with a negative value")
			}
			out = append(out, t.fillJSON)
		}
	}
	return out, nil
}
