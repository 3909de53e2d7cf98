package kraken

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// orderPlan is what AddOrder sends for a request.
type orderPlan struct {
	// volume is AddOrder's volume: base units, or quote units with viqc.
	volume decimal.Decimal
	oflags string
	// quantity is the order's Quantity as reported, in the QuantityIn
	// asset.
	quantity decimal.Decimal
}

// PlaceMarketOrder sends one market order with cl_ord_id =
// req.ClientOrderID and reads it back with QueryOrders. It is never
// retried. BUY by quote uses Kraken's viqc flag; SELL by quote is converted
// to a base volume against the live bids.
func (e *Exchange) PlaceMarketOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest) (exgate.Order, error) {
	if err := rest.CheckOrder(req); err != nil {
		return exgate.Order{}, err
	}
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return exgate.Order{}, err
	}
	mk, err := m.market(req.Symbol)
	if err != nil {
		return exgate.Order{}, err
	}
	if mk.status != "online" {
		return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "Kraken's %s market is in %s mode and takes no market orders now", req.Symbol, mk.status)
	}
	plan, err := e.planOrder(ctx, mk, req)
	if err != nil {
		return exgate.Order{}, err
	}
	side := "buy"
	if req.Side == exgate.SideSell {
		side = "sell"
	}
	form := url.Values{
		"pair":      {mk.key},
		"type":      {side},
		"ordertype": {"market"},
		"volume":    {plan.volume.String()},
		"cl_ord_id": {req.ClientOrderID},
	}
	if plan.oflags != "" {
		form.Set("oflags", plan.oflags)
	}
	openAt := e.now().UnixMilli()
	var added struct {
		Txid []string `json:"txid"`
	}
	if err := e.c.private(ctx, cred, "AddOrder", form, kindOrder, mk.key, &added); err != nil {
		return exgate.Order{}, err
	}
	if len(added.Txid) == 0 || added.Txid[0] == "" {
		return exgate.Order{}, &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: "Kraken accepted the order without an order id; the outcome is unknown"}
	}
	txid := added.Txid[0]
	order := exgate.Order{
		ID:              req.ClientOrderID,
		Asset1:          req.Symbol.Base,
		Asset2:          req.Symbol.Quote,
		Status:          exgate.OrderPending,
		Type:            exgate.OrderTypeMarket,
		Side:            req.Side,
		OpenAt:          openAt,
		CloseAt:         openAt,
		Exchange:        Name,
		ClientOrderID:   req.ClientOrderID,
		ExchangeOrderID: txid,
	}
	got, err := e.queryOrders(ctx, cred, m, txid, req.Symbol)
	if err != nil {
		e.log.WarnContext(ctx, "kraken: order placed but not read back", "clientOrderId", req.ClientOrderID, "txid", txid, "err", err)
	} else {
		order = got
		order.ID, order.ClientOrderID = req.ClientOrderID, req.ClientOrderID
	}
	order.Quantity = exgate.NewNumber(plan.quantity)
	order.QuantityIn = req.QuantityIn.Asset(req.Symbol)
	return order, nil
}

// planOrder rounds the quantity, converts it where Kraken cannot take it
// natively, and checks Kraken's minimums before anything is sent.
func (e *Exchange) planOrder(ctx context.Context, mk *market, req exgate.OrderRequest) (orderPlan, error) {
	base, quote, sym := mk.symbol.Base, mk.symbol.Quote, mk.symbol
	switch {
	case req.QuantityIn == exgate.InQuote && req.Side == exgate.SideBuy:
		// viqc: volume in quote, market buys only, cost_decimals.
		vol := req.Quantity.Truncate(mk.costDecimals)
		if vol.Sign() <= 0 || vol.LessThan(mk.costMin) {
			return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s (rounded down to %d decimals) is below Kraken's minimum order cost %s %s for %s",
				vol, quote, mk.costDecimals, mk.costMin, quote, sym)
		}
		if mk.orderMin.Sign() > 0 {
			bk, err := e.fetchBook(ctx, mk, 10)
			if err != nil {
				return orderPlan{}, err
			}
			if len(bk.asks) > 0 {
				est := vol.DivRound(bk.asks[0].price, mk.lotDecimals+4)
				if est.LessThan(mk.orderMin) {
					return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
						"quantity %s %s buys about %s %s, below Kraken's minimum order size %s %s for %s",
						vol, quote, est, base, mk.orderMin, base, sym)
				}
			}
		}
		return orderPlan{volume: vol, oflags: "viqc", quantity: vol}, nil

	case req.QuantityIn == exgate.InQuote:
		// SELL by quote: Kraken takes sells in base only; convert against
		// the live bids.
		q := req.Quantity.Truncate(mk.costDecimals)
		if q.Sign() <= 0 || q.LessThan(mk.costMin) {
			return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s (rounded down to %d decimals) is below Kraken's minimum order cost %s %s for %s",
				q, quote, mk.costDecimals, mk.costMin, quote, sym)
		}
		bk, err := e.fetchBook(ctx, mk, maxDepthCount)
		if err != nil {
			return orderPlan{}, err
		}
		vol, covered := baseForQuote(bk.bids, q, mk.lotDecimals)
		if !covered {
			return orderPlan{}, exgate.Errorf(exgate.CodeOrderRejected,
				"Kraken's %s bids (top %d levels) are too thin to convert %s %s to a %s volume", sym, maxDepthCount, q, quote, base)
		}
		if vol.Sign() <= 0 || vol.LessThan(mk.orderMin) {
			return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s is about %s %s, below Kraken's minimum order size %s %s for %s",
				q, quote, vol, base, mk.orderMin, base, sym)
		}
		return orderPlan{volume: vol, oflags: "fciq", quantity: q}, nil

	default:
		vol := req.Quantity.Truncate(mk.lotDecimals)
		if vol.Sign() <= 0 || vol.LessThan(mk.orderMin) {
			return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
				"quantity %s %s (rounded down to %d decimals) is below Kraken's minimum order size %s %s for %s",
				vol, base, mk.lotDecimals, mk.orderMin, base, sym)
		}
		if mk.costMin.Sign() > 0 {
			bk, err := e.fetchBook(ctx, mk, 10)
			if err != nil {
				return orderPlan{}, err
			}
			levels := bk.asks
			if req.Side == exgate.SideSell {
				levels = bk.bids
			}
			if len(levels) > 0 {
				notional := vol.Mul(levels[0].price)
				if notional.LessThan(mk.costMin) {
					return orderPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
						"quantity %s %s is worth about %s %s, below Kraken's minimum order cost %s %s for %s",
						vol, base, notional.Truncate(mk.costDecimals), quote, mk.costMin, quote, sym)
				}
			}
		}
		return orderPlan{volume: vol, oflags: "fciq", quantity: vol}, nil
	}
}

// baseForQuote walks levels (best first) and returns the base volume whose
// proceeds are the quote amount q, rounded down to lot decimals; covered is
// false when the levels do not hold q.
func baseForQuote(levels []bookLevel, q decimal.Decimal, lot int32) (vol decimal.Decimal, covered bool) {
	remaining := q
	for _, l := range levels {
		if l.price.Sign() <= 0 {
			continue
		}
		levelQuote := l.price.Mul(l.qty)
		if remaining.GreaterThan(levelQuote) {
			vol = vol.Add(l.qty)
			remaining = remaining.Sub(levelQuote)
			continue
		}
		part, _ := remaining.QuoRem(l.price, lot)
		return vol.Add(part).Truncate(lot), true
	}
	return vol.Truncate(lot), false
}

// krakenOrder is an order as QueryOrders, OpenOrders and ClosedOrders
// return it.
type krakenOrder struct {
	ClOrdID *string      `json:"cl_ord_id"`
	Status  string       `json:"status"`
	Reason  *string      `json:"reason"`
	OpenTm  rest.Decimal `json:"opentm"`
	CloseTm rest.Decimal `json:"closetm"`
	Descr   struct {
		Pair      string       `json:"pair"`
		Type      string       `json:"type"`
		OrderType string       `json:"ordertype"`
		Price     rest.Decimal `json:"price"`
	} `json:"descr"`
	Vol     rest.Decimal `json:"vol"`
	VolExec rest.Decimal `json:"vol_exec"`
	Cost    rest.Decimal `json:"cost"`
	Fee     rest.Decimal `json:"fee"`
	Price   rest.Decimal `json:"price"`
	Oflags  string       `json:"oflags"`
}

// toOrder normalizes a Kraken order. sym is used when descr.pair is not a
// known pair name.
func (m *markets) toOrder(txid string, o krakenOrder, sym exgate.Symbol) (exgate.Order, error) {
	if mk, ok := m.byName[o.Descr.Pair]; ok {
		sym = mk.symbol
	}
	var side exgate.Side
	switch o.Descr.Type {
	case "buy":
		side = exgate.SideBuy
	case "sell":
		side = exgate.SideSell
	default:
		return exgate.Order{}, fmt.Errorf("kraken: order %s has side %q", txid, o.Descr.Type)
	}
	flags := strings.Split(o.Oflags, ",")
	executed := o.VolExec.Sign() > 0
	st := orderStatus(o.Status, executed)
	openAt := o.OpenTm.Mul(decimal.NewFromInt(1000)).IntPart()
	closeAt := openAt
	if st.Final() && o.CloseTm.Sign() > 0 {
		closeAt = o.CloseTm.Mul(decimal.NewFromInt(1000)).IntPart()
	}
	order := exgate.Order{
		Asset1:          sym.Base,
		Asset2:          sym.Quote,
		Status:          st,
		Type:            exgate.OrderTypeMarket,
		Side:            side,
		Quantity:        exgate.NewNumber(o.Vol.Decimal),
		QuantityIn:      sym.Base,
		OpenAt:          openAt,
		CloseAt:         closeAt,
		Exchange:        Name,
		ExchangeOrderID: txid,
		RawStatus:       o.Status,
	}
	if o.Descr.OrderType == "limit" {
		order.Type = exgate.OrderTypeLimit
		order.Price = exgate.NumberPtr(o.Descr.Price.Decimal)
		order.PostOnly = slices.Contains(flags, "post")
	}
	// An order placed outside the gateway has no client id: it goes by
	// Kraken's txid.
	order.ID = txid
	if o.ClOrdID != nil {
		order.ID, order.ClientOrderID = *o.ClOrdID, *o.ClOrdID
	}
	if slices.Contains(flags, "viqc") {
		order.QuantityIn = sym.Quote
	}
	if executed || o.Fee.Sign() > 0 {
		// Kraken reports the fee in quote currency: the adapter sends
		// fciq (or viqc, whose buys default to fciq), and orders with fcib
		// have been seen reporting quote fees too (Kraken's own QueryOrders
		// example: a fcib sell with a fee of 7.5 USD on 7500 USD).
		order.Fees = exgate.NumberPtr(o.Fee.Decimal)
		order.FeesIn = sym.Quote
	}
	order.ExecutedQuantity = exgate.NumberPtr(o.VolExec.Decimal)
	order.QuoteQuantity = exgate.NumberPtr(o.Cost.Decimal)
	if executed && o.Price.Sign() > 0 {
		order.AveragePrice = exgate.NumberPtr(o.Price.Decimal)
	}
	return order, nil
}

// queryOrders reads one order by Kraken txid.
func (e *Exchange) queryOrders(ctx context.Context, cred exgate.Credential, m *markets, txid string, sym exgate.Symbol) (exgate.Order, error) {
	o, err := e.rawOrder(ctx, cred, txid)
	if err != nil {
		return exgate.Order{}, err
	}
	order, err := m.toOrder(txid, o, sym)
	if err != nil {
		return exgate.Order{}, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable Kraken order " + txid, Err: err}
	}
	return order, nil
}

// QueryOrder reads an order back: by Kraken txid when q.ExchangeOrderID is
// set, else by cl_ord_id in OpenOrders, then ClosedOrders, then OpenOrders
// again (an order that was not yet visible as open may have closed in
// between). Kraken keeps a just-placed order out of OpenOrders for a
// moment, so a not-found right after placing is not conclusive.
func (e *Exchange) QueryOrder(ctx context.Context, cred exgate.Credential, q exgate.OrderQuery) (exgate.Order, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return exgate.Order{}, err
	}
	if q.ExchangeOrderID != "" {
		o, err := e.queryOrders(ctx, cred, m, q.ExchangeOrderID, q.Symbol)
		if err != nil {
			return exgate.Order{}, err
		}
		if q.ClientOrderID != "" && o.ClientOrderID != "" && o.ClientOrderID != q.ClientOrderID {
			return exgate.Order{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: fmt.Sprintf("Kraken order %s carries client id %s, not %s", q.ExchangeOrderID, o.ClientOrderID, q.ClientOrderID), Err: exgate.ErrNotFound}
		}
		o.ID, o.ClientOrderID = q.ClientOrderID, q.ClientOrderID
		return o, nil
	}
	if q.ClientOrderID == "" {
		return exgate.Order{}, exgate.ParamError("clientOrderId", "a client order id or exchange order id is needed")
	}
	for _, method := range []string{"OpenOrders", "ClosedOrders", "OpenOrders"} {
		txid, o, found, err := e.findByClientID(ctx, cred, method, q.ClientOrderID)
		if err != nil {
			return exgate.Order{}, err
		}
		if found {
			order, err := m.toOrder(txid, o, q.Symbol)
			if err != nil {
				return exgate.Order{}, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable Kraken order", Err: err}
			}
			order.ID, order.ClientOrderID = q.ClientOrderID, q.ClientOrderID
			return order, nil
		}
	}
	return exgate.Order{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "Kraken has no order with client id " + q.ClientOrderID, Err: exgate.ErrNotFound}
}

// findByClientID looks for cl_ord_id in OpenOrders or ClosedOrders (both
// filter by cl_ord_id); with several matches the newest wins.
func (e *Exchange) findByClientID(ctx context.Context, cred exgate.Credential, method, id string) (string, krakenOrder, bool, error) {
	var res struct {
		Open   map[string]krakenOrder `json:"open"`
		Closed map[string]krakenOrder `json:"closed"`
	}
	if err := e.c.private(ctx, cred, method, url.Values{"cl_ord_id": {id}}, kindRead, "", &res); err != nil {
		return "", krakenOrder{}, false, err
	}
	rows := res.Open
	if method == "ClosedOrders" {
		rows = res.Closed
	}
	var (
		bestID string
		best   krakenOrder
		found  bool
	)
	for txid, o := range rows {
		if o.ClOrdID == nil || *o.ClOrdID != id {
			continue
		}
		if !found || o.OpenTm.GreaterThan(best.OpenTm.Decimal) || (o.OpenTm.Equal(best.OpenTm.Decimal) && txid > bestID) {
			bestID, best, found = txid, o, true
		}
	}
	return bestID, best, found, nil
}

// limitPlan is an AddOrder form for a limit order and the Order it would
// make, before Kraken has answered.
type limitPlan struct {
	m     *markets
	mk    *market
	form  url.Values
	order exgate.Order
}

// planLimit checks a limit order against the pair's rules before anything
// is sent: the time in force (Kraken has no FOK), the pair's status, the
// price on tick_size (never moved), the volume rounded down to
// lot_decimals and at least ordermin, and volume × price at least costmin.
func (e *Exchange) planLimit(ctx context.Context, req exgate.LimitOrderRequest) (limitPlan, error) {
	if err := req.Validate(); err != nil {
		return limitPlan{}, err
	}
	tif, ok := timesInForce[req.TimeInForce]
	if !ok {
		return limitPlan{}, exgate.ParamError("timeInForce",
			"Kraken Spot has no %s orders: its AddOrder takes GTC, IOC or GTD; use GTC or IOC", req.TimeInForce)
	}
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return limitPlan{}, err
	}
	mk, err := m.market(req.Symbol)
	if err != nil {
		return limitPlan{}, err
	}
	st, ok := pairStates[mk.status]
	if !ok || !slices.Contains(st.types, exgate.OrderTypeLimit) {
		return limitPlan{}, exgate.Errorf(exgate.CodeOrderRejected, "Kraken's %s market is in %s mode and takes no limit orders now", req.Symbol, mk.status)
	}
	if mk.status == "post_only" && !req.PostOnly {
		return limitPlan{}, exgate.Errorf(exgate.CodeOrderRejected, "Kraken's %s market is in post_only mode and takes only postOnly limit orders now", req.Symbol)
	}
	if err := exgate.CheckPrice(req.Price, mk.tick); err != nil {
		return limitPlan{}, err
	}
	sym, base, quote := mk.symbol, mk.symbol.Base, mk.symbol.Quote
	vol := req.Quantity.Truncate(mk.lotDecimals)
	if vol.Sign() <= 0 || vol.LessThan(mk.orderMin) {
		return limitPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s (rounded down to %d decimals) is below Kraken's minimum order size %s %s for %s",
			vol, base, mk.lotDecimals, mk.orderMin, base, sym)
	}
	if notional := vol.Mul(req.Price); notional.LessThan(mk.costMin) {
		return limitPlan{}, exgate.Errorf(exgate.CodeQuantityTooSmall,
			"quantity %s %s at %s is worth %s %s, below Kraken's minimum order cost %s %s for %s",
			vol, base, req.Price, notional, quote, mk.costMin, quote, sym)
	}
	side := "buy"
	if req.Side == exgate.SideSell {
		side = "sell"
	}
	oflags := "fciq"
	if req.PostOnly {
		oflags = "post,fciq"
	}
	form := url.Values{
		"pair":        {mk.key},
		"type":        {side},
		"ordertype":   {"limit"},
		"price":       {req.Price.String()},
		"volume":      {vol.String()},
		"timeinforce": {tif},
		"oflags":      {oflags},
	}
	if req.ClientOrderID != "" {
		form.Set("cl_ord_id", req.ClientOrderID)
	}
	now := e.now().UnixMilli()
	zero := decimal.Zero
	return limitPlan{m: m, mk: mk, form: form, order: exgate.Order{
		ID: req.ClientOrderID, Asset1: base, Asset2: quote, Status: exgate.OrderPending,
		Type: exgate.OrderTypeLimit, Side: req.Side, Quantity: exgate.NewNumber(vol), QuantityIn: base,
		OpenAt: now, CloseAt: now, Exchange: Name, ClientOrderID: req.ClientOrderID,
		Price: exgate.NumberPtr(req.Price), TimeInForce: req.TimeInForce, PostOnly: req.PostOnly,
		ExecutedQuantity: exgate.NumberPtr(zero), QuoteQuantity: exgate.NumberPtr(zero),
	}}, nil
}

// PlaceLimitOrder sends one AddOrder ordertype=limit with cl_ord_id =
// req.ClientOrderID (oflags=post for postOnly, timeinforce GTC or IOC) and
// reads the order back with QueryOrders. It is never retried. Kraken
// accepts a post-only order that would trade and cancels it at once
// (reason "Post only order"): that answer is ORDER_REJECTED (see
// orderReasons).
func (e *Exchange) PlaceLimitOrder(ctx context.Context, cred exgate.Credential, req exgate.LimitOrderRequest) (exgate.Order, error) {
	plan, err := e.planLimit(ctx, req)
	if err != nil {
		return exgate.Order{}, err
	}
	var added struct {
		Txid []string `json:"txid"`
	}
	if err := e.c.private(ctx, cred, "AddOrder", plan.form, kindOrder, plan.mk.key, &added); err != nil {
		return exgate.Order{}, err
	}
	if len(added.Txid) == 0 || added.Txid[0] == "" {
		return exgate.Order{}, &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: "Kraken accepted the order without an order id; the outcome is unknown"}
	}
	order := plan.order
	order.ExchangeOrderID = added.Txid[0]
	var res map[string]krakenOrder
	err = e.c.private(ctx, cred, "QueryOrders", url.Values{"txid": {order.ExchangeOrderID}}, kindRead, "", &res)
	row, found := res[order.ExchangeOrderID]
	if err != nil || !found {
		e.log.WarnContext(ctx, "kraken: limit order placed but not read back", "clientOrderId", req.ClientOrderID, "txid", order.ExchangeOrderID, "err", err)
		return order, nil
	}
	if err := refusedAtOnce(order.ExchangeOrderID, row); err != nil {
		return exgate.Order{}, err
	}
	got, err := plan.m.toOrder(order.ExchangeOrderID, row, req.Symbol)
	if err != nil {
		e.log.WarnContext(ctx, "kraken: limit order placed but not readable", "clientOrderId", req.ClientOrderID, "txid", order.ExchangeOrderID, "err", err)
		return order, nil
	}
	got.ID, got.ClientOrderID = order.ID, order.ClientOrderID
	got.TimeInForce, got.PostOnly = req.TimeInForce, req.PostOnly
	got.Quantity, got.QuantityIn = order.Quantity, order.QuantityIn
	return got, nil
}

// refusedAtOnce returns the error of an order Kraken's engine canceled
// at once, unfilled, for a reason in orderReasons; nil otherwise.
func refusedAtOnce(txid string, o krakenOrder) error {
	if o.Status != "canceled" || o.VolExec.Sign() > 0 || o.Reason == nil {
		return nil
	}
	for _, r := range orderReasons {
		if strings.HasPrefix(*o.Reason, r.prefix) {
			return exgate.Errorf(r.code, "%s (Kraken order %s: %s)", r.detail, txid, *o.Reason)
		}
	}
	return nil
}

// TestOrder checks an order with Kraken's AddOrder validate=true, after
// the same checks as PlaceMarketOrder and PlaceLimitOrder; nothing is
// placed. The answer is the Order as it would be sent, status TEST.
func (e *Exchange) TestOrder(ctx context.Context, cred exgate.Credential, req exgate.TestOrderRequest) (exgate.Order, error) {
	switch {
	case req.Limit != nil:
		plan, err := e.planLimit(ctx, *req.Limit)
		if err != nil {
			return exgate.Order{}, err
		}
		plan.form.Set("validate", "true")
		if err := e.c.private(ctx, cred, "AddOrder", plan.form, kindValidate, plan.mk.key, nil); err != nil {
			return exgate.Order{}, err
		}
		o := plan.order
		o.Status = exgate.OrderTest
		return o, nil
	case req.Market != nil:
		r := *req.Market
		if err := rest.CheckOrder(r); err != nil {
			return exgate.Order{}, err
		}
		m, err := e.loadMarkets(ctx)
		if err != nil {
			return exgate.Order{}, err
		}
		mk, err := m.market(r.Symbol)
		if err != nil {
			return exgate.Order{}, err
		}
		if mk.status != "online" {
			return exgate.Order{}, exgate.Errorf(exgate.CodeOrderRejected, "Kraken's %s market is in %s mode and takes no market orders now", r.Symbol, mk.status)
		}
		plan, err := e.planOrder(ctx, mk, r)
		if err != nil {
			return exgate.Order{}, err
		}
		side := "buy"
		if r.Side == exgate.SideSell {
			side = "sell"
		}
		form := url.Values{"pair": {mk.key}, "type": {side}, "ordertype": {"market"}, "volume": {plan.volume.String()}, "validate": {"true"}}
		if r.ClientOrderID != "" {
			form.Set("cl_ord_id", r.ClientOrderID)
		}
		if plan.oflags != "" {
			form.Set("oflags", plan.oflags)
		}
		if err := e.c.private(ctx, cred, "AddOrder", form, kindValidate, mk.key, nil); err != nil {
			return exgate.Order{}, err
		}
		return rest.TestedMarketOrder(Name, r, r.Symbol, plan.quantity, r.QuantityIn, e.now().UnixMilli()), nil
	}
	return exgate.Order{}, exgate.ParamError("test", "nothing to test")
}

// CancelOrder sends CancelOrder by cl_ord_id (by txid only when the order
// has no client id: one placed outside the gateway), never retried, and
// reads the order back. Kraken answers EOrder:Invalid order both for an
// unknown order and for one that is closed already; the order is then
// looked up: a closed one is answered with its final status, none is an
// error wrapping ErrNotFound. A cancel whose answer was lost is
// EXCHANGE_TIMEOUT (the caller reads the order).
func (e *Exchange) CancelOrder(ctx context.Context, cred exgate.Credential, req exgate.CancelRequest) (exgate.Order, error) {
	form := url.Values{}
	switch {
	case req.ClientOrderID != "":
		form.Set("cl_ord_id", req.ClientOrderID)
	case req.ExchangeOrderID != "":
		form.Set("txid", req.ExchangeOrderID)
	default:
		return exgate.Order{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "no order id to cancel", Err: exgate.ErrNotFound}
	}
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return exgate.Order{}, err
	}
	pair := ""
	if mk, ok := m.bySymbol[req.Symbol]; ok {
		pair = mk.key
	}
	q := exgate.OrderQuery(req)
	var res struct {
		Count   int  `json:"count"`
		Pending bool `json:"pending"`
	}
	if err := e.c.private(ctx, cred, "CancelOrder", form, kindCancel, pair, &res); err != nil {
		if !errors.Is(err, exgate.ErrNotFound) {
			return exgate.Order{}, err
		}
		o, qerr := e.QueryOrder(ctx, cred, q)
		switch {
		case qerr == nil && o.Status.Final():
			return o, nil
		case qerr == nil:
			return exgate.Order{}, &exgate.Error{Code: exgate.CodeExchangeTimeout,
				Detail: fmt.Sprintf("Kraken refused to cancel order %s (%v) but lists it as %s; the outcome is unknown", o.ExchangeOrderID, err, o.Status)}
		case errors.Is(qerr, exgate.ErrNotFound):
			return exgate.Order{}, err
		}
		return exgate.Order{}, qerr
	}
	o, err := e.QueryOrder(ctx, cred, q)
	if err != nil {
		// Not wrapped: the cancel was accepted, so this is no not-found.
		return exgate.Order{}, &exgate.Error{Code: exgate.CodeExchangeTimeout,
			Detail: fmt.Sprintf("Kraken accepted the cancel (count %d) but the order could not be read back: %v", res.Count, err)}
	}
	return o, nil
}

// OpenOrders reads OpenOrders: the account's open orders, those placed
// outside the gateway included, newest first.
func (e *Exchange) OpenOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, err
	}
	if (f.Symbol != exgate.Symbol{}) {
		if _, err := m.market(f.Symbol); err != nil {
			return nil, err
		}
	}
	out, err := e.openOrders(ctx, cred, m, f.Symbol)
	if err != nil {
		return nil, err
	}
	sortOrders(out)
	return out, nil
}

func (e *Exchange) openOrders(ctx context.Context, cred exgate.Credential, m *markets, sym exgate.Symbol) ([]exgate.Order, error) {
	var res struct {
		Open map[string]krakenOrder `json:"open"`
	}
	if err := e.c.private(ctx, cred, "OpenOrders", url.Values{}, kindRead, "", &res); err != nil {
		return nil, err
	}
	return m.ordersOf(res.Open, sym)
}

// ordersOf normalizes rows, keeping those of sym (every pair when sym is
// zero).
func (m *markets) ordersOf(rows map[string]krakenOrder, sym exgate.Symbol) ([]exgate.Order, error) {
	out := []exgate.Order{}
	for txid, row := range rows {
		o, err := m.toOrder(txid, row, exgate.Symbol{})
		if err != nil {
			return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable Kraken order " + txid, Err: err}
		}
		if (sym != exgate.Symbol{} && (o.Asset1 != sym.Base || o.Asset2 != sym.Quote)) {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

// sortOrders sorts newest first (by opening time, then txid).
func sortOrders(os []exgate.Order) {
	slices.SortFunc(os, func(a, b exgate.Order) int {
		if c := cmp.Compare(b.OpenAt, a.OpenAt); c != 0 {
			return c
		}
		return strings.Compare(b.ExchangeOrderID, a.ExchangeOrderID)
	})
}

// historyPages bounds how many 50-row pages of ClosedOrders or
// TradesHistory one call reads (Kraken pages both by 50, newest first).
const historyPages = 10

// RecentOrders reads OpenOrders and ClosedOrders (pages of 50, newest
// first) and keeps the orders of f.Symbol, newest first, at most f.Limit.
// Kraken has no pair filter on either call, so an account busy on other
// pairs may show fewer than f.Limit orders of this one (at most
// historyPages pages are read).
func (e *Exchange) RecentOrders(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Order, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := m.market(f.Symbol); err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	out, err := e.openOrders(ctx, cred, m, f.Symbol)
	if err != nil {
		return nil, err
	}
	for page, ofs := 0, 0; page < historyPages && len(out) < limit; page++ {
		var res struct {
			Closed map[string]krakenOrder `json:"closed"`
			Count  int                    `json:"count"`
		}
		if err := e.c.private(ctx, cred, "ClosedOrders", url.Values{"ofs": {strconv.Itoa(ofs)}}, kindRead, "", &res); err != nil {
			return nil, err
		}
		rows, err := m.ordersOf(res.Closed, f.Symbol)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		ofs += len(res.Closed)
		if len(res.Closed) == 0 || ofs >= res.Count {
			break
		}
	}
	sortOrders(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// limitOf is the number of records a history call returns.
func limitOf(n int) int { return rest.Limit(n, exgate.DefaultRecentLimit, exgate.MaxRecentLimit) }

// krakenTrade is a TradesHistory row.
type krakenTrade struct {
	OrderTxid string       `json:"ordertxid"`
	Pair      string       `json:"pair"`
	Time      rest.Decimal `json:"time"`
	Type      string       `json:"type"`
	Price     rest.Decimal `json:"price"`
	Cost      rest.Decimal `json:"cost"`
	Fee       rest.Decimal `json:"fee"`
	Vol       rest.Decimal `json:"vol"`
	Maker     bool         `json:"maker"`
}

// Fills reads TradesHistory (pages of 50, newest first; it costs 2 on
// the call counter) and keeps the trades of f.Symbol; the client ids of
// their orders come from QueryOrders (TradesHistory does not carry
// them). OrderID is the gateway's id of an order it placed, else Kraken's
// txid. Fees are in the quote asset (see toOrder).
func (e *Exchange) Fills(ctx context.Context, cred exgate.Credential, f exgate.OrderFilter) ([]exgate.Fill, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, err
	}
	mk, err := m.market(f.Symbol)
	if err != nil {
		return nil, err
	}
	limit := limitOf(f.Limit)
	type row struct {
		id string
		t  krakenTrade
	}
	var rows []row
	for page, ofs := 0, 0; page < historyPages && len(rows) < limit; page++ {
		var res struct {
			Trades map[string]krakenTrade `json:"trades"`
			Count  int                    `json:"count"`
		}
		if err := e.c.private(ctx, cred, "TradesHistory", url.Values{"ofs": {strconv.Itoa(ofs)}}, kindRead, "", &res); err != nil {
			return nil, err
		}
		for id, t := range res.Trades {
			if m.byName[t.Pair] == mk {
				rows = append(rows, row{id, t})
			}
		}
		ofs += len(res.Trades)
		if len(res.Trades) == 0 || ofs >= res.Count {
			break
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := b.t.Time.Cmp(a.t.Time.Decimal); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	if len(rows) > limit {
		rows = rows[:limit]
	}
	var txids []string
	for _, r := range rows {
		if !slices.Contains(txids, r.t.OrderTxid) {
			txids = append(txids, r.t.OrderTxid)
		}
	}
	clientIDs, err := e.clientIDs(ctx, cred, txids)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Fill, 0, len(rows))
	for _, r := range rows {
		side := exgate.SideBuy
		if r.t.Type == "sell" {
			side = exgate.SideSell
		}
		cl := clientIDs[r.t.OrderTxid]
		fl := exgate.Fill{
			ID: r.id, OrderID: r.t.OrderTxid, Asset1: mk.symbol.Base, Asset2: mk.symbol.Quote, Side: side,
			Price: exgate.NewNumber(r.t.Price.Decimal), Quantity: exgate.NewNumber(r.t.Vol.Decimal),
			QuoteQuantity: exgate.NewNumber(r.t.Cost.Decimal), Fee: exgate.NewNumber(r.t.Fee.Decimal),
			FeeIn: mk.symbol.Quote, Maker: r.t.Maker, Timestamp: r.t.Time.Mul(decimal.NewFromInt(1000)).IntPart(),
			ClientOrderID: cl,
		}
		if cl != "" {
			fl.OrderID = cl
		}
		out = append(out, fl)
	}
	return out, nil
}

// clientIDs returns the cl_ord_id of each order that has one, by txid,
// from QueryOrders (at most 50 txids a call).
func (e *Exchange) clientIDs(ctx context.Context, cred exgate.Credential, txids []string) (map[string]string, error) {
	out := map[string]string{}
	for chunk := range slices.Chunk(txids, 50) {
		var res map[string]krakenOrder
		if err := e.c.private(ctx, cred, "QueryOrders", url.Values{"txid": {strings.Join(chunk, ",")}}, kindRead, "", &res); err != nil {
			return nil, err
		}
		for txid, o := range res {
			if o.ClOrdID != nil && *o.ClOrdID != "" {
				out[txid] = *o.ClOrdID
			}
		}
	}
	return out, nil
}
