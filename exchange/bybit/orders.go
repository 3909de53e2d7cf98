package bybit

import (
	"cmp"
	"context"
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

// clientIDRule is Bybit's orderLinkId: at most 36 characters of letters,
// digits, "-" and "_". Source:
// https://bybit-exchange.github.io/docs/v5/order/create-order
// (orderLinkId). It is the gateway's own rule (docs/contract.md 2.4), so a
// client order id is sent as it is.
var clientIDRule = rest.ClientIDRule{Exchange: Name, Pattern: regexp.MustCompile(`^[A-Za-z0-9_-]{1,36}$`), Allowed: "1 to 36 characters of [A-Za-z0-9_-]"}

// createOrderBody is POST /v5/order/create. Field order is the order sent
// and signed.
type createOrderBody struct {
	Category    string `json:"category"`
	Symbol      string `json:"symbol"`
	Side        string `json:"side"`
	OrderType   string `json:"orderType"`
	Qty         string `json:"qty"`
	Price       string `json:"price,omitempty"`
	MarketUnit  string `json:"marketUnit,omitempty"`
	TimeInForce string `json:"timeInForce,omitempty"`
	OrderLinkID string `json:"orderLinkId"`
}

// bybitSide is Bybit's side: Buy or Sell.
func bybitSide(s exgate.Side) string {
	if s == exgate.SideSell {
		return "Sell"
	}
	return "Buy"
}

// marketUnits name the asset of a market order's qty. Source:
// https://bybit-exchange.github.io/docs/v5/order/create-order
// (marketUnit: baseCoin or quoteCoin, spot market orders only, either
// side; without it a market Buy is in the quote coin and a market Sell in
// the base coin). The adapter always sends it, so no default applies.
var marketUnits = map[exgate.QuantityIn]string{
	exgate.InBase:  "baseCoin",
	exgate.InQuote: "quoteCoin",
}

// marketPlan is a market order as it is sent: qty in the asset in.
type marketPlan struct {
	qty decimal.Decimal
	in  exgate.QuantityIn
}

// planMarket rounds a market order's quantity down to the step of its
// asset and checks the instrument's rules: a quantity that rounds to
// nothing, or an order worth less than minOrderAmt (for a base quantity,
// valued at the best price of the side it takes), is QUANTITY_TOO_SMALL;
// a base quantity over maxMarketOrderQty is ORDER_REJECTED. Nothing is
// sent for a refused order.
func (e *Exchange) planMarket(ctx context.Context, p *pair, req exgate.OrderRequest) (marketPlan, error) {
	if !p.trading() {
		return marketPlan{}, exgate.Errorf(exgate.CodeOrderRejected, "bybit does not trade %s now (status %s)", p.sym, p.status)
	}
	if req.QuantityIn == exgate.InQuote {
		q := p.roundQuote(req.Quantity)
		if !q.IsPositive() || q.LessThan(p.minAmt) {
			return marketPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s rounds down to %s at bybit's step %s, under the minimum order value %s %s for %s (minOrderAmt)",
				req.Quantity, p.sym.Quote, q, p.quoteStep, p.minAmt, p.sym.Quote, p.sym)
		}
		return marketPlan{qty: q, in: exgate.InQuote}, nil
	}
	q := p.roundBase(req.Quantity)
	if !q.IsPositive() {
		return marketPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s rounds down to 0 at bybit's step %s for %s (basePrecision)", req.Quantity, p.sym.Base, p.baseStep, p.sym)
	}
	if p.maxMarket.IsPositive() && q.GreaterThan(p.maxMarket) {
		return marketPlan{}, exgate.Errorf(exgate.CodeOrderRejected, "quantity %s %s is over bybit's maximum %s %s for a market order on %s (maxMarketOrderQty)",
			q, p.sym.Base, p.maxMarket, p.sym.Base, p.sym)
	}
	if p.minAmt.IsPositive() {
		bids, asks, err := e.book(ctx, p, 1)
		if err != nil {
			return marketPlan{}, err
		}
		side := asks
		if req.Side == exgate.SideSell {
			side = bids
		}
		if len(side) > 0 {
			if v := q.Mul(side[0].price.Decimal); v.LessThan(p.minAmt) {
				return marketPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
					"%s %s is worth about %s %s at the order book, under bybit's minimum order value %s %s for %s (minOrderAmt)",
					q, p.sym.Base, v.Round(8), p.sym.Quote, p.minAmt, p.sym.Quote, p.sym)
			}
		}
	}
	return marketPlan{qty: q, in: exgate.InBase}, nil
}

// PlaceMarketOrder sends one market order, POST /v5/order/create
// orderType=Market with marketUnit baseCoin or quoteCoin (both assets work
// natively on both sides: nothing is converted) and orderLinkId =
// req.ClientOrderID; never retried. Bybit acknowledges an order before it
// executes, so the order is read back by its id for its status and fills;
// a read that fails leaves it PENDING (the journal reconciles).
func (e *Exchange) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	p, err := rest.PrepareOrder(ctx, req, clientIDRule, true, e.markets.Lookup)
	if err != nil {
		return exgate.Order{}, err
	}
	plan, err := e.planMarket(ctx, p, req)
	if err != nil {
		return exgate.Order{}, err
	}
	body, err := json.Marshal(createOrderBody{
		Category: "spot", Symbol: p.id, Side: bybitSide(req.Side), OrderType: "Market",
		Qty: plan.qty.String(), MarketUnit: marketUnits[plan.in], OrderLinkID: req.ClientOrderID,
	})
	if err != nil {
		return exgate.Order{}, fmt.Errorf("bybit: encoding order: %w", err)
	}
	ack, err := rest.SendOrder(ctx, e.log, Name, "order", e.c.do, request{ep: epCreateOrder, body: body, cred: &cred}, parseOrderAck, req.ClientOrderID, "symbol", p.id)
	if err != nil {
		return exgate.Order{}, err
	}
	e.log.InfoContext(ctx, "bybit order placed", "clientOrderId", req.ClientOrderID, "orderId", ack.OrderID)
	o, ok := e.readBack(ctx, cred, p, ack, true)
	if !ok {
		out := e.pendingOrder(p, req.ClientOrderID, ack.OrderID, req.Side, plan.qty, plan.in)
		out.Type = exgate.OrderTypeMarket
		return out, nil
	}
	return e.orderFromBybit(p, o, req.ClientOrderID), nil
}

// pendingOrder is an order Bybit acknowledged and the adapter could not
// read back yet.
func (e *Exchange) pendingOrder(p *pair, id, orderID string, side exgate.Side, qty decimal.Decimal, in exgate.QuantityIn) exgate.Order {
	now := e.c.Now().UnixMilli()
	return exgate.Order{
		ID: id, Asset1: p.sym.Base, Asset2: p.sym.Quote, Status: exgate.OrderPending, Side: side,
		Quantity: exgate.NewNumber(qty), QuantityIn: in.Asset(p.sym), OpenAt: now, CloseAt: now,
		Exchange: Name, ClientOrderID: id, ExchangeOrderID: orderID,
	}
}

// readBackWaits are the pauses before the reads of an order just placed
// or canceled while it is not settled yet: Bybit executes and cancels
// asynchronously ("the order's status should be checked with the realtime
// query or the order stream",
// https://bybit-exchange.github.io/docs/v5/order/create-order).
var readBackWaits = []time.Duration{0, 50 * time.Millisecond, 150 * time.Millisecond}

// readBack reads an order by Bybit's id until it is settled: final, or
// (unless settle) simply known. ok is false when no read succeeded.
func (e *Exchange) readBack(ctx context.Context, cred exgate.Credential, p *pair, ack orderAckJSON, settle bool) (orderJSON, bool) {
	var last orderJSON
	found := false
	for _, wait := range readBackWaits {
		if wait > 0 && rest.Wait(ctx, wait, wait, "bybit order read-back") != nil {
			break
		}
		o, err := e.findOrder(ctx, cred, p, ack.OrderID, ack.OrderLinkID)
		if err != nil {
			if !errors.Is(err, exgate.ErrNotFound) {
				e.log.WarnContext(ctx, "bybit order not read back", "orderId", ack.OrderID, "err", err)
				break
			}
			continue
		}
		last, found = o, true
		if !settle || orderStatus(o.OrderStatus, o.CancelType, o.CumExecQty.IsPositive()).Final() {
			break
		}
	}
	return last, found
}

// findOrder reads one order by Bybit's id or its orderLinkId: first from
// GET /v5/order/realtime (open orders and the most recent closed ones),
// then from GET /v5/order/history (closed orders of the last 7 days).
// A miss is an error wrapping exgate.ErrNotFound.
func (e *Exchange) findOrder(ctx context.Context, cred exgate.Credential, p *pair, orderID, linkID string) (orderJSON, error) {
	for _, ep := range []endpoint{epRealtime, epHistory} {
		var ps rest.Params
		ps.Add("category", "spot")
		ps.Add("symbol", p.id)
		if orderID != "" {
			ps.Add("orderId", orderID)
		} else {
			ps.Add("orderLinkId", linkID)
		}
		page, err := rest.Fetch(ctx, e.c.do, request{ep: ep, params: ps, cred: &cred}, parseOrders)
		if err != nil {
			return orderJSON{}, err
		}
		for _, o := range page.items() {
			if (orderID != "" && o.OrderID == orderID) || (orderID == "" && o.OrderLinkID == linkID) {
				return o, nil
			}
		}
	}
	name := "with orderLinkId " + linkID
	if orderID != "" {
		name = "with orderId " + orderID
	}
	return orderJSON{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: fmt.Sprintf("bybit has no order %s on %s", name, p.sym),
		Err: fmt.Errorf("bybit: order %s: %w", name, exgate.ErrNotFound)}
}

// QueryOrder reads an order back by Bybit's id when the gateway knows it
// (checked to carry the client order id), else by its orderLinkId: from
// the open and recent orders, then the 7-day history. Not found: an
// error wrapping exgate.ErrNotFound.
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
	var o orderJSON
	found := false
	if q.ExchangeOrderID != "" {
		o, err = e.findOrder(ctx, cred, p, q.ExchangeOrderID, "")
		switch {
		case err == nil && (q.ClientOrderID == "" || o.OrderLinkID == q.ClientOrderID):
			found = true
		case err == nil:
			e.log.WarnContext(ctx, "bybit order id belongs to another orderLinkId", "orderId", q.ExchangeOrderID, "orderLinkId", o.OrderLinkID, "want", q.ClientOrderID)
		case !errors.Is(err, exgate.ErrNotFound) || q.ClientOrderID == "":
			return exgate.Order{}, err
		}
	}
	if !found {
		if o, err = e.findOrder(ctx, cred, p, "", q.ClientOrderID); err != nil {
			return exgate.Order{}, err
		}
	}
	return e.orderFromBybit(p, o, q.ClientOrderID), nil
}

// amountIn is the asset of an order's qty: for a market order its
// marketUnit, and without one the quote coin for a Buy and the base coin
// for a Sell (Bybit's defaults); a limit order's qty is in base.
func amountIn(o orderJSON) exgate.QuantityIn {
	if o.OrderType != "Market" {
		return exgate.InBase
	}
	switch o.MarketUnit {
	case "baseCoin":
		return exgate.InBase
	case "quoteCoin":
		return exgate.InQuote
	}
	if o.Side == "Buy" {
		return exgate.InQuote
	}
	return exgate.InBase
}

// orderFromBybit builds the gateway's order from Bybit's. id is the
// gateway's id when known; otherwise the order's orderLinkId (Bybit gives
// one to every order, also those placed on its site), else its orderId.
func (e *Exchange) orderFromBybit(p *pair, o orderJSON, id string) exgate.Order {
	if id == "" {
		id = o.OrderLinkID
	}
	if id == "" {
		id = o.OrderID
	}
	filled := o.CumExecQty.IsPositive()
	in := amountIn(o)
	out := exgate.Order{
		ID: id, Asset1: p.sym.Base, Asset2: p.sym.Quote,
		Status:    orderStatus(o.OrderStatus, o.CancelType, filled),
		RawStatus: rawOrderStatus(o.OrderStatus, o.CancelType, o.RejectReason),
		Type:      exgate.OrderTypeMarket, Side: exgate.Side(strings.ToUpper(o.Side)),
		Quantity: exgate.NewNumber(o.Qty.Decimal), QuantityIn: in.Asset(p.sym),
		Exchange: Name, ClientOrderID: o.OrderLinkID, ExchangeOrderID: o.OrderID,
	}
	if o.CumExecQty.Set {
		out.ExecutedQuantity = exgate.NumberPtr(o.CumExecQty.Decimal)
	}
	if o.CumExecValue.Set {
		out.QuoteQuantity = exgate.NumberPtr(o.CumExecValue.Decimal)
	}
	switch {
	case o.AvgPrice.IsPositive():
		out.AveragePrice = exgate.NumberPtr(o.AvgPrice.Decimal)
	case filled && o.CumExecValue.Set:
		out.AveragePrice = exgate.NumberPtr(o.CumExecValue.DivRound(o.CumExecQty.Decimal, 16))
	}
	out.Fees, out.FeesIn = orderFees(p, o)
	if o.OrderType == "Limit" {
		out.Type = exgate.OrderTypeLimit
		out.Price = exgate.NumberPtr(o.Price.Decimal)
		out.TimeInForce, out.PostOnly = fromBybitTimeInForce(o.TimeInForce)
		if out.ExecutedQuantity == nil {
			out.ExecutedQuantity = exgate.NumberPtr(decimal.Zero)
		}
	}
	out.OpenAt, _ = o.CreatedTime.millis()
	if out.OpenAt == 0 {
		out.OpenAt = e.c.Now().UnixMilli()
	}
	out.CloseAt = out.OpenAt
	if updated, _ := o.UpdatedTime.millis(); out.Status != exgate.OrderPending && updated > out.OpenAt {
		out.CloseAt = updated
	}
	return out
}

// orderFees reads an order's fee: cumFeeDetail {coin: amount} (spot;
// cumExecFee is deprecated for spot), else cumExecFee in feeCurrency (the
// order stream), else in the coin Bybit charges spot fees in: the base
// coin for a Buy, the quote coin for a Sell. Source:
// https://bybit-exchange.github.io/docs/v5/enum#spot-fee-currency-instruction.
// Nil while nothing was charged and nothing reported.
func orderFees(p *pair, o orderJSON) (*exgate.Number, string) {
	for coin, v := range o.CumFeeDetail {
		if d, err := exgate.ParseDecimal(string(v)); err == nil && !d.IsNegative() {
			return exgate.NumberPtr(d), exgate.NormalizeAsset(coin)
		}
	}
	if !o.CumExecFee.Set || o.CumExecFee.IsNegative() {
		return nil, ""
	}
	coin := exgate.NormalizeAsset(o.FeeCurrency)
	if coin == "" {
		coin = p.sym.Base
		if o.Side == "Sell" {
			coin = p.sym.Quote
		}
	}
	return exgate.NumberPtr(o.CumExecFee.Decimal), coin
}

// checkLimit makes the checks of a limit order that need nothing from
// Bybit but the cached instrument list: a client order id Bybit takes (a
// test order may have none), the request's own rules, the instrument's
// status, a price on its tick (refused, never moved: INVALID_PARAMETER
// naming price), the quantity rounded down to basePrecision and within
// maxLimitOrderQty (5× that for a PostOnly order), and the notional at
// least minOrderAmt. It returns the pair and the rounded quantity.
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
	if !p.trading() {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeOrderRejected, "bybit does not trade %s now (status %s)", p.sym, p.status)
	}
	if err := exgate.CheckPrice(req.Price, p.tick); err != nil {
		return nil, decimal.Decimal{}, err
	}
	qty := p.roundBase(req.Quantity)
	if !qty.IsPositive() {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s rounds down to 0 at bybit's step %s for %s (basePrecision)", req.Quantity, p.sym.Base, p.baseStep, p.sym)
	}
	maxQty := p.maxLimit
	if req.PostOnly {
		// postOnlyMaxLimitOrderSize: 5 × maxLimitOrderQty.
		maxQty = maxQty.Mul(decimal.NewFromInt(5))
	}
	if maxQty.IsPositive() && qty.GreaterThan(maxQty) {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeOrderRejected, "quantity %s %s is over bybit's maximum %s %s for a limit order on %s (maxLimitOrderQty)",
			qty, p.sym.Base, maxQty, p.sym.Base, p.sym)
	}
	if notional := qty.Mul(req.Price); notional.LessThan(p.minAmt) {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"%s %s at %s is worth %s %s, under bybit's minimum order value %s %s for %s (minOrderAmt)",
			qty, p.sym.Base, req.Price, notional, p.sym.Quote, p.minAmt, p.sym.Quote, p.sym)
	}
	return p, qty, nil
}

// limitAsSent is a limit order as it is sent: nothing executed yet.
func (e *Exchange) limitAsSent(p *pair, req exgate.LimitOrderRequest, qty decimal.Decimal, status exgate.OrderStatus, orderID string) exgate.Order {
	now := e.c.Now().UnixMilli()
	return exgate.Order{
		ID: req.ClientOrderID, Asset1: p.sym.Base, Asset2: p.sym.Quote, Status: status, Type: exgate.OrderTypeLimit,
		Side: req.Side, Quantity: exgate.NewNumber(qty), QuantityIn: p.sym.Base, OpenAt: now, CloseAt: now,
		Exchange: Name, ClientOrderID: req.ClientOrderID, ExchangeOrderID: orderID,
		Price: exgate.NumberPtr(req.Price), TimeInForce: req.TimeInForce, PostOnly: req.PostOnly,
		ExecutedQuantity: exgate.NumberPtr(decimal.Zero),
	}
}

// PlaceLimitOrder sends one limit order, POST /v5/order/create
// orderType=Limit with timeInForce GTC, IOC, FOK or PostOnly and
// orderLinkId = the client order id; never retried. The order is read
// back for its status: a PostOnly order that would have traded is
// accepted by Bybit and then cancelled with rejectReason
// EC_PostOnlyWillTakeLiquidity (or refused with 170218): ORDER_REJECTED
// either way. A lost answer is EXCHANGE_TIMEOUT; the journal then reads the
// order by its orderLinkId.
func (e *Exchange) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, error) {
	if req.ClientOrderID == "" {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "bybit needs a client order id to place an order")
	}
	p, qty, err := e.checkLimit(ctx, req)
	if err != nil {
		return exgate.Order{}, err
	}
	body, err := json.Marshal(createOrderBody{
		Category: "spot", Symbol: p.id, Side: bybitSide(req.Side), OrderType: "Limit",
		Qty: qty.String(), Price: req.Price.String(), TimeInForce: bybitTimeInForce(req.TimeInForce, req.PostOnly), OrderLinkID: req.ClientOrderID,
	})
	if err != nil {
		return exgate.Order{}, fmt.Errorf("bybit: encoding order: %w", err)
	}
	ack, err := rest.SendOrder(ctx, e.log, Name, "limit order", e.c.do, request{ep: epCreateOrder, body: body, cred: &cred}, parseOrderAck, req.ClientOrderID, "symbol", p.id)
	if err != nil {
		return exgate.Order{}, err
	}
	e.log.InfoContext(ctx, "bybit limit order placed", "clientOrderId", req.ClientOrderID, "orderId", ack.OrderID)
	settle := req.PostOnly || req.TimeInForce != exgate.GTC
	o, ok := e.readBack(ctx, cred, p, ack, settle)
	if !ok {
		return e.limitAsSent(p, req, qty, exgate.OrderPending, ack.OrderID), nil
	}
	if o.RejectReason == "EC_PostOnlyWillTakeLiquidity" && !o.CumExecQty.IsPositive() {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected,
			"bybit did not place the postOnly order: %s %s at %s would trade at once (EC_PostOnlyWillTakeLiquidity)", req.Side, p.sym, req.Price)
	}
	return e.orderFromBybit(p, o, req.ClientOrderID), nil
}

// TestOrder checks an order without placing it. Bybit has no test-order
// call, so the checks are the adapter's own: those of PlaceLimitOrder, or
// those of PlaceMarketOrder (with a read of the best price for a base
// quantity's value). Nothing reaches POST /v5/order/create.
func (e *Exchange) TestOrder(ctx context.Context, cred exgate.Credential, req exgate.TestOrderRequest) (exgate.Order, error) {
	switch {
	case req.Limit != nil:
		p, qty, err := e.checkLimit(ctx, *req.Limit)
		if err != nil {
			return exgate.Order{}, err
		}
		return e.limitAsSent(p, *req.Limit, qty, exgate.OrderTest, ""), nil
	case req.Market != nil:
		r := *req.Market
		p, err := rest.PrepareOrder(ctx, r, clientIDRule, false, e.markets.Lookup)
		if err != nil {
			return exgate.Order{}, err
		}
		plan, err := e.planMarket(ctx, p, r)
		if err != nil {
			return exgate.Order{}, err
		}
		return rest.TestedMarketOrder(Name, r, p.sym, plan.qty, plan.in, e.c.Now().UnixMilli()), nil
	}
	return exgate.Order{}, exgate.ParamError("test", "nothing to test")
}

// cancelBody is POST /v5/order/cancel.
type cancelBody struct {
	Category    string `json:"category"`
	Symbol      string `json:"symbol"`
	OrderID     string `json:"orderId,omitempty"`
	OrderLinkID string `json:"orderLinkId,omitempty"`
}

// cancelMissCodes are Bybit's answers to a cancel of an order it cannot
// cancel: unknown, or finished first (170213 "Order does not exist",
// 110001, 170139 "Order has been filled", 170142 "Order has been
// canceled"). The order is then read to answer with its final state, or
// NOT_FOUND. Source: https://bybit-exchange.github.io/docs/v5/error.
var cancelMissCodes = map[int]bool{codeOrderNotExists: true, codeUTAOrderNotFound: true, 170139: true, 170142: true}

// CancelOrder cancels an open order with POST /v5/order/cancel by its
// orderLinkId (checked against Bybit's rule before anything is sent), or,
// for an order placed outside the gateway, by Bybit's orderId. The cancel
// is never retried: a lost answer is EXCHANGE_TIMEOUT and the journal
// reads the order. Bybit cancels asynchronously, so the order is read back
// until it is final. When Bybit has no open order by that name the order is
// read: one that finished first is answered with its final status; none at
// all is an error wrapping exgate.ErrNotFound.
func (e *Exchange) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	body := cancelBody{Category: "spot"}
	switch {
	case req.ClientOrderID != "":
		if err := clientIDRule.Check(req.ClientOrderID, true); err != nil {
			return exgate.Order{}, err
		}
		body.OrderLinkID = req.ClientOrderID
	case req.ExchangeOrderID != "":
		body.OrderID = req.ExchangeOrderID
	default:
		return exgate.Order{}, fmt.Errorf("bybit: cancel without an order id: %w", exgate.ErrNotFound)
	}
	p, err := e.markets.Lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	body.Symbol = p.id
	raw, err := json.Marshal(body)
	if err != nil {
		return exgate.Order{}, fmt.Errorf("bybit: encoding cancel: %w", err)
	}
	ack, err := rest.Fetch(ctx, e.c.do, request{ep: epCancelOrder, body: raw, cred: &cred}, parseOrderAck)
	if err != nil {
		ae, ok := errors.AsType[*apiError](err)
		if !ok || !cancelMissCodes[ae.code] {
			e.log.WarnContext(ctx, "bybit cancel not confirmed", "orderLinkId", body.OrderLinkID, "orderId", body.OrderID, "err", err)
			return exgate.Order{}, err
		}
		got, qerr := e.QueryOrder(ctx, cred, exgate.OrderQuery(req))
		if qerr != nil {
			return exgate.Order{}, qerr
		}
		if !got.Status.Final() {
			return exgate.Order{}, err
		}
		return got, nil
	}
	o, ok := e.readBack(ctx, cred, p, ack, true)
	if !ok {
		return exgate.Order{}, &exgate.Error{Code: exgate.CodeExchangeTimeout,
			Detail: "bybit accepted the cancel but the order could not be read back; its state is unknown"}
	}
	return e.orderFromBybit(p, o, req.ClientOrderID), nil
}

// maxPages bounds a paged read (50 orders, 100 fills a page).
const maxPages = 10

// listOrders reads up to want orders from a paged order endpoint.
func (e *Exchange) listOrders(ctx context.Context, cred exgate.Credential, ep endpoint, ps rest.Params, want int) ([]orderJSON, error) {
	var out []orderJSON
	cursor := ""
	for page := 0; page < maxPages && len(out) < want; page++ {
		q := slices.Clone(ps)
		q.Add("limit", "50")
		if cursor != "" {
			q.Add("cursor", cursor)
		}
		v, err := rest.Fetch(ctx, e.c.do, request{ep: ep, params: q, cred: &cred}, parseOrders)
		if err != nil {
			return nil, err
		}
		out = append(out, v.items()...)
		if v.Cursor == "" || len(v.items()) == 0 {
			break
		}
		cursor = v.Cursor
	}
	return out, nil
}

// OpenOrders returns the open orders, newest first, from
// GET /v5/order/realtime (openOnly=0: open orders only), of one pair or of
// every spot pair. Orders placed outside the gateway are included.
func (e *Exchange) OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	var ps rest.Params
	ps.Add("category", "spot")
	var p *pair
	if (f.Symbol != exgate.Symbol{}) {
		var err error
		if p, err = e.markets.Lookup(ctx, f.Symbol); err != nil {
			return nil, err
		}
		ps.Add("symbol", p.id)
	}
	ps.Add("openOnly", "0")
	os, err := e.listOrders(ctx, cred, epRealtime, ps, maxPages*50)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Order, 0, len(os))
	for _, o := range os {
		op := p
		if op == nil {
			if op, err = e.pairOf(ctx, o.Symbol); err != nil {
				return nil, err
			}
		}
		if o2 := e.orderFromBybit(op, o, ""); !o2.Status.Final() {
			out = append(out, o2)
		}
	}
	sortOrders(out)
	return out, nil
}

// pairOf finds the pair of an order or fill listed across pairs; a symbol
// missing from the cached list is an error (Bybit's symbols do not say
// where the base ends).
func (e *Exchange) pairOf(ctx context.Context, symbol string) (*pair, error) {
	p, err := e.pairByID(ctx, symbol)
	if err != nil {
		return nil, err
	}
	if p == nil {
		if _, err := e.markets.Load(ctx); err != nil {
			return nil, err
		}
		if p, err = e.pairByID(ctx, symbol); err != nil {
			return nil, err
		}
	}
	if p == nil {
		return nil, badAnswer(epRealtime, fmt.Errorf("order of unknown symbol %q", symbol))
	}
	return p, nil
}

// sortOrders puts orders newest first: by creation time, then by Bybit's
// id (numeric; larger is newer).
func sortOrders(os []exgate.Order) {
	slices.SortStableFunc(os, func(a, b exgate.Order) int {
		if c := cmp.Compare(b.OpenAt, a.OpenAt); c != 0 {
			return c
		}
		return compareIDs(b.ExchangeOrderID, a.ExchangeOrderID)
	})
}

// compareIDs compares Bybit's numeric ids (shorter is smaller).
func compareIDs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

// limitOf is the number of records a history call returns.
func limitOf(n int) int { return rest.Limit(n, exgate.DefaultRecentLimit, exgate.MaxRecentLimit) }

// RecentOrders returns at most f.Limit orders of the pair, open and
// closed, newest first: the open ones from GET /v5/order/realtime and the
// closed ones from GET /v5/order/history (the last 7 days; Bybit keeps
// cancelled and rejected orders without fills there for 24 hours only),
// merged by orderId. Orders placed outside the gateway are included.
func (e *Exchange) RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	p, err := e.markets.Lookup(ctx, f.Symbol)
	if err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	var ps rest.Params
	ps.Add("category", "spot")
	ps.Add("symbol", p.id)
	open, err := e.listOrders(ctx, cred, epRealtime, append(slices.Clone(ps), rest.Param{"openOnly", "0"}), limit)
	if err != nil {
		return nil, err
	}
	closed, err := e.listOrders(ctx, cred, epHistory, ps, limit)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := make([]exgate.Order, 0, len(open)+len(closed))
	for _, o := range append(open, closed...) {
		if seen[o.OrderID] {
			continue
		}
		seen[o.OrderID] = true
		out = append(out, e.orderFromBybit(p, o, ""))
	}
	sortOrders(out)
	return out[:min(len(out), limit)], nil
}

// Fills returns at most f.Limit fills of the pair, newest first, from
// GET /v5/execution/list (execType Trade, pages of 100). A fill's order id
// is the order's orderLinkId (the gateway's id for its own orders), else
// Bybit's orderId.
func (e *Exchange) Fills(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	p, err := e.markets.Lookup(ctx, f.Symbol)
	if err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	var rows []executionJSON
	cursor := ""
	for page := 0; page < maxPages && len(rows) < limit; page++ {
		var ps rest.Params
		ps.Add("category", "spot")
		ps.Add("symbol", p.id)
		ps.Add("execType", "Trade")
		ps.Add("limit", strconv.Itoa(min(limit-len(rows), 100)))
		if cursor != "" {
			ps.Add("cursor", cursor)
		}
		v, err := rest.Fetch(ctx, e.c.do, request{ep: epExecutions, params: ps, cred: &cred}, parseExecutions)
		if err != nil {
			return nil, err
		}
		rows = append(rows, v.items()...)
		if v.Cursor == "" || len(v.items()) == 0 {
			break
		}
		cursor = v.Cursor
	}
	out := make([]exgate.Fill, 0, len(rows))
	for _, r := range rows {
		out = append(out, fillFromBybit(p, r))
	}
	slices.SortStableFunc(out, func(a, b exgate.Fill) int {
		return cmp.Or(cmp.Compare(b.Timestamp, a.Timestamp), compareIDs(b.ID, a.ID))
	})
	return out[:min(len(out), limit)], nil
}

// fillFromBybit maps one execution.
func fillFromBybit(p *pair, r executionJSON) exgate.Fill {
	ts, _ := r.ExecTime.millis()
	quote := r.ExecValue.Decimal
	if !r.ExecValue.Set {
		quote = r.ExecQty.Mul(r.ExecPrice.Decimal)
	}
	fee := exgate.NormalizeAsset(r.FeeCurrency)
	if fee == "" {
		fee = p.sym.Base
		if r.Side == "Sell" {
			fee = p.sym.Quote
		}
	}
	out := exgate.Fill{
		ID: r.ExecID, OrderID: r.OrderID, Asset1: p.sym.Base, Asset2: p.sym.Quote,
		Side: exgate.Side(strings.ToUpper(r.Side)), Price: exgate.NewNumber(r.ExecPrice.Decimal),
		Quantity: exgate.NewNumber(r.ExecQty.Decimal), QuoteQuantity: exgate.NewNumber(quote),
		Fee: exgate.NewNumber(r.ExecFee.Decimal), FeeIn: fee, Maker: r.IsMaker, Timestamp: ts,
	}
	if r.OrderLinkID != "" {
		out.OrderID, out.ClientOrderID = r.OrderLinkID, r.OrderLinkID
	}
	return out
}
