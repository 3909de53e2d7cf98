package binance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// clientIDRule is what Binance accepts as newClientOrderId (errors.md,
// -1100 message for newClientOrderId).
var clientIDRule = rest.ClientIDRule{Exchange: "binance", Pattern: regexp.MustCompile(`^[a-zA-Z0-9_-]{1,36}$`), Allowed: "1 to 36 characters of [a-zA-Z0-9_-]"}

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
	mk, err := rest.PrepareOrder(ctx, req, clientIDRule, true, e.markets.lookup)
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
	o, err := rest.SendOrder(ctx, e.log, "binance", "order", e.c.do, request{ep: epNewOrder, params: p, cred: &cred}, parseOrder, req.ClientOrderID, "symbol", mk.symbol)
	if err != nil {
		return exgate.Order{}, err
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
	p, err := orderRef(mk, q.ClientOrderID, q.ExchangeOrderID, "looked up")
	if err != nil {
		return exgate.Order{}, err
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
	id := q.ClientOrderID
	if id == "" {
		id = o.ClientOrderID
	}
	if o.ExecutedQty.IsPositive() && len(o.Fills) == 0 {
		o.Fills = e.tradeFills(ctx, cred, mk, o.OrderID)
	}
	return e.orderOf(ctx, mk, o, id), nil
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
		Exchange:         Name,
		ClientOrderID:    id,
		ExchangeOrderID:  strconv.FormatInt(o.OrderID, 10),
		ExecutedQuantity: exgate.NumberPtr(o.ExecutedQty.Decimal),
	}
	if !o.CummulativeQuoteQty.IsNegative() {
		out.QuoteQuantity = exgate.NumberPtr(o.CummulativeQuoteQty.Decimal)
		if o.ExecutedQty.IsPositive() {
			out.AveragePrice = exgate.AveragePrice(o.CummulativeQuoteQty.Decimal, o.ExecutedQty.Decimal)
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
	Price               rest.Decimal `json:"price"`
	TimeInForce         string       `json:"timeInForce"`
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

// checkLimit checks a limit order against its market before anything is
// sent: the price on PRICE_FILTER's tickSize (never moved), the quantity
// rounded down to LOT_SIZE's stepSize and at least its minQty, and the
// order's value at its price at least the NOTIONAL (or MIN_NOTIONAL)
// minimum, which applies to every LIMIT order whatever its apply-to-market
// flag (filters.md). It returns the market and the rounded quantity.
func (e *Exchange) checkLimit(ctx context.Context, req exgate.LimitOrderRequest) (*market, decimal.Decimal, error) {
	if err := clientIDRule.Check(req.ClientOrderID, false); err != nil {
		return nil, decimal.Zero, err
	}
	if err := req.Validate(); err != nil {
		return nil, decimal.Zero, err
	}
	mk, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return nil, decimal.Zero, err
	}
	if mk.status != "TRADING" {
		return nil, decimal.Zero, exgate.Errorf(exgate.CodeOrderRejected, "%s is not trading on binance (status %s)", mk.pair, mk.status)
	}
	typ := limitType(req)
	if (typ == "LIMIT" && !mk.limitAllowed) || (typ == "LIMIT_MAKER" && !mk.makerOK) {
		return nil, decimal.Zero, exgate.Errorf(exgate.CodeOrderRejected, "binance takes no %s orders on %s", typ, mk.pair)
	}
	if err := exgate.CheckPrice(req.Price, mk.tick); err != nil {
		return nil, decimal.Zero, err
	}
	q := roundDownStep(req.Quantity, mk.lotStep)
	if !q.IsPositive() || q.LessThan(mk.limitMin) {
		return nil, decimal.Zero, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s rounds down to %s at step %s, under binance's minimum %s %s for %s (LOT_SIZE minQty)",
			req.Quantity, mk.pair.Base, q, mk.lotStep, mk.limitMin, mk.pair.Base, mk.pair)
	}
	if mk.limitMax.IsPositive() && q.GreaterThan(mk.limitMax) {
		return nil, decimal.Zero, exgate.Errorf(exgate.CodeOrderRejected, "quantity %s %s is over binance's maximum %s %s for %s (LOT_SIZE maxQty)", q, mk.pair.Base, mk.limitMax, mk.pair.Base, mk.pair)
	}
	if v := q.Mul(req.Price); v.LessThan(mk.limitNotional) {
		return nil, decimal.Zero, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s at %s is worth %s %s, under binance's minimum order value %s %s for %s (%s minNotional)",
			q, mk.pair.Base, req.Price, v, mk.pair.Quote, mk.limitNotional, mk.pair.Quote, mk.pair, mk.limitNotionalBy)
	}
	return mk, q, nil
}

// limitType is Binance's order type for a limit order: LIMIT_MAKER for
// postOnly, which Binance refuses with -2010 "Order would immediately
// match and take." instead of trading (rest-api.md, "New order").
func limitType(req exgate.LimitOrderRequest) string {
	if req.PostOnly {
		return "LIMIT_MAKER"
	}
	return "LIMIT"
}

// limitParams are POST /api/v3/order's parameters for a checked limit
// order. LIMIT_MAKER takes no timeInForce (it works until canceled).
func limitParams(mk *market, req exgate.LimitOrderRequest, q decimal.Decimal) rest.Params {
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("side", string(req.Side))
	p.Add("type", limitType(req))
	if !req.PostOnly {
		p.Add("timeInForce", timesInForce[req.TimeInForce])
	}
	p.Add("quantity", q.String())
	p.Add("price", req.Price.String())
	if req.ClientOrderID != "" {
		p.Add("newClientOrderId", req.ClientOrderID)
	}
	return p
}

// PlaceLimitOrder sends one LIMIT order (GTC, IOC or FOK) or, for
// postOnly, one LIMIT_MAKER order with newClientOrderId = the gateway's
// id and newOrderRespType=FULL, after checkLimit. It is never retried: an
// unknown outcome is EXCHANGE_TIMEOUT and the journal reads the order.
func (e *Exchange) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, error) {
	if err := clientIDRule.Check(req.ClientOrderID, true); err != nil {
		return exgate.Order{}, err
	}
	mk, q, err := e.checkLimit(ctx, req)
	if err != nil {
		return exgate.Order{}, err
	}
	p := limitParams(mk, req, q)
	p.Add("newOrderRespType", "FULL")
	o, err := rest.SendOrder(ctx, e.log, "binance", "limit order", e.c.do, request{ep: epNewOrder, params: p, cred: &cred}, parseOrder, req.ClientOrderID, "symbol", mk.symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	out := e.orderOf(ctx, mk, o, req.ClientOrderID)
	out.OpenAt = cmp.Or(o.TransactTime, o.WorkingTime)
	out.CloseAt = out.OpenAt
	e.log.InfoContext(ctx, "binance limit order placed", "clientOrderId", req.ClientOrderID, "orderId", o.OrderID, "status", o.Status)
	return out, nil
}

// orderOf builds the gateway's order from one of Binance's order
// answers, market or limit, under the client order id id.
func (e *Exchange) orderOf(ctx context.Context, mk *market, o orderJSON, id string) exgate.Order {
	qty, in := o.OrigQty.Decimal, exgate.InBase
	if o.OrigQuoteOrderQty.IsPositive() {
		qty, in = o.OrigQuoteOrderQty.Decimal, exgate.InQuote
	}
	out := e.normalizeOrder(ctx, mk, o, id, qty, in)
	if o.Type == "LIMIT" || o.Type == "LIMIT_MAKER" {
		out.Type = exgate.OrderTypeLimit
		out.Price = exgate.NumberPtr(o.Price.Decimal)
		out.PostOnly = o.Type == "LIMIT_MAKER"
		out.TimeInForce = exgate.GTC
		if t, ok := timesInForceFrom[o.TimeInForce]; ok && !out.PostOnly {
			out.TimeInForce = t
		}
	}
	out.OpenAt = cmp.Or(o.Time, o.TransactTime, o.WorkingTime)
	out.CloseAt = out.OpenAt
	if out.Status.Final() && o.UpdateTime >= out.OpenAt {
		out.CloseAt = o.UpdateTime
	}
	return out
}

// TestOrder checks a limit or market order as PlaceLimitOrder and
// PlaceMarketOrder would and sends it to POST /api/v3/order/test, which
// validates it and places nothing (rest-api.md, "Test new order"). The
// answer is the order as it would be sent, status TEST.
func (e *Exchange) TestOrder(ctx context.Context, cred exgate.Credential, req exgate.TestOrderRequest) (exgate.Order, error) {
	now := e.c.Now().UnixMilli()
	switch {
	case req.Limit != nil:
		r := *req.Limit
		mk, q, err := e.checkLimit(ctx, r)
		if err != nil {
			return exgate.Order{}, err
		}
		if _, err := e.c.do(ctx, request{ep: epTestOrder, params: limitParams(mk, r, q), cred: &cred}); err != nil {
			return exgate.Order{}, err
		}
		return exgate.Order{ID: r.ClientOrderID, Asset1: mk.pair.Base, Asset2: mk.pair.Quote, Status: exgate.OrderTest,
			Type: exgate.OrderTypeLimit, Side: r.Side, Quantity: exgate.NewNumber(q), QuantityIn: mk.pair.Base,
			Price: exgate.NumberPtr(r.Price), TimeInForce: r.TimeInForce, PostOnly: r.PostOnly,
			OpenAt: now, CloseAt: now, Exchange: Name, ClientOrderID: r.ClientOrderID}, nil
	case req.Market != nil:
		r := *req.Market
		mk, err := rest.PrepareOrder(ctx, r, clientIDRule, false, e.markets.lookup)
		if err != nil {
			return exgate.Order{}, err
		}
		if mk.status != "TRADING" || !mk.marketAllowed {
			return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "binance takes no MARKET orders on %s (status %s)", mk.pair, mk.status)
		}
		plan, err := e.plan(ctx, cred, mk, r)
		if err != nil {
			return exgate.Order{}, err
		}
		var p rest.Params
		p.Add("symbol", mk.symbol)
		p.Add("side", string(r.Side))
		p.Add("type", "MARKET")
		p.Add(plan.param, plan.qty.String())
		if r.ClientOrderID != "" {
			p.Add("newClientOrderId", r.ClientOrderID)
		}
		if _, err := e.c.do(ctx, request{ep: epTestOrder, params: p, cred: &cred}); err != nil {
			return exgate.Order{}, err
		}
		return rest.TestedMarketOrder(Name, r, mk.pair, plan.report, plan.reportIn, now), nil
	}
	return exgate.Order{}, exgate.ParamError("type", "a test order is a market or a limit order")
}

// CancelOrder cancels an open order with DELETE /api/v3/order by
// origClientOrderId (by orderId only for an order placed outside the
// gateway that has no client id). A client order id names one open order
// (Binance refuses a second open order with the same id), so the cancel
// cannot hit another order. Binance answers -2011 "Unknown order sent."
// both for an order it does not know and for one already final
// (errors.md); the order is then read: final, it is returned as it ended
// (FILLED, EXPIRED, CANCELED); unknown, the error wraps exgate.ErrNotFound.
// A cancel whose outcome is unknown (timeout, 5xx, reset) is
// EXCHANGE_TIMEOUT; the journal reads the order then.
func (e *Exchange) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	mk, err := e.markets.lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	p, err := orderRef(mk, req.ClientOrderID, req.ExchangeOrderID, "canceled")
	if err != nil {
		return exgate.Order{}, err
	}
	q := exgate.OrderQuery(req)
	body, err := e.c.do(ctx, request{ep: epCancelOrder, params: p, cred: &cred})
	if err != nil {
		ae, ok := errors.AsType[*apiError](err)
		if !ok || !cancelRefused[ae.code] {
			return exgate.Order{}, err
		}
		o, qerr := e.QueryOrder(ctx, cred, q)
		if qerr != nil {
			return exgate.Order{}, qerr
		}
		if !o.Status.Final() {
			// Still open after a refused cancel (cancelRestrictions,
			// or a race with the engine): say so, do not pretend.
			return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "binance refused to cancel order %s (%s): %s", o.ClientOrderID, o.Status, ae.msg)
		}
		return o, nil
	}
	o, err := parseOrder(body)
	if err != nil {
		return exgate.Order{}, badAnswer(epCancelOrder, err)
	}
	var c struct {
		OrigClientOrderID string `json:"origClientOrderId"`
	}
	if json.Unmarshal(body, &c) == nil && c.OrigClientOrderID != "" {
		o.ClientOrderID = c.OrigClientOrderID // clientOrderId is the cancel's own id
	}
	// The cancel's answer has neither the order's time nor its fills:
	// the order is read back for them, and reported from the answer when
	// that read fails.
	out, qerr := e.QueryOrder(ctx, cred, q)
	if qerr != nil || out.Status != exgate.OrderCanceled {
		out = e.orderOf(ctx, mk, o, cmp.Or(req.ClientOrderID, o.ClientOrderID))
		out.OpenAt = cmp.Or(o.TransactTime, out.OpenAt)
		out.CloseAt = out.OpenAt
	}
	e.log.InfoContext(ctx, "binance order canceled", "clientOrderId", out.ClientOrderID, "orderId", o.OrderID)
	return out, nil
}

// OpenOrders reads GET /api/v3/openOrders, of one symbol (weight 6) or of
// every symbol (weight 80), newest first. Orders placed outside the
// gateway come with Binance's client order id, which the journal does not
// know.
func (e *Exchange) OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	var p rest.Params
	r := request{ep: epOpenOrders, cred: &cred, weight: 80}
	if (f.Symbol != exgate.Symbol{}) {
		mk, err := e.markets.lookup(ctx, f.Symbol)
		if err != nil {
			return nil, err
		}
		p.Add("symbol", mk.symbol)
		r.weight = 6
	}
	r.params = p
	return e.orderList(ctx, r, 0)
}

// RecentOrders reads GET /api/v3/allOrders (oldest first, the most recent
// limit of them) and answers newest first.
func (e *Exchange) RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	mk, err := e.markets.lookup(ctx, f.Symbol)
	if err != nil {
		return nil, err
	}
	limit := historyLimit(f.Limit)
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("limit", strconv.Itoa(limit))
	return e.orderList(ctx, request{ep: epAllOrders, params: p, cred: &cred}, limit)
}

// historyLimit is the number of records a history call returns.
func historyLimit(n int) int { return rest.Limit(n, exgate.DefaultRecentLimit, exgate.MaxRecentLimit) }

// orderList reads an array of orders and returns them newest first, at
// most limit (0: all).
func (e *Exchange) orderList(ctx context.Context, r request, limit int) ([]exgate.Order, error) {
	body, err := e.c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, badAnswer(r.ep, fmt.Errorf("%s answer: %w", r.ep.name, err))
	}
	set, err := e.markets.get(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Order, 0, len(raw))
	for _, b := range raw {
		o, err := parseOrder(b)
		if err != nil {
			return nil, badAnswer(r.ep, err)
		}
		mk := set.bySymbol[o.Symbol]
		if mk == nil {
			e.log.WarnContext(ctx, "binance order on a symbol not in exchangeInfo; left out", "symbol", o.Symbol, "orderId", o.OrderID)
			continue
		}
		out = append(out, e.orderOf(ctx, mk, o, o.ClientOrderID))
	}
	// Binance lists oldest first; ties keep the exchange's order.
	slices.Reverse(out)
	slices.SortStableFunc(out, func(a, b exgate.Order) int { return cmp.Compare(b.OpenAt, a.OpenAt) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Fills reads GET /api/v3/myTrades (the most recent trades, weight 20)
// and, for the client order ids the trades lack, GET /api/v3/allOrders
// from the oldest trade's order on (weight 20). Newest first. isMaker is
// the maker flag, commission and commissionAsset the fee.
func (e *Exchange) Fills(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	mk, err := e.markets.lookup(ctx, f.Symbol)
	if err != nil {
		return nil, err
	}
	limit := historyLimit(f.Limit)
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("limit", strconv.Itoa(limit))
	body, err := e.c.do(ctx, request{ep: epMyTradesAll, params: p, cred: &cred})
	if err != nil {
		return nil, err
	}
	var trades []struct {
		ID      int64 `json:"id"`
		OrderID int64 `json:"orderId"`
		fillJSON
		QuoteQty rest.Decimal `json:"quoteQty"`
		Time     int64        `json:"time"`
		IsBuyer  bool         `json:"isBuyer"`
		IsMaker  bool         `json:"isMaker"`
	}
	if err := json.Unmarshal(body, &trades); err != nil {
		return nil, badAnswer(epMyTradesAll, fmt.Errorf("myTrades answer: %w", err))
	}
	out := make([]exgate.Fill, 0, len(trades))
	if len(trades) == 0 {
		return out, nil
	}
	first := trades[0].OrderID
	for _, t := range trades {
		first = min(first, t.OrderID)
	}
	clientIDs := e.clientIDs(ctx, cred, mk, first)
	for _, t := range slices.Backward(trades) {
		if t.Price.IsNegative() || t.Qty.IsNegative() || t.Commission.IsNegative() {
			return nil, badAnswer(epMyTradesAll, fmt.Errorf("myTrades answer with a negative value"))
		}
		side := exgate.SideSell
		if t.IsBuyer {
			side = exgate.SideBuy
		}
		quote := t.QuoteQty.Decimal
		if quote.IsZero() {
			quote = t.Qty.Mul(t.Price.Decimal)
		}
		out = append(out, exgate.Fill{
			ID: strconv.FormatInt(t.ID, 10), OrderID: strconv.FormatInt(t.OrderID, 10),
			Asset1: mk.pair.Base, Asset2: mk.pair.Quote, Side: side,
			Price: exgate.NewNumber(t.Price.Decimal), Quantity: exgate.NewNumber(t.Qty.Decimal), QuoteQuantity: exgate.NewNumber(quote),
			Fee: exgate.NewNumber(t.Commission.Decimal), FeeIn: exgate.NormalizeAsset(t.CommissionAsset),
			Maker: t.IsMaker, Timestamp: t.Time, ClientOrderID: clientIDs[t.OrderID],
		})
	}
	return out, nil
}

// clientIDs maps the symbol's order ids from first on to their client
// order ids. It is best effort: without it fills carry the exchange's
// order id only.
func (e *Exchange) clientIDs(ctx context.Context, cred exgate.Credential, mk *market, first int64) map[int64]string {
	var p rest.Params
	p.Add("symbol", mk.symbol)
	p.Add("orderId", strconv.FormatInt(first, 10))
	p.Add("limit", "1000")
	body, err := e.c.do(ctx, request{ep: epAllOrders, params: p, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "binance orders of the fills not read; fills carry the exchange's order ids only", "err", err)
		return nil
	}
	var orders []struct {
		OrderID       int64  `json:"orderId"`
		ClientOrderID string `json:"clientOrderId"`
	}
	if err := json.Unmarshal(body, &orders); err != nil {
		e.log.WarnContext(ctx, "binance allOrders answer unreadable", "err", err)
		return nil
	}
	out := make(map[int64]string, len(orders))
	for _, o := range orders {
		out[o.OrderID] = o.ClientOrderID
	}
	return out
}

// orderRef names one order of a market for GET and DELETE /api/v3/order:
// by origClientOrderId, or by orderId when only the exchange's id is known
// (an order placed outside the gateway). what says what the order is for
// ("looked up", "canceled") in the error when neither is given.
func orderRef(mk *market, clientOrderID, exchangeOrderID, what string) (rest.Params, error) {
	var p rest.Params
	p.Add("symbol", mk.symbol)
	switch {
	case clientOrderID != "":
		p.Add("origClientOrderId", clientOrderID)
	case exchangeOrderID != "":
		p.Add("orderId", exchangeOrderID)
	default:
		return p, exgate.ParamError("clientOrderId", "an order is %s by its client order id", what)
	}
	return p, nil
}
