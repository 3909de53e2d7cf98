package gateiofake

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// order is one spot order of an account.
type order struct {
	id                 int64
	text               string
	pair               *Pair
	side               string
	tif                string
	account            string
	amount             decimal.Decimal
	left               decimal.Decimal
	filledAmount       decimal.Decimal
	filledTotal        decimal.Decimal
	fee                decimal.Decimal
	feeCurrency        string
	status, finishAs   string
	created, updated   time.Time
	lockedIn           string
	rebatedFeeCurrency string
	avgDealPrice       decimal.Decimal
	hasAvg             bool
	// typ is market or limit; price and heldAmt are a limit order's
	// price and the funds it still holds in lockedIn (lifecycle.go).
	typ     string
	price   decimal.Decimal
	heldAmt decimal.Decimal
}

// textPattern is Gate's rule for `text`: "t-" and at most 28 bytes of
// 0-9 A-Z a-z _ - . (Gate API v4 docs, Order text).
var textPattern = regexp.MustCompile(`^t-[0-9A-Za-z_.-]{1,28}$`)

// json writes the order as Gate's spot Order object. mode is the
// action_mode: ACK (ids only), RESULT (no clearing fields), FULL.
func (o *order) json(mode string) map[string]any {
	id := strconv.FormatInt(o.id, 10)
	if mode == "ACK" {
		return map[string]any{"id": id, "text": o.text, "amend_text": "-"}
	}
	out := map[string]any{
		"id":             id,
		"text":           o.text,
		"amend_text":     "-",
		"create_time":    strconv.FormatInt(o.created.Unix(), 10),
		"update_time":    strconv.FormatInt(o.updated.Unix(), 10),
		"create_time_ms": o.created.UnixMilli(),
		"update_time_ms": o.updated.UnixMilli(),
		"status":         o.status,
		"currency_pair":  o.pair.ID,
		"type":           "market",
		"account":        o.account,
		"side":           o.side,
		"amount":         decimalText(o.amount),
		"price":          "0",
		"time_in_force":  o.tif,
		"iceberg":        "0",
		"left":           decimalText(o.left),
		"filled_amount":  decimalText(o.filledAmount),
		"fill_price":     decimalText(o.filledTotal),
		"filled_total":   decimalText(o.filledTotal),
		"avg_deal_price": "0",
		"stp_id":         0,
		"stp_act":        "-",
		"finish_as":      o.finishAs,
	}
	if o.hasAvg {
		out["avg_deal_price"] = decimalText(o.avgDealPrice)
	}
	if o.typ == "limit" {
		out["type"], out["price"] = "limit", decimalText(o.price)
	}
	if mode == "RESULT" {
		return out
	}
	out["fee"] = decimalText(o.fee)
	out["fee_currency"] = o.feeCurrency
	out["point_fee"] = "0"
	out["gt_fee"] = "0"
	out["gt_maker_fee"] = "0"
	out["gt_taker_fee"] = "0"
	out["gt_discount"] = false
	out["rebated_fee"] = "0"
	out["rebated_fee_currency"] = o.rebatedFeeCurrency
	return out
}

func (s *Server) handleCreateOrder(c *call) (any, *apiError) {
	var b SentOrder
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	s.mu.Lock()
	c.acc.sent = append(c.acc.sent, b)
	s.mu.Unlock()
	if c.acc.NoTrade {
		return nil, errorf(http.StatusForbidden, "FORBIDDEN", "API key does not have the spot trade permission")
	}
	if b.Text != "" && !textPattern.MatchString(b.Text) {
		return nil, invalidParam("text", b.Text)
	}
	p, e := s.pairParam(b.CurrencyPair)
	if e != nil {
		return nil, e
	}
	switch {
	case b.Side == "":
		return nil, missingParam("side")
	case b.Side != "buy" && b.Side != "sell":
		return nil, invalidParam("side", b.Side)
	case b.Type == "limit" || b.Type == "":
		// limit is Gate's default type (lifecycle.go).
		return s.handleCreateLimit(c, b, p)
	case b.Type != "market":
		return nil, invalidParam("type", b.Type)
	case b.Price != "" && b.Price != "0":
		return nil, invalidParam("price", b.Price)
	case b.Account != "" && b.Account != "spot" && b.Account != "unified":
		return nil, invalidParam("account", b.Account)
	case b.TimeInForce != "ioc" && b.TimeInForce != "fok":
		// Market orders only take ioc or fok (gtc, the default, is refused).
		return nil, invalidParam("time_in_force", b.TimeInForce)
	case b.ActionMode != "" && b.ActionMode != "ACK" && b.ActionMode != "RESULT" && b.ActionMode != "FULL":
		return nil, invalidParam("action_mode", b.ActionMode)
	case b.Iceberg != "" && b.Iceberg != "0":
		return nil, invalidParam("iceberg", b.Iceberg)
	}
	if b.Amount == "" {
		return nil, missingParam("amount")
	}
	amount, err := decimal.NewFromString(b.Amount)
	if err != nil || !amount.IsPositive() || strings.ContainsAny(b.Amount, "eE") {
		return nil, invalidParam("amount", b.Amount)
	}
	switch p.TradeStatus {
	case "tradable":
	case "buyable", "sellable":
		if p.TradeStatus != b.Side+"able" {
			return nil, errorf(http.StatusBadRequest, "TRADE_RESTRICTED", "Currency pair %s only accepts %s orders", p.ID, strings.TrimSuffix(p.TradeStatus, "able"))
		}
	default:
		return nil, errorf(http.StatusBadRequest, "TRADE_RESTRICTED", "Currency pair %s is not tradable", p.ID)
	}
	// A market buy's amount is quote to spend; a sell's is base to sell.
	spend, prec, minText := p.Quote, p.Precision, p.MinQuoteAmount
	if b.Side == "sell" {
		spend, prec, minText = p.Base, p.AmountPrecision, p.MinBaseAmount
	}
	if amount.Exponent() < -prec && !amount.Equal(amount.Truncate(prec)) {
		return nil, errorf(http.StatusBadRequest, "INVALID_PRECISION", "Invalid amount precision: %s, at most %d decimals", b.Amount, prec)
	}
	if minText != "" {
		if m := decimal.RequireFromString(minText); amount.LessThan(m) {
			return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Your order size %s %s is too small. The minimum is %s %s", b.Amount, spend, minText, spend)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	if a.avail[spend].LessThan(amount) {
		return nil, errorf(http.StatusBadRequest, "BALANCE_NOT_ENOUGH", "Not enough balance")
	}
	s.nextOrderID++
	o := &order{
		id: s.nextOrderID, text: b.Text, pair: p, side: b.Side, tif: b.TimeInForce, account: "spot",
		amount: amount, left: amount, status: "open", finishAs: "open", created: c.now, updated: c.now,
		lockedIn: spend,
	}
	if b.Account == "unified" {
		o.account = "unified"
	}
	if o.text == "" {
		o.text = "apiv4"
	}
	if s.hold {
		a.avail[spend] = a.avail[spend].Sub(amount)
		a.locked[spend] = a.locked[spend].Add(amount)
		a.orders = append(a.orders, o)
		s.pushPlaced(a, o)
		return o.json(b.ActionMode), nil
	}
	s.execute(a, o, c.now)
	if o.filledTotal.IsPositive() || o.filledAmount.IsPositive() {
		a.orders = append(a.orders, o)
	} // else: Gate does not keep orders that cancelled without a fill.
	s.pushPlaced(a, o)
	return o.json(b.ActionMode), nil
}

// execute fills an order against the static book and moves balances:
// a buy spends up to amount of quote walking the asks, a sell sells up to
// amount of base walking the bids. The taker fee is charged in what the
// order receives. The caller holds s.mu.
func (s *Server) execute(a *account, o *order, now time.Time) {
	p, b := o.pair, s.books[o.pair.ID]
	left := o.amount
	var base, quote decimal.Decimal
	var takes []bookLevel
	defer func() { s.recordTrades(a, o, takes, "taker", now) }()
	if o.side == "buy" {
		for _, l := range b.asks {
			value := l.amount.Mul(l.price)
			if value.LessThanOrEqual(left) {
				base, quote, left = base.Add(l.amount), quote.Add(value), left.Sub(value)
				takes = append(takes, l)
				continue
			}
			take := left.Div(l.price).RoundDown(p.AmountPrecision)
			base, quote, left = base.Add(take), quote.Add(take.Mul(l.price)), left.Sub(take.Mul(l.price))
			takes = append(takes, bookLevel{price: l.price, amount: take})
			break
		}
	} else {
		for _, l := range b.bids {
			take := decimal.Min(l.amount, left)
			base, quote, left = base.Add(take), quote.Add(take.Mul(l.price)), left.Sub(take)
			takes = append(takes, bookLevel{price: l.price, amount: take})
			if !left.IsPositive() {
				break
			}
		}
	}
	o.filledAmount, o.filledTotal, o.left, o.updated = base, quote, left, now
	if base.IsPositive() {
		o.avgDealPrice, o.hasAvg = quote.DivRound(base, p.Precision+4), true
	}
	if o.side == "buy" {
		o.fee, o.feeCurrency, o.rebatedFeeCurrency = base.Mul(s.feeRate).Round(8), p.Base, p.Quote
		a.avail[p.Quote] = a.avail[p.Quote].Sub(quote)
		a.avail[p.Base] = a.avail[p.Base].Add(base.Sub(o.fee))
	} else {
		o.fee, o.feeCurrency, o.rebatedFeeCurrency = quote.Mul(s.feeRate).Round(8), p.Quote, p.Base
		a.avail[p.Base] = a.avail[p.Base].Sub(base)
		a.avail[p.Quote] = a.avail[p.Quote].Add(quote.Sub(o.fee))
	}
	// Closed when filled, or when only dust too small for the next level
	// is left (as Gate closes market buys with unspendable quote left).
	dust := o.side == "buy" && left.IsPositive() && nextLevelTooBig(b.asks, base, left, p)
	switch {
	case !left.IsPositive() || (dust && base.IsPositive()):
		o.status, o.finishAs = "closed", "filled"
	case !base.IsPositive():
		o.status, o.finishAs = "cancelled", "small"
		if !dust {
			o.finishAs = "depth_not_enough"
		}
	default:
		o.status, o.finishAs = "cancelled", "depth_not_enough"
	}
}

// nextLevelTooBig reports whether the quote left of a buy cannot buy one
// step of base at the level the walk stopped at.
func nextLevelTooBig(asks []bookLevel, bought, left decimal.Decimal, p *Pair) bool {
	var seen decimal.Decimal
	for _, l := range asks {
		seen = seen.Add(l.amount)
		if seen.GreaterThan(bought) {
			return left.LessThan(decimal.New(1, -p.AmountPrecision).Mul(l.price))
		}
	}
	return false // the book ran out
}

func (s *Server) handleGetOrder(c *call) (any, *apiError) {
	pairID := c.query.Get("currency_pair")
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	if strings.HasPrefix(c.id, "t-") {
		// Custom ids only find open orders.
		if pairID == "" {
			return nil, missingParam("currency_pair")
		}
		for i := len(a.orders) - 1; i >= 0; i-- {
			o := a.orders[i]
			if o.text == c.id && o.status == "open" && o.pair.ID == pairID {
				return o.json("FULL"), nil
			}
		}
		return nil, errorf(http.StatusNotFound, "CLIENT_ID_NOT_FOUND", "Order with client ID %s not found", c.id)
	}
	id, err := strconv.ParseInt(c.id, 10, 64)
	if err != nil {
		return nil, invalidParam("order_id", c.id)
	}
	for _, o := range a.orders {
		if o.id == id {
			if (pairID == "" && o.status == "open") || (pairID != "" && pairID != o.pair.ID) {
				break
			}
			return o.json("FULL"), nil
		}
	}
	return nil, errorf(http.StatusNotFound, "ORDER_NOT_FOUND", "Order not found")
}

func (s *Server) handleListOrders(c *call) (any, *apiError) {
	q := c.query
	status := q.Get("status")
	if status == "" {
		return nil, missingParam("status")
	}
	if status != "open" && status != "finished" {
		return nil, invalidParam("status", status)
	}
	pairID := q.Get("currency_pair")
	if pairID == "" && status == "open" {
		return nil, missingParam("currency_pair")
	}
	if pairID != "" {
		if _, e := s.pairParam(pairID); e != nil {
			return nil, e
		}
	}
	page, e := intParam(q, "page", 1)
	if e != nil || page < 1 {
		return nil, invalidParam("page", q.Get("page"))
	}
	limit, e := intParam(q, "limit", 100)
	maxLimit := int64(1000)
	if status == "open" {
		maxLimit = 100
	}
	if e != nil || limit < 1 || limit > maxLimit {
		return nil, invalidParam("limit", q.Get("limit"))
	}
	if status == "open" && (q.Has("from") || q.Has("to") || q.Has("side")) {
		return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "from, to and side only apply to finished orders")
	}
	from, e1 := intParam(q, "from", 0)
	to, e2 := intParam(q, "to", c.now.Unix())
	if e1 != nil || e2 != nil {
		return nil, invalidParam("from", q.Get("from"))
	}
	side := q.Get("side")
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*order
	for i := len(c.acc.orders) - 1; i >= 0; i-- { // newest first
		o := c.acc.orders[i]
		finished := o.status != "open"
		if (status == "finished") != finished || (pairID != "" && o.pair.ID != pairID) || (side != "" && o.side != side) {
			continue
		}
		if finished && (o.updated.Unix() < from || o.updated.Unix() > to) {
			continue
		}
		match = append(match, o)
	}
	start := min(int((page-1)*limit), len(match))
	end := min(start+int(limit), len(match))
	out := make([]map[string]any, 0, end-start)
	for _, o := range slices.Clip(match[start:end]) {
		out = append(out, o.json("FULL"))
	}
	return out, nil
}
