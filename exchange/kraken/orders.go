package kraken

import (
	"context"
	"fmt"
	"net/url"
	"slices"
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
		Exchange:        exgate.ExchangeKraken,
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
		Pair      string `json:"pair"`
		Type      string `json:"type"`
		OrderType string `json:"ordertype"`
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
		Exchange:        exgate.ExchangeKraken,
		ExchangeOrderID: txid,
		RawStatus:       o.Status,
	}
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
	var res map[string]krakenOrder
	form := url.Values{"txid": {txid}}
	if err := e.c.private(ctx, cred, "QueryOrders", form, kindRead, "", &res); err != nil {
		return exgate.Order{}, err
	}
	o, ok := res[txid]
	if !ok {
		return exgate.Order{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "Kraken has no order " + txid, Err: exgate.ErrNotFound}
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
