package okxfake

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// order is one order of an account.
type order struct {
	id, clOrdID, instID, side, ordType, tgtCcy string
	px, sz                                     decimal.Decimal
	accFill, quoteFill, fee                    decimal.Decimal
	feeCcy                                     string
	state, cancelSource                        string
	cTime, uTime                               time.Time
	// lockCcy and locked are what a resting order holds.
	lockCcy string
	locked  decimal.Decimal
}

// fill is one trade of an order.
type fill struct {
	tradeID, billID, ordID, clOrdID, instID, side string
	px, sz, fee                                   decimal.Decimal
	feeCcy                                        string
	maker                                         bool
	ts                                            time.Time
}

// clOrdIDPattern is what OKX takes as a clOrdId: 1 to 32 letters and
// digits (OKX API v5 docs, "Place order").
var clOrdIDPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)

func (o *order) open() bool { return o.state == "live" || o.state == "partially_filled" }

// json writes an order as GET /trade/order does.
func (o *order) json() map[string]any {
	avg := ""
	if o.accFill.IsPositive() {
		avg = o.quoteFill.Div(o.accFill).Round(8).String()
	}
	px := ""
	if o.ordType != "market" {
		px = o.px.String()
	}
	fee := "0"
	if !o.fee.IsZero() {
		fee = o.fee.Neg().String()
	}
	return map[string]any{
		"instType": "SPOT", "instId": o.instID, "ordId": o.id, "clOrdId": o.clOrdID, "tag": "",
		"px": px, "sz": o.sz.String(), "ordType": o.ordType, "side": o.side, "tdMode": "cash", "tgtCcy": o.tgtCcy,
		"accFillSz": o.accFill.String(), "avgPx": avg, "fillPx": avg, "state": o.state,
		"fee": fee, "feeCcy": o.feeCcy, "rebate": "0", "rebateCcy": o.feeCcy,
		"cancelSource": o.cancelSource, "cancelSourceReason": "", "category": "normal",
		"cTime": ms(o.cTime), "uTime": ms(o.uTime),
	}
}

// placeBody is POST /trade/order as the fake reads it.
type placeBody = SentOrder

func (s *Server) handlePlaceOrder(c *call) (any, *apiError) {
	var b placeBody
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	s.mu.Lock()
	c.acc.sent = append(c.acc.sent, b)
	s.mu.Unlock()
	for _, f := range []struct{ name, v string }{{"instId", b.InstID}, {"tdMode", b.TdMode}, {"side", b.Side}, {"ordType", b.OrdType}, {"sz", b.Sz}} {
		if f.v == "" {
			return nil, emptyParam(f.name)
		}
	}
	in, e := s.instParam(b.InstID)
	if e != nil {
		return nil, itemError(e.code, b.ClOrdID, "%s", e.msg)
	}
	if b.ClOrdID != "" && !clOrdIDPattern.MatchString(b.ClOrdID) {
		return nil, itemError("51000", b.ClOrdID, "Parameter clOrdId error")
	}
	if b.TdMode != "cash" {
		return nil, itemError("51010", b.ClOrdID, "The current account mode does not support this API interface. ")
	}
	if b.Side != "buy" && b.Side != "sell" {
		return nil, itemError("51000", b.ClOrdID, "Parameter side error")
	}
	if in.State != "live" {
		return nil, itemError("51001", b.ClOrdID, "Instrument ID doesn't exist.")
	}
	sz, err := decimal.NewFromString(b.Sz)
	if err != nil || !sz.IsPositive() {
		return nil, itemError("51000", b.ClOrdID, "Parameter sz error")
	}
	var px decimal.Decimal
	switch b.OrdType {
	case "market":
		switch b.TgtCcy {
		case "":
			b.TgtCcy = map[string]string{"buy": "quote_ccy", "sell": "base_ccy"}[b.Side]
		case "base_ccy", "quote_ccy":
		default:
			return nil, itemError("51000", b.ClOrdID, "Parameter tgtCcy error")
		}
	case "limit", "post_only", "ioc", "fok":
		if b.Px == "" {
			return nil, itemError("51204", b.ClOrdID, "The price for the limit order can not be empty.")
		}
		if px, err = decimal.NewFromString(b.Px); err != nil || !px.IsPositive() || !px.Mod(in.tick).IsZero() {
			return nil, itemError("51000", b.ClOrdID, "Parameter px error")
		}
		if b.TgtCcy == "quote_ccy" {
			return nil, itemError("51000", b.ClOrdID, "Parameter tgtCcy error")
		}
		b.TgtCcy = ""
	default:
		return nil, itemError("51000", b.ClOrdID, "Parameter ordType error")
	}
	if b.TgtCcy != "quote_ccy" {
		if !sz.Mod(in.lot).IsZero() {
			return nil, itemError("51121", b.ClOrdID, "Order quantity must be a multiple of the lot size.")
		}
		if sz.LessThan(in.minSz) {
			return nil, itemError("51020", b.ClOrdID, "Your order should meet or exceed the minimum order amount.")
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	if b.ClOrdID != "" {
		for _, o := range a.orders {
			if o.clOrdID == b.ClOrdID && o.open() {
				return nil, itemError("51016", b.ClOrdID, "Client order ID already exists.")
			}
		}
	}
	o := &order{id: s.newID(), clOrdID: b.ClOrdID, instID: in.InstID, side: b.Side, ordType: b.OrdType, tgtCcy: b.TgtCcy,
		px: px, sz: sz, state: "live", cTime: c.now, uTime: c.now}
	if e := s.execute(a, in, o, c.now); e != nil {
		return nil, e
	}
	a.orders = append(a.orders, o)
	s.pushOrder(a, o)
	return []map[string]string{{"ordId": o.id, "clOrdId": o.clOrdID, "tag": "", "ts": ms(c.now), "sCode": "0", "sMsg": "Order placed"}}, nil
}

// execute matches a new order against the book and moves balances: a
// market order takes the book in its tgtCcy; a limit order takes the
// levels up to its price, then IOC cancels the rest (cancelSource 14), a
// FOK that cannot fill completely is canceled untouched (13), a
// post_only that would trade is canceled untouched (31), and the rest of
// a limit order rests with its funds frozen. A refusal changes nothing.
// Call with s.mu held.
func (s *Server) execute(a *account, in *Instrument, o *order, now time.Time) *apiError {
	bk := s.books[in.InstID]
	levels := bk.asks
	if o.side == "sell" {
		levels = bk.bids
	}
	crosses := func(p decimal.Decimal) bool {
		if o.ordType == "market" {
			return true
		}
		if o.side == "buy" {
			return p.LessThanOrEqual(o.px)
		}
		return p.GreaterThanOrEqual(o.px)
	}
	// The takes: base and quote per level, up to the order's size.
	type take struct{ px, base decimal.Decimal }
	var takes []take
	leftBase, leftQuote := o.sz, decimal.Zero
	if o.tgtCcy == "quote_ccy" {
		leftBase, leftQuote = decimal.Zero, o.sz
	}
	for _, l := range levels {
		if !crosses(l.price) {
			break
		}
		var base decimal.Decimal
		if o.tgtCcy == "quote_ccy" {
			if !leftQuote.IsPositive() {
				break
			}
			base = decimal.Min(l.size, leftQuote.Div(l.price).RoundDown(-in.lot.Exponent()))
			leftQuote = leftQuote.Sub(base.Mul(l.price))
			if base.LessThan(l.size) {
				leftQuote = decimal.Zero
			}
		} else {
			if !leftBase.IsPositive() {
				break
			}
			base = decimal.Min(l.size, leftBase)
			leftBase = leftBase.Sub(base)
		}
		if base.IsPositive() {
			takes = append(takes, take{l.price, base})
		}
	}
	filledBase, filledQuote := decimal.Zero, decimal.Zero
	for _, t := range takes {
		filledBase = filledBase.Add(t.base)
		filledQuote = filledQuote.Add(t.base.Mul(t.px))
	}
	restBase := decimal.Zero
	if o.ordType != "market" {
		restBase = o.sz.Sub(filledBase)
	}
	if o.tgtCcy == "quote_ccy" && filledBase.LessThan(in.minSz) {
		return itemError("51020", o.clOrdID, "Your order should meet or exceed the minimum order amount.")
	}
	switch {
	case o.ordType == "post_only" && len(takes) > 0:
		o.state, o.cancelSource = "canceled", "31"
		return nil
	case o.ordType == "fok" && restBase.IsPositive():
		o.state, o.cancelSource = "canceled", "13"
		return nil
	}
	base, quote := in.BaseCcy, in.QuoteCcy
	need, needCcy := filledQuote, quote
	if o.side == "sell" {
		need, needCcy = filledBase, base
	}
	// A resting remainder freezes its funds.
	rests := restBase.IsPositive() && (o.ordType == "limit" || o.ordType == "post_only")
	lock := decimal.Zero
	if rests {
		lock = restBase.Mul(o.px)
		if o.side == "sell" {
			lock = restBase
		}
	}
	if a.avail[needCcy].LessThan(need.Add(lock)) {
		return itemError("51008", o.clOrdID, "Order failed. Insufficient %s balance in account", needCcy)
	}
	if len(takes) > 0 {
		recv, recvCcy := filledBase, base
		if o.side == "sell" {
			recv, recvCcy = filledQuote, quote
		}
		fee := recv.Mul(s.taker).Round(12)
		a.avail[needCcy] = a.avail[needCcy].Sub(need)
		a.avail[recvCcy] = a.avail[recvCcy].Add(recv.Sub(fee))
		o.accFill, o.quoteFill, o.fee, o.feeCcy = filledBase, filledQuote, fee, recvCcy
		for _, t := range takes {
			tf := fee.Mul(t.base).Div(filledBase).Round(12)
			if o.side == "sell" {
				tf = fee.Mul(t.base.Mul(t.px)).Div(filledQuote).Round(12)
			}
			a.fills = append(a.fills, &fill{tradeID: s.newID(), billID: s.newID(), ordID: o.id, clOrdID: o.clOrdID, instID: o.instID,
				side: o.side, px: t.px, sz: t.base, fee: tf, feeCcy: recvCcy, ts: now})
		}
	}
	if o.feeCcy == "" {
		o.feeCcy = map[string]string{"buy": base, "sell": quote}[o.side]
	}
	switch {
	case rests:
		o.lockCcy, o.locked = needCcy, lock
		a.avail[needCcy] = a.avail[needCcy].Sub(lock)
		a.locked[needCcy] = a.locked[needCcy].Add(lock)
		if filledBase.IsPositive() {
			o.state = "partially_filled"
		}
	case o.ordType == "market" && (o.tgtCcy == "quote_ccy" && leftQuote.IsPositive() || o.tgtCcy != "quote_ccy" && leftBase.IsPositive()) && filledBase.IsZero():
		o.state = "canceled"
	case o.ordType == "ioc" && restBase.IsPositive():
		o.state, o.cancelSource = "canceled", "14"
	default:
		o.state = "filled"
	}
	o.uTime = now
	return nil
}

// findOrder finds an order by ordId, or by clOrdId (the latest). Call
// with s.mu held.
func findOrder(a *account, instID, ordID, clOrdID string) *order {
	for i := len(a.orders) - 1; i >= 0; i-- {
		o := a.orders[i]
		if o.instID != instID {
			continue
		}
		if (ordID != "" && o.id == ordID) || (ordID == "" && clOrdID != "" && o.clOrdID == clOrdID) {
			return o
		}
	}
	return nil
}

func (s *Server) handleGetOrder(c *call) (any, *apiError) {
	in, e := s.instParam(c.query.Get("instId"))
	if e != nil {
		return nil, e
	}
	ordID, clOrdID := c.query.Get("ordId"), c.query.Get("clOrdId")
	if ordID == "" && clOrdID == "" {
		return nil, fail(http.StatusOK, "51003", "Either client order ID or order ID is required.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := findOrder(c.acc, in.InstID, ordID, clOrdID)
	if o == nil {
		return nil, fail(http.StatusOK, "51603", "Order does not exist.")
	}
	return []map[string]any{o.json()}, nil
}

func (s *Server) handleCancelOrder(c *call) (any, *apiError) {
	var b struct {
		InstID  string `json:"instId"`
		OrdID   string `json:"ordId"`
		ClOrdID string `json:"clOrdId"`
	}
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	in, e := s.instParam(b.InstID)
	if e != nil {
		return nil, e
	}
	if b.OrdID == "" && b.ClOrdID == "" {
		return nil, itemError("51407", b.ClOrdID, "Either order ID or client order ID is required.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := findOrder(c.acc, in.InstID, b.OrdID, b.ClOrdID)
	if o == nil || !o.open() {
		return nil, itemError("51400", b.ClOrdID, "Order cancellation failed as the order has been filled, canceled or does not exist.")
	}
	s.cancel(c.acc, o, "1", c.now)
	return []map[string]string{{"ordId": o.id, "clOrdId": o.clOrdID, "ts": ms(c.now), "sCode": "0", "sMsg": ""}}, nil
}

// cancel ends an open order and releases its funds. Call with s.mu held.
func (s *Server) cancel(a *account, o *order, source string, now time.Time) {
	a.locked[o.lockCcy] = a.locked[o.lockCcy].Sub(o.locked)
	a.avail[o.lockCcy] = a.avail[o.lockCcy].Add(o.locked)
	o.locked = decimal.Zero
	o.state, o.cancelSource, o.uTime = "canceled", source, now
	s.pushOrder(a, o)
}

// listOrders answers orders-pending and orders-history: the account's
// orders that match, newest first (by ordId), older than the after
// cursor, at most limit.
func (s *Server) listOrders(c *call, pending bool) (any, *apiError) {
	q := c.query
	typ := q.Get("instType")
	if !pending && typ == "" {
		return nil, emptyParam("instType")
	}
	if typ != "" && typ != "SPOT" {
		return []any{}, nil
	}
	limit, e := limitParam(q, 100, 100)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for i := len(c.acc.orders) - 1; i >= 0 && len(out) < limit; i-- {
		o := c.acc.orders[i]
		if o.open() != pending || (q.Get("instId") != "" && o.instID != q.Get("instId")) {
			continue
		}
		if after := q.Get("after"); after != "" && compareIDs(o.id, after) >= 0 {
			continue
		}
		if st := q.Get("state"); st != "" && o.state != st {
			continue
		}
		out = append(out, o.json())
	}
	return out, nil
}

func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

func (s *Server) handleOrdersPending(c *call) (any, *apiError) { return s.listOrders(c, true) }
func (s *Server) handleOrdersHistory(c *call) (any, *apiError) { return s.listOrders(c, false) }

func (s *Server) handleFills(c *call) (any, *apiError) {
	q := c.query
	if typ := q.Get("instType"); typ != "" && typ != "SPOT" {
		return []any{}, nil
	}
	limit, e := limitParam(q, 100, 100)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for i := len(c.acc.fills) - 1; i >= 0 && len(out) < limit; i-- {
		f := c.acc.fills[i]
		if (q.Get("instId") != "" && f.instID != q.Get("instId")) || (q.Get("ordId") != "" && f.ordID != q.Get("ordId")) {
			continue
		}
		if after := q.Get("after"); after != "" && compareIDs(f.billID, after) >= 0 {
			continue
		}
		exec, sub := "T", "1"
		if f.maker {
			exec = "M"
		}
		if f.side == "sell" {
			sub = "2"
		}
		out = append(out, map[string]any{
			"instType": "SPOT", "instId": f.instID, "tradeId": f.tradeID, "ordId": f.ordID, "clOrdId": f.clOrdID,
			"billId": f.billID, "tag": "", "fillPx": f.px.String(), "fillSz": f.sz.String(), "side": f.side,
			"posSide": "net", "execType": exec, "feeCcy": f.feeCcy, "fee": f.fee.Neg().String(), "subType": sub,
			"ts": ms(f.ts), "fillTime": ms(f.ts),
		})
	}
	return out, nil
}

// FillOrder fills an open limit order of the account completely at its
// price, as a trade against it would (maker fee), found by its clOrdId
// (or, failing that, its ordId), and pushes the change to the account's
// order stream.
func (s *Server) FillOrder(apiKey, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return fmt.Errorf("okxfake: no account %s", apiKey)
	}
	var o *order
	for i := len(a.orders) - 1; i >= 0 && o == nil; i-- {
		if x := a.orders[i]; x.open() && (x.clOrdID == id || x.id == id) {
			o = x
		}
	}
	if o == nil {
		return fmt.Errorf("okxfake: no open order %s", id)
	}
	in := s.insts[o.instID]
	now := s.serverTime()
	left := o.sz.Sub(o.accFill)
	quote := left.Mul(o.px)
	base, q := in.BaseCcy, in.QuoteCcy
	a.locked[o.lockCcy] = a.locked[o.lockCcy].Sub(o.locked)
	o.locked = decimal.Zero
	recv, recvCcy := left, base
	if o.side == "sell" {
		recv, recvCcy = quote, q
	}
	fee := recv.Mul(s.maker).Round(12)
	a.avail[recvCcy] = a.avail[recvCcy].Add(recv.Sub(fee))
	o.accFill, o.quoteFill = o.accFill.Add(left), o.quoteFill.Add(quote)
	o.fee, o.feeCcy = o.fee.Add(fee), recvCcy
	o.state, o.uTime = "filled", now
	a.fills = append(a.fills, &fill{tradeID: s.newID(), billID: s.newID(), ordID: o.id, clOrdID: o.clOrdID, instID: o.instID,
		side: o.side, px: o.px, sz: left, fee: fee, feeCcy: recvCcy, maker: true, ts: now})
	s.pushOrder(a, o)
	return nil
}

// OutsideOrder is a limit order placed on OKX's site or apps: no clOrdId.
type OutsideOrder struct {
	InstID, Side, Sz, Px string
}

// PlaceOutside places a resting limit order without a clOrdId, as OKX's
// own apps do, and returns its ordId.
func (s *Server) PlaceOutside(apiKey string, oo OutsideOrder) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, in := s.accounts[apiKey], s.insts[oo.InstID]
	if a == nil || in == nil {
		return "", fmt.Errorf("okxfake: no account %s or instrument %s", apiKey, oo.InstID)
	}
	now := s.serverTime()
	o := &order{id: s.newID(), instID: in.InstID, side: oo.Side, ordType: "limit", px: decimal.RequireFromString(oo.Px),
		sz: decimal.RequireFromString(oo.Sz), state: "live", cTime: now, uTime: now}
	if e := s.execute(a, in, o, now); e != nil {
		return "", e
	}
	a.orders = append(a.orders, o)
	s.pushOrder(a, o)
	return o.id, nil
}

// OpenOrderCount is the account's open orders.
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
