package gateiofake

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The order lifecycle of the fake: limit orders, cancels, open orders and
// the account's trades.
//
// The matching model is simple and deterministic. The book is the static
// book of the pair (levels are never consumed). A limit order takes, as
// the taker, every level at or better than its price, at the level's
// price, up to its amount; then, by time_in_force:
//
//	gtc  the rest rests on the book (open), holding its funds, until it
//	     is canceled or FillOrder fills it at its price as the maker;
//	ioc  the rest is cancelled (finish_as ioc);
//	fok  if the levels cannot fill it all, nothing trades and the order
//	     is cancelled (finish_as fok);
//	poc  an order that would take any level is refused with
//	     POC_FILL_IMMEDIATELY; one that would not rests as gtc.
//
// Orders that end cancelled without any fill are not kept (Gate does not
// persist them), except those canceled by DELETE, which stay listed as
// finished. Source of the names and shapes: Gate API v4 docs, "Create an
// order" (time_in_force gtc, ioc, poc, fok), the Order model (finish_as),
// the error label list (POC_FILL_IMMEDIATELY, ORDER_NOT_FOUND,
// ORDER_CLOSED, ORDER_CANCELLED), "Cancel a single order", "List all open
// orders" and "List personal trading history".

// trade is one fill of an account's order, as GET /spot/my_trades writes
// it.
type trade struct {
	id      int64
	order   *order
	role    string
	amount  decimal.Decimal
	price   decimal.Decimal
	fee     decimal.Decimal
	feeCur  string
	created time.Time
}

func (t *trade) json() map[string]any {
	return map[string]any{
		"id":             strconv.FormatInt(t.id, 10),
		"create_time":    strconv.FormatInt(t.created.Unix(), 10),
		"create_time_ms": strconv.FormatInt(t.created.UnixMilli(), 10) + ".000",
		"currency_pair":  t.order.pair.ID,
		"side":           t.order.side,
		"role":           t.role,
		"amount":         decimalText(t.amount),
		"price":          decimalText(t.price),
		"order_id":       strconv.FormatInt(t.order.id, 10),
		"fee":            decimalText(t.fee),
		"fee_currency":   t.feeCur,
		"point_fee":      "0",
		"gt_fee":         "0",
		"amend_text":     "-",
		"sequence_id":    strconv.FormatInt(t.id, 10),
		"text":           t.order.text,
	}
}

// recordTrades adds the trades of an order's fills; the fee of each is
// charged in what the order receives, at the fake's rate. The caller
// holds s.mu.
func (s *Server) recordTrades(a *account, o *order, fills []bookLevel, role string, now time.Time) {
	for _, f := range fills {
		if !f.amount.IsPositive() {
			continue
		}
		s.nextTradeID++
		t := &trade{id: s.nextTradeID, order: o, role: role, amount: f.amount, price: f.price, created: now}
		if o.side == "buy" {
			t.fee, t.feeCur = f.amount.Mul(s.feeRate).Round(8), o.pair.Base
		} else {
			t.fee, t.feeCur = f.amount.Mul(f.price).Mul(s.feeRate).Round(8), o.pair.Quote
		}
		a.trades = append(a.trades, t)
	}
}

// limitTimesInForce are the time_in_force values of a limit order.
var limitTimesInForce = map[string]bool{"gtc": true, "ioc": true, "poc": true, "fok": true}

// checkDecimal reads a positive decimal parameter of at most prec
// decimals.
func checkDecimal(name, v string, prec int32) (decimal.Decimal, *apiError) {
	if v == "" {
		return decimal.Decimal{}, missingParam(name)
	}
	d, err := decimal.NewFromString(v)
	if err != nil || !d.IsPositive() || strings.ContainsAny(v, "eE") {
		return decimal.Decimal{}, invalidParam(name, v)
	}
	if !d.Equal(d.Truncate(prec)) {
		return decimal.Decimal{}, errorf(http.StatusBadRequest, "INVALID_PRECISION", "Invalid %s precision: %s, at most %d decimals", name, v, prec)
	}
	return d, nil
}

// handleCreateLimit places a limit order (type limit, Gate's default).
func (s *Server) handleCreateLimit(c *call, b SentOrder, p *Pair) (any, *apiError) {
	switch {
	case b.Account != "" && b.Account != "spot" && b.Account != "unified":
		return nil, invalidParam("account", b.Account)
	case b.TimeInForce != "" && !limitTimesInForce[b.TimeInForce]:
		return nil, invalidParam("time_in_force", b.TimeInForce)
	case b.ActionMode != "" && b.ActionMode != "ACK" && b.ActionMode != "RESULT" && b.ActionMode != "FULL":
		return nil, invalidParam("action_mode", b.ActionMode)
	case b.Iceberg != "" && b.Iceberg != "0":
		return nil, invalidParam("iceberg", b.Iceberg)
	}
	price, e := checkDecimal("price", b.Price, p.Precision)
	if e != nil {
		return nil, e
	}
	amount, e := checkDecimal("amount", b.Amount, p.AmountPrecision)
	if e != nil {
		return nil, e
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
	if p.MinBaseAmount != "" && amount.LessThan(decimal.RequireFromString(p.MinBaseAmount)) {
		return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Your order size %s %s is too small. The minimum is %s %s", b.Amount, p.Base, p.MinBaseAmount, p.Base)
	}
	if value := amount.Mul(price); p.MinQuoteAmount != "" && value.LessThan(decimal.RequireFromString(p.MinQuoteAmount)) {
		return nil, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Your order size %s %s is too small. The minimum is %s %s", value, p.Quote, p.MinQuoteAmount, p.Quote)
	}
	tif := b.TimeInForce
	if tif == "" {
		tif = "gtc"
	}
	text := b.Text
	if text == "" {
		text = "apiv4"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, e := s.placeLimit(c.acc, p, b.Side, tif, text, amount, price, c.now, true)
	if e != nil {
		return nil, e
	}
	if b.Account == "unified" {
		o.account = "unified"
	}
	return o.json(b.ActionMode), nil
}

// placeLimit matches a limit order against the book and keeps it when it
// rests or traded; take false rests it without matching (an order placed
// away from the market on Gate's site). The caller holds s.mu.
func (s *Server) placeLimit(a *account, p *Pair, side, tif, text string, amount, price decimal.Decimal, now time.Time, take bool) (*order, *apiError) {
	spend, hold := p.Quote, amount.Mul(price)
	if side == "sell" {
		spend, hold = p.Base, amount
	}
	if a.avail[spend].LessThan(hold) {
		return nil, errorf(http.StatusBadRequest, "BALANCE_NOT_ENOUGH", "Not enough balance")
	}
	var fills []bookLevel
	filled := decimal.Zero
	if take {
		levels := s.books[p.ID].asks
		if side == "sell" {
			levels = s.books[p.ID].bids
		}
		for _, l := range levels {
			if (side == "buy" && l.price.GreaterThan(price)) || (side == "sell" && l.price.LessThan(price)) || filled.Equal(amount) {
				break
			}
			n := decimal.Min(l.amount, amount.Sub(filled))
			fills = append(fills, bookLevel{price: l.price, amount: n})
			filled = filled.Add(n)
		}
	}
	switch {
	case tif == "poc" && len(fills) > 0:
		return nil, errorf(http.StatusBadRequest, "POC_FILL_IMMEDIATELY", "Order would match and take liquidity immediately; post-only order cancelled")
	case tif == "fok" && filled.LessThan(amount):
		fills = nil // all or nothing: nothing trades
	}
	s.nextOrderID++
	o := &order{
		id: s.nextOrderID, text: text, pair: p, side: side, tif: tif, account: "spot", typ: "limit", price: price,
		amount: amount, left: amount, status: "open", finishAs: "open", created: now, updated: now, lockedIn: spend,
	}
	o.rebatedFeeCurrency = p.Quote
	o.feeCurrency = p.Base
	if side == "sell" {
		o.rebatedFeeCurrency, o.feeCurrency = p.Base, p.Quote
	}
	s.fill(a, o, fills, "taker", now)
	switch {
	case !o.left.IsPositive():
		o.status, o.finishAs = "closed", "filled"
	case tif == "ioc" || tif == "fok":
		o.status, o.finishAs = "cancelled", tif
	default: // gtc, poc: the rest rests, holding its funds.
		held := o.left.Mul(price)
		if side == "sell" {
			held = o.left
		}
		a.avail[spend] = a.avail[spend].Sub(held)
		a.locked[spend] = a.locked[spend].Add(held)
		o.heldAmt = held
	}
	if o.status == "open" || o.filledAmount.IsPositive() {
		a.orders = append(a.orders, o)
	} // else: Gate does not keep orders that cancelled without a fill.
	s.pushPlaced(a, o)
	return o, nil
}

// fill executes fills of a limit order (from available funds, or from
// what it holds when it rests) and moves balances. The caller holds s.mu.
func (s *Server) fill(a *account, o *order, fills []bookLevel, role string, now time.Time) {
	p := o.pair
	for _, f := range fills {
		value := f.amount.Mul(f.price)
		o.filledAmount = o.filledAmount.Add(f.amount)
		o.filledTotal = o.filledTotal.Add(value)
		o.left = o.left.Sub(f.amount)
		if o.side == "buy" {
			fee := f.amount.Mul(s.feeRate).Round(8)
			o.fee = o.fee.Add(fee)
			if role == "maker" {
				release := f.amount.Mul(o.price)
				a.locked[p.Quote] = a.locked[p.Quote].Sub(release)
				a.avail[p.Quote] = a.avail[p.Quote].Add(release)
				o.heldAmt = o.heldAmt.Sub(release)
			}
			a.avail[p.Quote] = a.avail[p.Quote].Sub(value)
			a.avail[p.Base] = a.avail[p.Base].Add(f.amount.Sub(fee))
		} else {
			fee := value.Mul(s.feeRate).Round(8)
			o.fee = o.fee.Add(fee)
			if role == "maker" {
				a.locked[p.Base] = a.locked[p.Base].Sub(f.amount)
				a.avail[p.Base] = a.avail[p.Base].Add(f.amount)
				o.heldAmt = o.heldAmt.Sub(f.amount)
			}
			a.avail[p.Base] = a.avail[p.Base].Sub(f.amount)
			a.avail[p.Quote] = a.avail[p.Quote].Add(value.Sub(fee))
		}
		o.updated = now
	}
	if o.filledAmount.IsPositive() {
		o.avgDealPrice, o.hasAvg = o.filledTotal.DivRound(o.filledAmount, p.Precision+4), true
	}
	s.recordTrades(a, o, fills, role, now)
}

// release gives back what a resting order still holds: a limit order's
// heldAmt, a held market order's whole amount (HoldOrders). The caller
// holds s.mu.
func release(a *account, o *order) {
	held := o.heldAmt
	if o.typ != "limit" {
		held = o.amount
	}
	a.locked[o.lockedIn] = a.locked[o.lockedIn].Sub(held)
	a.avail[o.lockedIn] = a.avail[o.lockedIn].Add(held)
	o.heldAmt = decimal.Zero
}

// findOrder finds an account's order by "t-" text (open orders only, as
// Gate) or numeric id, on the pair. The caller holds s.mu.
func findOrder(a *account, id, pairID string) (*order, *apiError) {
	if strings.HasPrefix(id, "t-") {
		for i := len(a.orders) - 1; i >= 0; i-- {
			if o := a.orders[i]; o.text == id && o.status == "open" && o.pair.ID == pairID {
				return o, nil
			}
		}
		return nil, errorf(http.StatusNotFound, "CLIENT_ID_NOT_FOUND", "Order with client ID %s not found", id)
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, invalidParam("order_id", id)
	}
	for _, o := range a.orders {
		if o.id == n && o.pair.ID == pairID {
			return o, nil
		}
	}
	return nil, errorf(http.StatusNotFound, "ORDER_NOT_FOUND", "Order not found")
}

// handleCancelOrder is DELETE /spot/orders/{order_id}?currency_pair=: an
// open order is cancelled and its funds released; a finished one is
// ORDER_CLOSED or ORDER_CANCELLED.
func (s *Server) handleCancelOrder(c *call) (any, *apiError) {
	pairID := c.query.Get("currency_pair")
	if pairID == "" {
		return nil, missingParam("currency_pair")
	}
	if _, e := s.pairParam(pairID); e != nil {
		return nil, e
	}
	mode := c.query.Get("action_mode")
	if mode != "" && mode != "ACK" && mode != "RESULT" && mode != "FULL" {
		return nil, invalidParam("action_mode", mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, e := findOrder(c.acc, c.id, pairID)
	if e != nil {
		return nil, e
	}
	switch o.status {
	case "closed":
		return nil, errorf(http.StatusBadRequest, "ORDER_CLOSED", "Order %d has been filled", o.id)
	case "cancelled":
		return nil, errorf(http.StatusBadRequest, "ORDER_CANCELLED", "Order %d has been cancelled", o.id)
	}
	release(c.acc, o)
	o.status, o.finishAs, o.updated = "cancelled", "cancelled", c.now
	s.pushOrder(c.acc, o, "finish")
	return o.json(mode), nil
}

// handleOpenOrders is GET /spot/open_orders: the open orders grouped by
// pair, newest first, limit per pair.
func (s *Server) handleOpenOrders(c *call) (any, *apiError) {
	page, e := intParam(c.query, "page", 1)
	if e != nil || page < 1 {
		return nil, invalidParam("page", c.query.Get("page"))
	}
	limit, e := intParam(c.query, "limit", 100)
	if e != nil || limit < 1 || limit > 100 {
		return nil, invalidParam("limit", c.query.Get("limit"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byPair := map[string][]*order{}
	var pairs []string
	for i := len(c.acc.orders) - 1; i >= 0; i-- {
		o := c.acc.orders[i]
		if o.status != "open" {
			continue
		}
		if _, ok := byPair[o.pair.ID]; !ok {
			pairs = append(pairs, o.pair.ID)
		}
		byPair[o.pair.ID] = append(byPair[o.pair.ID], o)
	}
	slices.Sort(pairs)
	out := []map[string]any{}
	for _, id := range pairs {
		os := byPair[id]
		start := min(int((page-1)*limit), len(os))
		end := min(start+int(limit), len(os))
		if start == end {
			continue
		}
		list := make([]map[string]any, 0, end-start)
		for _, o := range os[start:end] {
			list = append(list, o.json("FULL"))
		}
		out = append(out, map[string]any{"currency_pair": id, "total": len(os), "orders": list})
	}
	return out, nil
}

// handleMyTrades is GET /spot/my_trades: the account's trades, newest
// first, of one pair (or all), optionally of one order.
func (s *Server) handleMyTrades(c *call) (any, *apiError) {
	q := c.query
	pairID := q.Get("currency_pair")
	if pairID != "" {
		if _, e := s.pairParam(pairID); e != nil {
			return nil, e
		}
	}
	orderID := q.Get("order_id")
	if orderID != "" && pairID == "" {
		return nil, missingParam("currency_pair")
	}
	limit, e := intParam(q, "limit", 100)
	if e != nil || limit < 1 || limit > 1000 {
		return nil, invalidParam("limit", q.Get("limit"))
	}
	page, e := intParam(q, "page", 1)
	if e != nil || page < 1 {
		return nil, invalidParam("page", q.Get("page"))
	}
	from, e1 := intParam(q, "from", c.now.Add(-7*24*time.Hour).Unix())
	to, e2 := intParam(q, "to", c.now.Unix()+1)
	if e1 != nil || e2 != nil {
		return nil, invalidParam("from", q.Get("from"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []*trade
	for i := len(c.acc.trades) - 1; i >= 0; i-- {
		t := c.acc.trades[i]
		switch {
		case pairID != "" && t.order.pair.ID != pairID,
			orderID != "" && strconv.FormatInt(t.order.id, 10) != orderID,
			t.created.Unix() < from || t.created.Unix() > to:
			continue
		}
		match = append(match, t)
	}
	start := min(int((page-1)*limit), len(match))
	end := min(start+int(limit), len(match))
	out := make([]map[string]any, 0, end-start)
	for _, t := range match[start:end] {
		out = append(out, t.json())
	}
	return out, nil
}

// FillOrder fills the rest of an account's open limit order at its price,
// as the maker (the market came to it), found by its text ("t-...") or
// its numeric id.
func (s *Server) FillOrder(apiKey, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return fmt.Errorf("gateiofake: no account %s", apiKey)
	}
	for i := len(a.orders) - 1; i >= 0; i-- {
		o := a.orders[i]
		if o.typ != "limit" || o.status != "open" || (o.text != id && strconv.FormatInt(o.id, 10) != id) {
			continue
		}
		now := s.serverTime()
		s.fill(a, o, []bookLevel{{price: o.price, amount: o.left}}, "maker", now)
		release(a, o) // rounding leftovers, if any
		o.status, o.finishAs = "closed", "filled"
		s.pushOrder(a, o, "finish")
		return nil
	}
	return fmt.Errorf("gateiofake: no open limit order %s", id)
}

// OutsideOrder is a limit order placed on Gate's site or apps, not
// through the API: it carries an origin tag as its text ("3" is the web
// site) and rests without matching.
type OutsideOrder struct {
	Pair   string // BTC_USDT
	Side   string // buy or sell
	Amount string
	Price  string
	// Text is the origin tag; default "3" (web).
	Text string
}

// PlaceOutside places an order as if from outside the API and returns
// its numeric id. It holds funds like any resting order.
func (s *Server) PlaceOutside(apiKey string, oo OutsideOrder) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	p := s.pairs[oo.Pair]
	if a == nil || p == nil {
		return "", fmt.Errorf("gateiofake: no account %s or pair %s", apiKey, oo.Pair)
	}
	amount, err1 := decimal.NewFromString(oo.Amount)
	price, err2 := decimal.NewFromString(oo.Price)
	if err1 != nil || err2 != nil || (oo.Side != "buy" && oo.Side != "sell") {
		return "", fmt.Errorf("gateiofake: bad outside order %+v", oo)
	}
	text := oo.Text
	if text == "" {
		text = "3"
	}
	o, e := s.placeLimit(a, p, oo.Side, "gtc", text, amount, price, s.serverTime(), false)
	if e != nil {
		return "", e
	}
	return strconv.FormatInt(o.id, 10), nil
}

// OpenOrderCount returns how many open orders the account has.
func (s *Server) OpenOrderCount(apiKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[apiKey]; a != nil {
		for _, o := range a.orders {
			if o.status == "open" {
				n++
			}
		}
	}
	return n
}

// Locked returns an account's amount of a currency held by open orders.
func (s *Server) Locked(apiKey, currency string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.locked[strings.ToUpper(currency)]
	}
	return decimal.Zero
}
