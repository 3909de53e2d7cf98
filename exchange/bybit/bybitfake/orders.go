package bybitfake

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// order is one spot order of an account.
type order struct {
	id, linkID, symbol, side, typ, tif, marketUnit string
	qty, price                                     decimal.Decimal
	status, cancelType, rejectReason               string
	cumQty, cumValue, cumFee                       decimal.Decimal
	feeCoin                                        string
	created, updated                               time.Time
	// lockCoin and lockAmt are what the resting order holds.
	lockCoin string
	lockAmt  decimal.Decimal
}

func (o *order) open() bool { return o.status == "New" || o.status == "PartiallyFilled" }

// execution is one fill of an order.
type execution struct {
	id, orderID, linkID, symbol, side, feeCoin string
	price, qty, value, fee                     decimal.Decimal
	maker                                      bool
	at                                         time.Time
}

// json writes an order as Bybit's order/realtime lists it.
func (o *order) json() map[string]any {
	avg := ""
	if o.cumQty.IsPositive() {
		avg = o.cumValue.DivRound(o.cumQty, 8).String()
	}
	price := o.price.String()
	if o.typ == "Market" {
		price = "0"
	}
	leaves := o.qty.Sub(o.cumQty)
	if !o.open() || o.typ == "Market" {
		leaves = decimal.Zero
	}
	fee := map[string]string{}
	if o.cumFee.IsPositive() {
		fee[o.feeCoin] = o.cumFee.String()
	}
	return map[string]any{
		"orderId": o.id, "orderLinkId": o.linkID, "blockTradeId": "", "symbol": o.symbol, "price": price, "qty": o.qty.String(),
		"side": o.side, "isLeverage": "0", "positionIdx": 0, "orderStatus": o.status, "cancelType": o.cancelType,
		"rejectReason": o.rejectReason, "avgPrice": avg, "leavesQty": leaves.String(), "leavesValue": leaves.Mul(o.price).String(),
		"cumExecQty": o.cumQty.String(), "cumExecValue": o.cumValue.String(), "cumExecFee": o.cumFee.String(), "cumFeeDetail": fee,
		"timeInForce": o.tif, "orderType": o.typ, "marketUnit": o.marketUnit, "orderFilter": "Order",
		"createdTime": ms(o.created), "updatedTime": ms(o.updated),
	}
}

// linkIDPattern is Bybit's orderLinkId: at most 36 characters of letters,
// digits, "-" and "_".
var linkIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,36}$`)

// decimalParam reads a positive decimal that must be a multiple of step.
func decimalParam(name, v string, step decimal.Decimal, stepCode int) (decimal.Decimal, *apiError) {
	d, err := decimal.NewFromString(v)
	if err != nil || strings.ContainsAny(v, "eE+ ") || !d.IsPositive() {
		return decimal.Zero, errorf(10001, "params error: %s invalid", name)
	}
	if step.IsPositive() && !d.Mod(step).IsZero() {
		return decimal.Zero, errorf(stepCode, "Order %s has too many decimals.", name)
	}
	return d, nil
}

// available is what the account can spend of a coin in the unified wallet.
func (a *account) available(coin string) decimal.Decimal { return a.unified[coin].Sub(a.locked[coin]) }

// take is one level an order takes: quantity in base at price.
type take struct{ price, qty decimal.Decimal }

// walk takes from levels (best first) up to limit price (zero: any) at
// most base quantity (or, when quote is set, at most that value), with
// base quantities rounded down to step.
func walk(levels []lvl, buy bool, limit, base, quote, step decimal.Decimal) []take {
	var out []take
	for _, l := range levels {
		if limit.IsPositive() && ((buy && l.price.GreaterThan(limit)) || (!buy && l.price.LessThan(limit))) {
			break
		}
		var q decimal.Decimal
		if quote.IsPositive() {
			q = decimal.Min(l.qty, quote.Div(l.price)).Div(step).Floor().Mul(step)
			quote = quote.Sub(q.Mul(l.price))
		} else {
			q = decimal.Min(l.qty, base)
			base = base.Sub(q)
		}
		if q.IsPositive() {
			out = append(out, take{l.price, q})
		}
		if (quote.IsPositive() && quote.LessThan(l.price.Mul(step))) || (!quote.IsPositive() && !base.IsPositive()) {
			break
		}
	}
	return out
}

func sum(ts []take) (base, quote decimal.Decimal) {
	for _, t := range ts {
		base, quote = base.Add(t.qty), quote.Add(t.qty.Mul(t.price))
	}
	return base, quote
}

// handleCreate serves POST /v5/order/create.
func (s *Server) handleCreate(c *call) (any, *apiError) {
	var b SentOrder
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	a.sent = append(a.sent, b)
	if a.ReadOnly {
		return nil, errorf(10005, "Permission denied, please check your API key permissions.")
	}
	if b.Category != "spot" {
		return nil, errorf(10001, "params error: category must be spot in this fake")
	}
	p := s.pairs[b.Symbol]
	if p == nil {
		return nil, errorf(170121, "Invalid symbol.")
	}
	if p.Status != "Trading" {
		return nil, errorf(10001, "params error: symbol %s is not trading", p.Symbol)
	}
	if b.Side != "Buy" && b.Side != "Sell" {
		return nil, errorf(10001, "params error: side invalid")
	}
	if b.OrderLinkID != "" && !linkIDPattern.MatchString(b.OrderLinkID) {
		return nil, errorf(10001, "params error: orderLinkId invalid")
	}
	if b.OrderLinkID == "" {
		b.OrderLinkID = strconv.FormatInt(s.nextOrderID+7, 10)
	}
	for _, o := range a.orders {
		if o.linkID == b.OrderLinkID {
			return nil, errorf(s.opts.DuplicateLinkIDCode, "Duplicate clientOrderId.")
		}
	}
	buy := b.Side == "Buy"
	bk := s.books[p.Symbol]
	levels := bk.bids
	if buy {
		levels = bk.asks
	}
	s.nextOrderID++
	o := &order{id: strconv.FormatInt(s.nextOrderID, 10), linkID: b.OrderLinkID, symbol: p.Symbol, side: b.Side, typ: b.OrderType,
		created: c.now, updated: c.now, cancelType: "UNKNOWN", rejectReason: "EC_NoError"}
	switch b.OrderType {
	case "Market":
		unit := b.MarketUnit
		if unit == "" {
			unit = "baseCoin"
			if buy {
				unit = "quoteCoin" // Bybit's default for a market Buy
			}
		}
		if unit != "baseCoin" && unit != "quoteCoin" {
			return nil, errorf(10001, "params error: marketUnit invalid")
		}
		step, code := p.BasePrecision, 170137
		if unit == "quoteCoin" {
			step, code = p.QuotePrecision, 170148
		}
		qty, e := decimalParam("qty", b.Qty, step, code)
		if e != nil {
			return nil, e
		}
		var ts []take
		if unit == "quoteCoin" {
			ts = walk(levels, buy, decimal.Zero, decimal.Zero, qty, p.BasePrecision)
		} else {
			if qty.GreaterThan(p.MaxMarketOrderQty) {
				return nil, errorf(170135, "Order quantity exceeded upper limit.")
			}
			ts = walk(levels, buy, decimal.Zero, qty, decimal.Zero, p.BasePrecision)
		}
		base, quote := sum(ts)
		value := quote
		if unit == "quoteCoin" {
			value = qty
		}
		if value.LessThan(p.MinOrderAmt) {
			return nil, errorf(170140, "Order value exceeded lower limit.")
		}
		if (buy && a.available(p.Quote).LessThan(quote)) || (!buy && a.available(p.Base).LessThan(base)) {
			return nil, errorf(170131, "Balance insufficient")
		}
		o.qty, o.tif, o.marketUnit = qty, "IOC", b.MarketUnit
		s.fill(a, p, o, ts, false, c.now)
		full := (unit == "baseCoin" && o.cumQty.Equal(qty)) || (unit == "quoteCoin" && qty.Sub(o.cumValue).LessThan(levels[0].price.Mul(p.BasePrecision)))
		switch {
		case full:
			o.status = "Filled"
		case o.cumQty.IsPositive():
			o.status = "PartiallyFilledCanceled"
		default:
			o.status = "Cancelled"
		}
	case "Limit":
		qty, e := decimalParam("qty", b.Qty, p.BasePrecision, 170137)
		if e != nil {
			return nil, e
		}
		price, e := decimalParam("price", b.Price, p.TickSize, 170134)
		if e != nil {
			return nil, e
		}
		tif := b.TimeInForce
		if tif == "" {
			tif = "GTC"
		}
		if !slices.Contains([]string{"GTC", "IOC", "FOK", "PostOnly"}, tif) {
			return nil, errorf(10001, "params error: timeInForce invalid")
		}
		if qty.Mul(price).LessThan(p.MinOrderAmt) {
			return nil, errorf(170140, "Order value exceeded lower limit.")
		}
		if (buy && a.available(p.Quote).LessThan(qty.Mul(price))) || (!buy && a.available(p.Base).LessThan(qty)) {
			return nil, errorf(170131, "Balance insufficient")
		}
		o.qty, o.price, o.tif = qty, price, tif
		ts := walk(levels, buy, price, qty, decimal.Zero, p.BasePrecision)
		crossBase, _ := sum(ts)
		switch {
		case tif == "PostOnly" && len(ts) > 0:
			if s.opts.PostOnlyRefusedSync {
				s.nextOrderID--
				return nil, errorf(170218, "The LIMIT-MAKER order is rejected due to invalid price.")
			}
			o.status, o.rejectReason = "Cancelled", "EC_PostOnlyWillTakeLiquidity"
		case tif == "FOK" && crossBase.LessThan(qty):
			o.status, o.rejectReason = "Cancelled", "EC_CancelForNoFullFill"
		default:
			s.fill(a, p, o, ts, false, c.now)
			switch {
			case o.cumQty.Equal(qty):
				o.status = "Filled"
			case tif == "IOC" && o.cumQty.IsPositive():
				o.status = "PartiallyFilledCanceled"
			case tif == "IOC":
				o.status, o.rejectReason = "Cancelled", "EC_NoImmediateQtyToFill"
			default:
				o.status = "New"
				if o.cumQty.IsPositive() {
					o.status = "PartiallyFilled"
				}
				s.lock(a, p, o)
			}
		}
	default:
		return nil, errorf(10001, "params error: orderType invalid")
	}
	a.orders = append(a.orders, o)
	s.pushOrderLocked(a, o)
	return map[string]string{"orderId": o.id, "orderLinkId": o.linkID}, nil
}

// lock holds what a resting order's remainder needs.
func (s *Server) lock(a *account, p *Pair, o *order) {
	rest := o.qty.Sub(o.cumQty)
	o.lockCoin, o.lockAmt = p.Base, rest
	if o.side == "Buy" {
		o.lockCoin, o.lockAmt = p.Quote, rest.Mul(o.price)
	}
	a.locked[o.lockCoin] = a.locked[o.lockCoin].Add(o.lockAmt)
}

// release gives back what a resting order holds.
func release(a *account, o *order) {
	if o.lockCoin == "" {
		return
	}
	a.locked[o.lockCoin] = a.locked[o.lockCoin].Sub(o.lockAmt)
	o.lockCoin, o.lockAmt = "", decimal.Zero
}

// fill executes takes for o and moves the unified wallet: a Buy pays the
// fee in base, a Sell in quote (Bybit's spot fee currency rule,
// https://bybit-exchange.github.io/docs/v5/enum#spot-fee-currency-instruction).
func (s *Server) fill(a *account, p *Pair, o *order, ts []take, maker bool, now time.Time) {
	for _, t := range ts {
		value := t.qty.Mul(t.price)
		s.nextExecID++
		x := &execution{id: strconv.FormatInt(s.nextExecID, 10), orderID: o.id, linkID: o.linkID, symbol: p.Symbol, side: o.side,
			price: t.price, qty: t.qty, value: value, maker: maker, at: now}
		if o.side == "Buy" {
			x.fee, x.feeCoin = t.qty.Mul(s.feeRate).Round(10), p.Base
			a.unified[p.Quote] = a.unified[p.Quote].Sub(value)
			a.unified[p.Base] = a.unified[p.Base].Add(t.qty).Sub(x.fee)
		} else {
			x.fee, x.feeCoin = value.Mul(s.feeRate).Round(10), p.Quote
			a.unified[p.Base] = a.unified[p.Base].Sub(t.qty)
			a.unified[p.Quote] = a.unified[p.Quote].Add(value).Sub(x.fee)
		}
		a.execs = append(a.execs, x)
		o.cumQty, o.cumValue, o.cumFee, o.feeCoin = o.cumQty.Add(t.qty), o.cumValue.Add(value), o.cumFee.Add(x.fee), x.feeCoin
	}
	o.updated = now
}

// OrdersByLinkID returns how many orders the account holds (open or
// closed) with the given orderLinkId.
func (s *Server) OrdersByLinkID(apiKey, linkID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[apiKey]; a != nil {
		for _, o := range a.orders {
			if o.linkID == linkID {
				n++
			}
		}
	}
	return n
}

// OpenOrderCount returns how many open orders the account has.
func (s *Server) OpenOrderCount(apiKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[apiKey]; a != nil {
		for _, o := range a.orders {
			if o.open() {
				n++
			}
		}
	}
	return n
}

// FillOrder fills the open order with the given orderLinkId completely at
// its price, as a trade against it would, and pushes the change to the
// account's order stream.
func (s *Server) FillOrder(apiKey, linkID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return fmt.Errorf("bybitfake: no account %s", apiKey)
	}
	for _, o := range a.orders {
		if o.linkID == linkID && o.open() {
			p := s.pairs[o.symbol]
			release(a, o)
			s.fill(a, p, o, []take{{o.price, o.qty.Sub(o.cumQty)}}, true, s.serverTime())
			o.status = "Filled"
			s.pushOrderLocked(a, o)
			return nil
		}
	}
	return fmt.Errorf("bybitfake: no open order %s", linkID)
}

// findOrder finds an account's order by orderId (which wins) or
// orderLinkId.
func findOrder(a *account, id, linkID string) *order {
	for _, o := range a.orders {
		if (id != "" && o.id == id) || (id == "" && linkID != "" && o.linkID == linkID) {
			return o
		}
	}
	return nil
}

// handleCancel serves POST /v5/order/cancel: only New and PartiallyFilled
// orders can be cancelled; anything else is 170213.
func (s *Server) handleCancel(c *call) (any, *apiError) {
	var b struct {
		Category    string `json:"category"`
		Symbol      string `json:"symbol"`
		OrderID     string `json:"orderId"`
		OrderLinkID string `json:"orderLinkId"`
		OrderFilter string `json:"orderFilter"`
	}
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	if b.Category != "spot" || b.Symbol == "" || (b.OrderID == "" && b.OrderLinkID == "") {
		return nil, errorf(10001, "params error: category, symbol and orderId or orderLinkId are required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	if a.ReadOnly {
		return nil, errorf(10005, "Permission denied, please check your API key permissions.")
	}
	o := findOrder(a, b.OrderID, b.OrderLinkID)
	if o == nil || o.symbol != b.Symbol || !o.open() {
		return nil, errorf(170213, "Order does not exist.")
	}
	release(a, o)
	o.status, o.cancelType, o.updated = "Cancelled", "CancelByUser", c.now
	if o.cumQty.IsPositive() {
		o.status = "PartiallyFilledCanceled"
	}
	s.pushOrderLocked(a, o)
	return map[string]string{"orderId": o.id, "orderLinkId": o.linkID}, nil
}

// ordersNewestFirst lists the orders that keep, newest first.
func ordersNewestFirst(a *account, keep func(*order) bool) []*order {
	var out []*order
	for i := len(a.orders) - 1; i >= 0; i-- {
		if keep(a.orders[i]) {
			out = append(out, a.orders[i])
		}
	}
	return out
}

// orderPage answers a list of orders, paged.
func orderPage(os []*order, c *call) (any, *apiError) {
	limit, e := limitParam(c.query, 20, 50)
	if e != nil {
		return nil, e
	}
	pg, next, e := page(os, c.query.Get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	list := make([]map[string]any, 0, len(pg))
	for _, o := range pg {
		list = append(list, o.json())
	}
	return map[string]any{"category": "spot", "list": list, "nextPageCursor": next}, nil
}

// handleRealtime serves GET /v5/order/realtime: by orderId or orderLinkId
// any order; else openOnly=0 the open orders, openOnly=1 up to the 500
// most recent closed ones; newest first.
func (s *Server) handleRealtime(c *call) (any, *apiError) {
	if c.query.Get("category") != "spot" {
		return nil, errorf(10001, "params error: category is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, link, sym := c.query.Get("orderId"), c.query.Get("orderLinkId"), c.query.Get("symbol")
	openOnly := c.query.Get("openOnly")
	os := ordersNewestFirst(c.acc, func(o *order) bool {
		switch {
		case sym != "" && o.symbol != sym:
			return false
		case id != "":
			return o.id == id
		case link != "":
			return o.linkID == link
		case openOnly == "1":
			return !o.open()
		}
		return o.open()
	})
	if openOnly == "1" && len(os) > 500 {
		os = os[:500]
	}
	return orderPage(os, c)
}

// handleHistory serves GET /v5/order/history: closed orders of the window
// (default the last 7 days; Cancelled and Rejected without fills only for
// 24 hours), open ones too when Options.HistoryHasOpen.
func (s *Server) handleHistory(c *call) (any, *apiError) {
	if c.query.Get("category") != "spot" {
		return nil, errorf(10001, "params error: category is required")
	}
	from, to, e := window(c, 7*24*time.Hour)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, link, sym, st := c.query.Get("orderId"), c.query.Get("orderLinkId"), c.query.Get("symbol"), c.query.Get("orderStatus")
	os := ordersNewestFirst(c.acc, func(o *order) bool {
		switch {
		case sym != "" && o.symbol != sym, id != "" && o.id != id, link != "" && o.linkID != link, st != "" && o.status != st:
			return false
		case o.open() && !s.opts.HistoryHasOpen:
			return false
		case o.created.Before(from) || o.created.After(to):
			return false
		case (o.status == "Cancelled" || o.status == "Rejected") && !o.cumQty.IsPositive() && c.now.Sub(o.updated) > 24*time.Hour:
			return false
		}
		return true
	})
	return orderPage(os, c)
}

// window reads startTime and endTime: at most span apart; neither is the
// last span, only one the span from or to it.
func window(c *call, span time.Duration) (time.Time, time.Time, *apiError) {
	start, e := intParam(c.query, "startTime", 0)
	if e != nil {
		return time.Time{}, time.Time{}, e
	}
	end, e := intParam(c.query, "endTime", 0)
	if e != nil {
		return time.Time{}, time.Time{}, e
	}
	switch {
	case start == 0 && end == 0:
		return c.now.Add(-span), c.now, nil
	case end == 0:
		return time.UnixMilli(start), time.UnixMilli(start).Add(span), nil
	case start == 0:
		return time.UnixMilli(end).Add(-span), time.UnixMilli(end), nil
	}
	if end < start || time.Duration(end-start)*time.Millisecond > span {
		return time.Time{}, time.Time{}, errorf(10001, "params error: the time range must not exceed %s", span)
	}
	return time.UnixMilli(start), time.UnixMilli(end), nil
}

// handleExecutions serves GET /v5/execution/list: newest first, limit
// [1, 100] default 50.
func (s *Server) handleExecutions(c *call) (any, *apiError) {
	if c.query.Get("category") != "spot" {
		return nil, errorf(10001, "params error: category is required")
	}
	from, to, e := window(c, 7*24*time.Hour)
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(c.query, 50, 100)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sym, id, link := c.query.Get("symbol"), c.query.Get("orderId"), c.query.Get("orderLinkId")
	var xs []*execution
	for i := len(c.acc.execs) - 1; i >= 0; i-- {
		x := c.acc.execs[i]
		if (sym != "" && x.symbol != sym) || (id != "" && x.orderID != id) || (link != "" && x.linkID != link) || x.at.Before(from) || x.at.After(to) {
			continue
		}
		xs = append(xs, x)
	}
	pg, next, e := page(xs, c.query.Get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	list := make([]map[string]any, 0, len(pg))
	for _, x := range pg {
		list = append(list, map[string]any{
			"symbol": x.symbol, "orderId": x.orderID, "orderLinkId": x.linkID, "side": x.side, "orderPrice": "", "orderQty": "",
			"leavesQty": "0", "orderType": "", "execId": x.id, "execPrice": x.price.String(), "execQty": x.qty.String(),
			"execValue": x.value.String(), "execFee": x.fee.String(), "feeCurrency": x.feeCoin, "feeRate": s.feeRate.String(),
			"isMaker": x.maker, "execTime": ms(x.at), "execType": "Trade", "seq": 1,
		})
	}
	return map[string]any{"category": "spot", "list": list, "nextPageCursor": next}, nil
}
