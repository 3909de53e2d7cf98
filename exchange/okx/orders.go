package okx

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
// 36 characters of [A-Za-z0-9_-]), which the adapter takes on OKX too by
// sending clOrdIDOf the id.
var clientIDRule = rest.ClientIDRule{Exchange: "okx", Pattern: regexp.MustCompile(`^[A-Za-z0-9_-]{1,36}$`), Allowed: "1 to 36 characters of [A-Za-z0-9_-]"}

// okxIDPattern is what OKX takes as a clOrdId (and as a withdrawal's or
// transfer's clientId): 1 to 32 letters and digits, case-sensitive.
// Source: OKX API v5 docs, "Place order" clOrdId
// (https://www.okx.com/docs-v5/en/#order-book-trading-trade-post-place-order).
var okxIDPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)

// clOrdIDOf is the clOrdId sent for the gateway's client id: the id itself
// when OKX takes it (the gateway's own ids always qualify: 18 characters
// of [a-z0-9]), else "x" and the first 31 hex digits of its SHA-256: 32
// characters OKX takes, computed again whenever the order is looked up or
// canceled by the client's id, so the mapping needs no storage. The
// adapter answers with the client's own id.
func clOrdIDOf(id string) string {
	if id == "" || okxIDPattern.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "x" + hex.EncodeToString(sum[:])[:31]
}

// orderBody is POST /trade/order. Field order is the order sent.
type orderBody struct {
	InstID  string `json:"instId"`
	TdMode  string `json:"tdMode"`
	Side    string `json:"side"`
	OrdType string `json:"ordType"`
	Px      string `json:"px,omitempty"`
	Sz      string `json:"sz"`
	TgtCcy  string `json:"tgtCcy,omitempty"`
	ClOrdID string `json:"clOrdId"`
	// BanAmend, on a market order, makes OKX refuse it when the account
	// cannot pay for all of it instead of shrinking it (OKX API v5 docs,
	// "Place order" banAmend): the order is placed as asked or not at
	// all.
	BanAmend bool `json:"banAmend,omitempty"`
}

// marketPlan is what PlaceMarketOrder sends and reports.
type marketPlan struct {
	// sz is OKX's size in tgtCcy (base_ccy or quote_ccy).
	sz     decimal.Decimal
	tgtCcy string
}

// planMarket rounds the quantity and checks it against the pair's rules.
// OKX takes a spot market order's size in either currency on either side
// (tgtCcy base_ccy or quote_ccy; OKX API v5 docs, "Place order"), so
// nothing is converted: a base size is rounded down to lotSz and must
// reach minSz; a quote size is rounded down to the price step's decimals,
// and the base it buys or sells at the order book (when the book covers
// it) must reach minSz too.
func (e *Exchange) planMarket(ctx context.Context, p *pair, req exgate.OrderRequest) (marketPlan, error) {
	buy := req.Side == exgate.SideBuy
	if req.QuantityIn == exgate.InBase {
		sz := p.roundBase(req.Quantity)
		if !sz.IsPositive() || sz.LessThan(p.minSz) {
			return marketPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s rounds down to %s at okx's lot size %s, under the minimum %s %s for %s (minSz)",
				req.Quantity, p.sym.Base, sz, p.lot, p.minText(), p.sym.Base, p.sym)
		}
		return marketPlan{sz: sz, tgtCcy: "base_ccy"}, nil
	}
	sz := p.roundQuote(req.Quantity)
	if !sz.IsPositive() {
		return marketPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s rounds down to 0 at okx's %d decimals for %s", req.Quantity, p.sym.Quote, max(-p.tick.Exponent(), 0), p.sym)
	}
	if p.minSz.IsPositive() {
		bids, asks, err := e.book(ctx, p, 100)
		if err != nil {
			return marketPlan{}, err
		}
		side := bids
		if buy {
			side = asks
		}
		if base, ok := walkQuote(side, sz); ok && base.LessThan(p.minSz) {
			return marketPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"%s %s is about %s %s at the order book, under okx's minimum %s %s for %s (minSz)",
				sz, p.sym.Quote, base.Round(8), p.sym.Base, p.minText(), p.sym.Base, p.sym)
		}
	}
	return marketPlan{sz: sz, tgtCcy: "quote_ccy"}, nil
}

// minText writes the pair's minimum size, or its lot size when it has
// none.
func (p *pair) minText() string {
	if p.minSz.IsPositive() {
		return p.minSz.String()
	}
	return p.lot.String()
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

// expiry is the expTime of a trading request: after it OKX discards the
// request, which bounds how late a lost request could still execute.
func (e *Exchange) expiry(ctx context.Context) time.Time {
	d := maxOrderExpiry
	if deadline, ok := ctx.Deadline(); ok {
		d = min(max(time.Until(deadline)+5*time.Second, 5*time.Second), maxOrderExpiry)
	}
	return e.c.serverNow().Add(d)
}

// PlaceMarketOrder sends one market order (tdMode cash) with clOrdId =
// clOrdIDOf(req.ClientOrderID) and tgtCcy naming the currency of the
// quantity, then reads the order back for its fills and fees. It is never
// retried; a lost answer is EXCHANGE_TIMEOUT and the journal reads the
// order by its client id.
func (e *Exchange) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	p, err := rest.PrepareOrder(ctx, req, clientIDRule, true, e.markets.Lookup)
	if err != nil {
		return exgate.Order{}, err
	}
	if why := p.canTrade(); why != "" {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "okx refuses orders on %s: %s", p.sym, why)
	}
	plan, err := e.planMarket(ctx, p, req)
	if err != nil {
		return exgate.Order{}, err
	}
	body := orderBody{InstID: p.id, TdMode: "cash", Side: strings.ToLower(string(req.Side)), OrdType: ordMarket,
		Sz: plan.sz.String(), TgtCcy: plan.tgtCcy, ClOrdID: clOrdIDOf(req.ClientOrderID), BanAmend: true}
	o, err := e.place(ctx, cred, p, body, req.ClientOrderID)
	if err != nil {
		return exgate.Order{}, err
	}
	return e.orderFromOKX(p, o, req.ClientOrderID), nil
}

// place sends one order and reads it back. When the read fails, the order
// is answered PENDING from the placement's answer (the journal reconciles
// it later).
func (e *Exchange) place(ctx context.Context, cred exgate.Credential, p *pair, body orderBody, clientID string) (orderJSON, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return orderJSON{}, fmt.Errorf("okx: encoding order: %w", err)
	}
	data, err := e.c.do(ctx, request{ep: epPlaceOrder, body: b, cred: &cred, inst: p.id, expires: e.expiry(ctx)})
	if err != nil {
		e.log.WarnContext(ctx, "okx order not placed", "clientOrderId", clientID, "instId", p.id, "err", err)
		return orderJSON{}, err
	}
	ack, err := parseOrderAck(data)
	if ae, ok := errors.AsType[*apiError](err); ok {
		e.log.WarnContext(ctx, "okx order not placed", "clientOrderId", clientID, "instId", p.id, "err", err)
		return orderJSON{}, classifyAPI(epPlaceOrder, ae)
	}
	if err != nil {
		e.log.ErrorContext(ctx, "okx order answer unreadable", "clientOrderId", clientID, "err", err)
		return orderJSON{}, badAnswer(epPlaceOrder, err)
	}
	e.log.InfoContext(ctx, "okx order placed", "clientOrderId", clientID, "ordId", ack.OrdID, "ordType", body.OrdType)
	o, err := e.getOrder(ctx, cred, p, string(ack.OrdID), "")
	if err != nil {
		e.log.WarnContext(ctx, "okx order not read back; answering from the placement", "ordId", ack.OrdID, "err", err)
		now := e.c.serverNow().UnixMilli()
		o = orderJSON{InstID: p.id, OrdID: ack.OrdID, ClOrdID: body.ClOrdID, OrdType: body.OrdType, Side: body.Side,
			TgtCcy: body.TgtCcy, State: "live", cMS: now, uMS: now}
		o.Sz, _ = decimalOf(body.Sz)
		o.Px, _ = decimalOf(body.Px)
	}
	return o, nil
}

// decimalOf reads a decimal the adapter wrote itself.
func decimalOf(s string) (rest.Decimal, error) {
	if s == "" {
		return rest.Decimal{}, nil
	}
	d, err := exgate.ParseDecimal(s)
	return rest.Decimal{Decimal: d, Set: err == nil}, err
}

// getOrder reads GET /trade/order by ordId, or by clOrdId when ordID is
// empty. A miss (51603) is an error wrapping exgate.ErrNotFound.
func (e *Exchange) getOrder(ctx context.Context, cred exgate.Credential, p *pair, ordID, clOrdID string) (orderJSON, error) {
	var ps rest.Params
	ps.Add("instId", p.id)
	if ordID != "" {
		ps.Add("ordId", ordID)
	} else {
		ps.Add("clOrdId", clOrdID)
	}
	return rest.Fetch(ctx, e.c.do, request{ep: epGetOrder, params: ps, cred: &cred, inst: p.id}, parseOrder)
}

// QueryOrder reads an order back by its exchange id when the gateway knows
// it, else by the clOrdId sent for the client id (OKX finds an order by
// clOrdId open or finished). Not found: an error wrapping
// exgate.ErrNotFound.
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
	o, err := e.findOrder(ctx, cred, p, q.ClientOrderID, q.ExchangeOrderID)
	if err != nil {
		return exgate.Order{}, err
	}
	return e.orderFromOKX(p, o, q.ClientOrderID), nil
}

// findOrder reads an order by ordId (checked to carry the client id's
// clOrdId) or by clOrdId.
func (e *Exchange) findOrder(ctx context.Context, cred exgate.Credential, p *pair, clientID, ordID string) (orderJSON, error) {
	cl := clOrdIDOf(clientID)
	if ordID != "" {
		o, err := e.getOrder(ctx, cred, p, ordID, "")
		switch {
		case err == nil && (cl == "" || o.ClOrdID == cl):
			return o, nil
		case err == nil:
			e.log.WarnContext(ctx, "okx order id belongs to another clOrdId", "ordId", ordID, "clOrdId", o.ClOrdID, "want", cl)
		case !errors.Is(err, exgate.ErrNotFound) || cl == "":
			return orderJSON{}, err
		}
	}
	if cl == "" {
		return orderJSON{}, notFound(p, clientID, ordID)
	}
	o, err := e.getOrder(ctx, cred, p, "", cl)
	if errors.Is(err, exgate.ErrNotFound) {
		return orderJSON{}, notFound(p, clientID, ordID)
	}
	return o, err
}

func notFound(p *pair, clientID, ordID string) error {
	name := "with client order id " + clientID
	if clientID == "" {
		name = "with order id " + ordID
	}
	return &exgate.Error{Code: exgate.CodeNotFound, Detail: fmt.Sprintf("okx has no order %s on %s", name, p.sym),
		Err: fmt.Errorf("okx: order %s: %w", name, exgate.ErrNotFound)}
}

// orderFromOKX builds the gateway's order from OKX's. id is the gateway's
// (the client's) id when known; otherwise the order's clOrdId, and for an
// order placed without one (on OKX's site or apps) OKX's ordId with no
// client order id.
func (e *Exchange) orderFromOKX(p *pair, o orderJSON, id string) exgate.Order {
	client := id
	if client == "" {
		client = o.ClOrdID
	}
	if id == "" {
		id = client
	}
	if id == "" {
		id = string(o.OrdID)
	}
	typ, tif, postOnly := fromOrdType(o.OrdType)
	filled := o.AccFillSz.IsPositive()
	out := exgate.Order{
		ID: id, Asset1: p.sym.Base, Asset2: p.sym.Quote,
		Status:    orderStatus(o.State, o.CancelSource, o.OrdType, filled),
		RawStatus: rawOrderStatus(o.State, o.CancelSource),
		Type:      typ, Side: exgate.Side(strings.ToUpper(o.Side)),
		Quantity: exgate.NewNumber(o.Sz.Decimal), QuantityIn: p.sym.Base,
		Exchange: Name, ClientOrderID: client, ExchangeOrderID: string(o.OrdID),
		ExecutedQuantity: exgate.NumberPtr(o.AccFillSz.Decimal),
	}
	if typ == exgate.OrderTypeMarket {
		// A spot market order's sz is in tgtCcy; without it, a buy is
		// in quote and a sell in base (OKX API v5 docs, "Place order").
		if o.TgtCcy == "quote_ccy" || (o.TgtCcy == "" && o.Side == "buy") {
			out.QuantityIn = p.sym.Quote
		}
	} else {
		out.Price, out.TimeInForce, out.PostOnly = exgate.NumberPtr(o.Px.Decimal), tif, postOnly
	}
	if o.AvgPx.IsPositive() {
		out.AveragePrice = exgate.NumberPtr(o.AvgPx.Decimal)
		out.QuoteQuantity = exgate.NumberPtr(o.AccFillSz.Mul(o.AvgPx.Decimal))
	} else if o.AccFillSz.Set {
		out.QuoteQuantity = exgate.NumberPtr(decimal.Zero)
	}
	// OKX writes a charged fee as a negative number and a rebate as a
	// positive one ("Get order details" fee); the gateway's fees are
	// what was charged.
	if o.FeeCcy != "" && o.Fee.Set {
		fee := decimal.Zero
		if o.Fee.IsNegative() {
			fee = o.Fee.Neg()
		}
		out.Fees, out.FeesIn = exgate.NumberPtr(fee), exgate.NormalizeAsset(o.FeeCcy)
	}
	out.OpenAt = o.cMS
	if out.OpenAt == 0 {
		out.OpenAt = e.c.Now().UnixMilli()
	}
	out.CloseAt = out.OpenAt
	if out.Status != exgate.OrderPending && o.uMS > out.OpenAt {
		out.CloseAt = o.uMS
	}
	return out
}

// checkLimit makes the checks of a limit order that need no call to OKX
// but the cached instrument list: a client id (a test order may have
// none), the request's own rules, the instrument's state, a price on the
// tick (refused, never moved: INVALID_PARAMETER naming price), the
// quantity rounded down to lotSz and held to minSz and maxLmtSz. It
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
	if why := p.canTrade(); why != "" {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeOrderRejected, "okx refuses orders on %s: %s", p.sym, why)
	}
	if err := exgate.CheckPrice(req.Price, p.tick); err != nil {
		return nil, decimal.Decimal{}, err
	}
	qty := p.roundBase(req.Quantity)
	if !qty.IsPositive() || qty.LessThan(p.minSz) {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s rounds down to %s at okx's lot size %s, under the minimum %s %s for %s (minSz)",
			req.Quantity, p.sym.Base, qty, p.lot, p.minText(), p.sym.Base, p.sym)
	}
	if p.maxLmtSz.IsPositive() && qty.GreaterThan(p.maxLmtSz) {
		return nil, decimal.Decimal{}, exgate.Errorf(exgate.CodeOrderRejected,
			"quantity %s %s is over okx's maximum %s %s for a limit order on %s (maxLmtSz)", qty, p.sym.Base, p.maxLmtSz, p.sym.Base, p.sym)
	}
	return p, qty, nil
}

// PlaceLimitOrder sends one limit order with the ordType of its time in
// force (limit, ioc, fok, post_only) and clOrdId = clOrdIDOf the client
// id, then reads it back; never retried. OKX accepts a post-only order
// that would trade and cancels it at once (cancelSource 31): that is
// ORDER_REJECTED. A lost answer is EXCHANGE_TIMEOUT; the journal then
// reads the order by its client id.
func (e *Exchange) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, error) {
	if req.ClientOrderID == "" {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "okx needs a client order id to place an order")
	}
	p, qty, err := e.checkLimit(ctx, req)
	if err != nil {
		return exgate.Order{}, err
	}
	body := orderBody{InstID: p.id, TdMode: "cash", Side: strings.ToLower(string(req.Side)),
		OrdType: ordTypeOf(req.TimeInForce, req.PostOnly), Px: req.Price.String(), Sz: qty.String(), ClOrdID: clOrdIDOf(req.ClientOrderID)}
	o, err := e.place(ctx, cred, p, body, req.ClientOrderID)
	if err != nil {
		return exgate.Order{}, err
	}
	out := e.orderFromOKX(p, o, req.ClientOrderID)
	if out.Status == exgate.OrderRejected {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected,
			"okx did not place the postOnly order: %s %s at %s would trade at once (canceled, cancelSource %s)", req.Side, p.sym, req.Price, o.CancelSource)
	}
	return out, nil
}

// TestOrder checks an order without placing it. OKX has no test-order
// call, so the checks are the adapter's own: those of PlaceLimitOrder
// before anything is sent, or those of PlaceMarketOrder with the minimum
// checked at the order book (a public read). Nothing reaches
// POST /trade/order.
func (e *Exchange) TestOrder(ctx context.Context, cred exgate.Credential, req exgate.TestOrderRequest) (exgate.Order, error) {
	switch {
	case req.Limit != nil:
		r := *req.Limit
		p, qty, err := e.checkLimit(ctx, r)
		if err != nil {
			return exgate.Order{}, err
		}
		now := e.c.Now().UnixMilli()
		return exgate.Order{
			ID: r.ClientOrderID, Asset1: p.sym.Base, Asset2: p.sym.Quote, Status: exgate.OrderTest, Type: exgate.OrderTypeLimit,
			Side: r.Side, Quantity: exgate.NewNumber(qty), QuantityIn: p.sym.Base, OpenAt: now, CloseAt: now,
			Exchange: Name, ClientOrderID: r.ClientOrderID,
			Price: exgate.NumberPtr(r.Price), TimeInForce: r.TimeInForce, PostOnly: r.PostOnly,
		}, nil
	case req.Market != nil:
		r := *req.Market
		p, err := rest.PrepareOrder(ctx, r, clientIDRule, false, e.markets.Lookup)
		if err != nil {
			return exgate.Order{}, err
		}
		if why := p.canTrade(); why != "" {
			return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "okx refuses orders on %s: %s", p.sym, why)
		}
		plan, err := e.planMarket(ctx, p, r)
		if err != nil {
			return exgate.Order{}, err
		}
		return rest.TestedMarketOrder(Name, r, p.sym, plan.sz, r.QuantityIn, e.c.Now().UnixMilli()), nil
	}
	return exgate.Order{}, exgate.ParamError("test", "nothing to test")
}

// cancelBody is POST /trade/cancel-order.
type cancelBody struct {
	InstID  string `json:"instId"`
	OrdID   string `json:"ordId,omitempty"`
	ClOrdID string `json:"clOrdId,omitempty"`
}

// CancelOrder cancels an open order with POST /trade/cancel-order by the
// clOrdId of its client id, which names only that order (or, for an order
// placed outside the gateway, by OKX's ordId), then reads it back: OKX's
// acceptance only means the cancel was taken (OKX API v5 docs, "Cancel
// order"). Never retried: a lost answer is EXCHANGE_TIMEOUT and the
// journal reads the order. When OKX cannot cancel (51400: filled,
// canceled or absent), the order is read: one that finished first is
// answered with its final status; none at all is an error wrapping
// exgate.ErrNotFound.
func (e *Exchange) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	body := cancelBody{OrdID: req.ExchangeOrderID}
	switch {
	case req.ClientOrderID != "":
		if err := clientIDRule.Check(req.ClientOrderID, true); err != nil {
			return exgate.Order{}, err
		}
		body = cancelBody{ClOrdID: clOrdIDOf(req.ClientOrderID)}
	case body.OrdID == "":
		return exgate.Order{}, fmt.Errorf("okx: cancel without an order id: %w", exgate.ErrNotFound)
	}
	p, err := e.markets.Lookup(ctx, req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	body.InstID = p.id
	b, err := json.Marshal(body)
	if err != nil {
		return exgate.Order{}, fmt.Errorf("okx: encoding cancel: %w", err)
	}
	data, err := e.c.do(ctx, request{ep: epCancelOrder, body: b, cred: &cred, inst: p.id, expires: e.expiry(ctx)})
	if err == nil {
		_, err = parseOrderAck(data)
		if ae, ok := errors.AsType[*apiError](err); ok {
			err = classifyAPI(epCancelOrder, ae)
		} else if err != nil {
			err = badAnswer(epCancelOrder, err)
		}
	}
	if err != nil {
		ae, ok := errors.AsType[*apiError](err)
		if !ok || (ae.code != codeCancelFailed && ae.code != codeOrderNotFound) {
			e.log.WarnContext(ctx, "okx cancel not confirmed", "clOrdId", body.ClOrdID, "ordId", body.OrdID, "err", err)
			return exgate.Order{}, err
		}
	}
	o, qerr := e.findOrder(ctx, cred, p, req.ClientOrderID, req.ExchangeOrderID)
	if qerr != nil {
		return exgate.Order{}, qerr
	}
	out := e.orderFromOKX(p, o, req.ClientOrderID)
	if err == nil && !out.Status.Final() {
		// The cancel was taken and is not visible yet: it ends the order.
		out.Status = exgate.OrderCanceled
		out.CloseAt = max(out.OpenAt, e.c.serverNow().UnixMilli())
	}
	if err != nil && !out.Status.Final() {
		return exgate.Order{}, err
	}
	return out, nil
}

// listPageSize is OKX's largest page of orders and fills; listMaxPages
// bounds the pages read for one list.
const (
	listPageSize = 100
	listMaxPages = 10
)

// listOrders reads up to want orders from ep (orders-pending or
// orders-history), newest first, following OKX's after= ordId cursor.
func (e *Exchange) listOrders(ctx context.Context, cred exgate.Credential, ep endpoint, instID string, want int) ([]orderJSON, error) {
	var out []orderJSON
	after := ""
	for page := 0; len(out) < want && page < listMaxPages; page++ {
		n := min(want-len(out), listPageSize)
		var ps rest.Params
		ps.Add("instType", "SPOT")
		if instID != "" {
			ps.Add("instId", instID)
		}
		if after != "" {
			ps.Add("after", after)
		}
		ps.Add("limit", strconv.Itoa(n))
		os, err := rest.Fetch(ctx, e.c.do, request{ep: ep, params: ps, cred: &cred}, parseOrders)
		if err != nil {
			return nil, err
		}
		out = append(out, os...)
		if len(os) < n {
			break
		}
		after = string(os[len(os)-1].OrdID)
	}
	return out, nil
}

// OpenOrders returns the open orders, newest first, from
// GET /trade/orders-pending (of one pair, or of every SPOT pair). Orders
// placed outside the gateway are included.
func (e *Exchange) OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	instID := ""
	if (f.Symbol != exgate.Symbol{}) {
		p, err := e.markets.Lookup(ctx, f.Symbol)
		if err != nil {
			return nil, err
		}
		instID = p.id
	}
	os, err := e.listOrders(ctx, cred, epOrdersPending, instID, listMaxPages*listPageSize)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Order, 0, len(os))
	for _, o := range os {
		p, err := e.pairByID(ctx, o.InstID)
		if err != nil {
			return nil, err
		}
		out = append(out, e.orderFromOKX(p, o, ""))
	}
	sortOrders(out)
	return out, nil
}

// limitOf is the number of records a history call returns.
func limitOf(n int) int { return rest.Limit(n, exgate.DefaultRecentLimit, exgate.MaxRecentLimit) }

// RecentOrders returns at most f.Limit orders of the pair, open and
// finished, newest first: GET /trade/orders-pending and
// /trade/orders-history (the last 7 days), merged. OKX keeps canceled
// orders without any fill for 2 hours only.
func (e *Exchange) RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	p, err := e.markets.Lookup(ctx, f.Symbol)
	if err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	open, err := e.listOrders(ctx, cred, epOrdersPending, p.id, limit)
	if err != nil {
		return nil, err
	}
	done, err := e.listOrders(ctx, cred, epOrdersHistory, p.id, limit)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := make([]exgate.Order, 0, len(open)+len(done))
	for _, o := range append(open, done...) {
		if seen[string(o.OrdID)] {
			continue
		}
		seen[string(o.OrdID)] = true
		out = append(out, e.orderFromOKX(p, o, ""))
	}
	sortOrders(out)
	return out[:min(len(out), limit)], nil
}

// sortOrders puts orders newest first: by creation time, then by OKX's
// id (larger is newer), numerically.
func sortOrders(os []exgate.Order) {
	slices.SortStableFunc(os, func(a, b exgate.Order) int {
		return cmp.Or(cmp.Compare(b.OpenAt, a.OpenAt), compareIDs(b.ExchangeOrderID, a.ExchangeOrderID))
	})
}

// compareIDs compares OKX's numeric ids (shorter is smaller).
func compareIDs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

// Fills returns at most f.Limit fills of the pair, newest first, from
// GET /trade/fills (the last 3 days). A fill's order id is the order's
// clOrdId when it has one (the gateway's id for the orders it placed),
// else OKX's ordId.
func (e *Exchange) Fills(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	p, err := e.markets.Lookup(ctx, f.Symbol)
	if err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	var rows []fillJSON
	after := ""
	for page := 0; len(rows) < limit && page < listMaxPages; page++ {
		n := min(limit-len(rows), listPageSize)
		var ps rest.Params
		ps.Add("instType", "SPOT")
		ps.Add("instId", p.id)
		if after != "" {
			ps.Add("after", after)
		}
		ps.Add("limit", strconv.Itoa(n))
		fs, err := rest.Fetch(ctx, e.c.do, request{ep: epFills, params: ps, cred: &cred}, parseFills)
		if err != nil {
			return nil, err
		}
		rows = append(rows, fs...)
		if len(fs) < n {
			break
		}
		after = string(fs[len(fs)-1].BillID)
	}
	out := make([]exgate.Fill, 0, len(rows))
	for _, r := range rows {
		out = append(out, fillFromOKX(p, r))
	}
	slices.SortStableFunc(out, func(a, b exgate.Fill) int {
		return cmp.Or(cmp.Compare(b.Timestamp, a.Timestamp), compareIDs(b.ID, a.ID))
	})
	return out[:min(len(out), limit)], nil
}

// fillFromOKX maps one fill: a negative fee is a charge, a positive one a
// rebate (reported as a zero fee).
func fillFromOKX(p *pair, r fillJSON) exgate.Fill {
	fee := decimal.Zero
	if r.Fee.IsNegative() {
		fee = r.Fee.Neg()
	}
	out := exgate.Fill{
		ID: string(r.TradeID), OrderID: string(r.OrdID), Asset1: p.sym.Base, Asset2: p.sym.Quote,
		Side: exgate.Side(strings.ToUpper(r.Side)), Price: exgate.NewNumber(r.FillPx.Decimal),
		Quantity: exgate.NewNumber(r.FillSz.Decimal), QuoteQuantity: exgate.NewNumber(r.FillSz.Mul(r.FillPx.Decimal)),
		Fee: exgate.NewNumber(fee), FeeIn: exgate.NormalizeAsset(r.FeeCcy), Maker: r.ExecType == "M", Timestamp: r.ms,
	}
	if r.ClOrdID != "" {
		out.OrderID, out.ClientOrderID = r.ClOrdID, r.ClOrdID
	}
	return out
}
