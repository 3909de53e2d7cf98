package krakenfake

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// Limit orders, cancels and trades: AddOrder ordertype=limit (timeinforce
// GTC, IOC or GTD, oflags=post), CancelOrder by txid or cl_ord_id and
// TradesHistory, with a simple matching model. A limit order takes the
// fake's book up to its price at once; what is left rests (GTC, GTD) or is
// canceled (IOC). Resting orders do not join the book: they fill only
// through FillOrder. A post-only order that would take is accepted and
// then canceled by the engine with reason "Post only order", as Kraken
// does (the order has a txid and shows as canceled).

// Kraken's time-in-force values for AddOrder (docs.kraken.com "Add Order",
// field timeinforce): GTC (default), IOC, GTD (needs expiretm). There is
// no FOK on Kraken Spot's REST AddOrder.
var timesInForce = []string{"GTC", "IOC", "GTD"}

// Reasons Kraken gives for orders its engine canceled.
const (
	reasonPostOnly     = "Post only order"
	reasonUserCanceled = "User requested"
	reasonIOC          = "Immediate or cancel"
)

// trade is one fill of an order, as TradesHistory returns it.
type trade struct {
	ID    string
	Order *order
	Time  decimal.Decimal
	Price decimal.Decimal
	Vol   decimal.Decimal
	Cost  decimal.Decimal
	Fee   decimal.Decimal
	Maker bool
}

// addTrade records a fill of o.
func (s *Server) addTrade(a *account, o *order, price, vol, cost, fee decimal.Decimal, maker bool) {
	s.tradeSeq++
	n := s.tradeSeq
	a.trades = append(a.trades, &trade{
		ID:    fmt.Sprintf("T%05d-%05d-K%05d", n%100000, (n*7919)%100000, (n*104729)%100000),
		Order: o, Time: unixFrac(s.now()), Price: price, Vol: vol, Cost: cost, Fee: fee, Maker: maker,
	})
}

// addLimitOrder checks and places a limit order (or only checks it, with
// validate=true).
func (s *Server) addLimitOrder(a *account, p *Pair, typ string, f url.Values) (any, error) {
	if err := knownArgs(f, "nonce", "pair", "type", "ordertype", "volume", "price", "timeinforce", "expiretm", "starttm",
		"oflags", "cl_ord_id", "userref", "validate", "deadline", "stptype"); err != nil {
		return nil, err
	}
	vol, err := decimal.NewFromString(f.Get("volume"))
	if err != nil || vol.Sign() <= 0 || strings.ContainsAny(f.Get("volume"), "eE") || !vol.Equal(vol.Truncate(p.LotDecimals)) {
		return nil, invalidArg("volume")
	}
	price, err := decimal.NewFromString(f.Get("price"))
	if err != nil || price.Sign() <= 0 || strings.ContainsAny(f.Get("price"), "eE+-#%") {
		return nil, invalidArg("price")
	}
	tick := decimal.New(1, -p.PairDecimals)
	if !price.Mod(tick).IsZero() {
		return nil, invalidArg("price")
	}
	tif := f.Get("timeinforce")
	if tif == "" {
		tif = "GTC"
	}
	if !slices.Contains(timesInForce, tif) {
		return nil, invalidArg("timeinforce")
	}
	if tif == "GTD" && f.Get("expiretm") == "" {
		return nil, invalidArg("expiretm")
	}
	var flags []string
	if v := f.Get("oflags"); v != "" {
		flags = strings.Split(v, ",")
	}
	for _, fl := range flags {
		if !slices.Contains(allowedOflags, fl) || fl == "viqc" {
			return nil, invalidArg("oflags")
		}
	}
	if slices.Contains(flags, "fcib") && slices.Contains(flags, "fciq") {
		return nil, invalidArg("oflags")
	}
	post := slices.Contains(flags, "post")
	if post && tif == "IOC" {
		return nil, invalidArg("oflags")
	}
	cl := f.Get("cl_ord_id")
	if err := checkClOrdID(a, cl, f); err != nil {
		return nil, err
	}
	switch p.Status {
	case "", "online", "limit_only":
	case "post_only":
		if !post {
			return nil, krakenError("EService:Market in post_only mode")
		}
	default:
		return nil, krakenError("EService:Market in " + p.Status + " mode")
	}
	ordermin, costmin := decimal.RequireFromString(p.OrderMin), decimal.RequireFromString(p.CostMin)
	if vol.LessThan(ordermin) {
		return nil, errOrderMinimum
	}
	if vol.Mul(price).LessThan(costmin) {
		return nil, errCostMinimum
	}
	fee := vol.Mul(price).Mul(s.feeRate).Round(p.CostDecimals)
	if !s.affordable(a, p, typ, vol, vol.Mul(price), fee, true) {
		return nil, errInsufficient
	}
	descr := map[string]any{"order": describeLimit(typ, vol, price, p)}
	if f.Get("validate") == "true" {
		a.validated++
		return map[string]any{"descr": descr}, nil
	}
	if !slices.Contains(flags, "fciq") && !slices.Contains(flags, "fcib") {
		flags = append(flags, "fciq")
	}
	s.seq++
	o := &order{
		Txid:    fmt.Sprintf("O%05d-%05d-K%05d", s.seq%100000, (s.seq*7919)%100000, (s.seq*104729)%100000),
		ClOrdID: cl, Pair: p, Type: typ, OrderType: "limit", Price: price, TimeInForce: tif,
		Volume: vol, Oflags: flags, Status: "open", OpenTm: unixFrac(s.now()),
	}
	a.orders = append(a.orders, o)
	s.matchLimit(a, o, post)
	return map[string]any{"descr": descr, "txid": []string{o.Txid}}, nil
}

func describeLimit(typ string, vol, price decimal.Decimal, p *Pair) string {
	return fmt.Sprintf("%s %s %s @ limit %s", typ, vol.StringFixed(8), p.Altname, price.StringFixed(p.PairDecimals))
}

// crossing returns the levels of the book a limit order at price would
// take, best first.
func (s *Server) crossing(o *order) []Level {
	b := s.books[o.Pair.Key]
	var out []Level
	if o.Type == "buy" {
		for _, l := range b.asks {
			if l.Price.LessThanOrEqual(o.Price) {
				out = append(out, l)
			}
		}
	} else {
		for _, l := range b.bids {
			if l.Price.GreaterThanOrEqual(o.Price) {
				out = append(out, l)
			}
		}
	}
	return out
}

// matchLimit takes what a new limit order crosses, then rests the rest or
// cancels it (IOC, or a post-only order that would take).
func (s *Server) matchLimit(a *account, o *order, post bool) {
	levels := s.crossing(o)
	if post && len(levels) > 0 {
		o.Status, o.Reason, o.CloseTm = "canceled", reasonPostOnly, unixFrac(s.now())
		return
	}
	remaining := o.Volume
	for _, l := range levels {
		if remaining.Sign() <= 0 {
			break
		}
		s.execute(a, o, l.Price, decimal.Min(remaining, l.Volume), false)
		remaining = o.Volume.Sub(o.VolExec)
	}
	switch {
	case remaining.Sign() <= 0:
		o.Status, o.CloseTm = "closed", unixFrac(s.now())
	case o.TimeInForce == "IOC":
		o.Status, o.Reason, o.CloseTm = "canceled", reasonIOC, unixFrac(s.now())
	default:
		s.reserve(a, o, remaining, true)
	}
}

// execute fills vol of o at price, moving balances and recording a trade.
func (s *Server) execute(a *account, o *order, price, vol decimal.Decimal, maker bool) {
	p := o.Pair
	cost := vol.Mul(price).Round(p.CostDecimals)
	fee := cost.Mul(s.feeRate).Round(p.CostDecimals)
	if o.Type == "buy" {
		a.balances[p.Quote] = a.balances[p.Quote].Sub(cost).Sub(fee)
		a.balances[p.Base] = a.balances[p.Base].Add(vol)
	} else {
		a.balances[p.Base] = a.balances[p.Base].Sub(vol)
		a.balances[p.Quote] = a.balances[p.Quote].Add(cost).Sub(fee)
	}
	o.VolExec, o.Cost, o.Fee = o.VolExec.Add(vol), o.Cost.Add(cost), o.Fee.Add(fee)
	o.AvgPrice = o.Cost.DivRound(o.VolExec, p.PairDecimals+2)
	s.addTrade(a, o, price, vol, cost, fee, maker)
}

// reserve reserves (or with add false releases) what a resting order of vol
// needs: quote for a buy, base for a sell (hold_trade in BalanceEx).
func (s *Server) reserve(a *account, o *order, vol decimal.Decimal, add bool) {
	id, amount := o.Pair.Quote, vol.Mul(o.Price)
	if o.Type == "sell" {
		id, amount = o.Pair.Base, vol
	}
	if !add {
		amount = amount.Neg()
	}
	a.holds[id] = a.holds[id].Add(amount)
}

// cancelOrder cancels one open order by txid or cl_ord_id (exactly one of
// them); an unknown or closed order is EOrder:Invalid order.
func (s *Server) cancelOrder(a *account, f url.Values) (any, error) {
	if err := knownArgs(f, "nonce", "txid", "cl_ord_id"); err != nil {
		return nil, err
	}
	txid, cl := f.Get("txid"), f.Get("cl_ord_id")
	if (txid == "") == (cl == "") {
		return nil, invalidArg("txid")
	}
	if _, err := strconv.Atoi(txid); txid != "" && err == nil {
		return nil, invalidArg("txid") // userref cancels are not modelled
	}
	n := 0
	for _, o := range a.orders {
		if o.Status != "open" && o.Status != "pending" {
			continue
		}
		if (txid != "" && o.Txid == txid) || (cl != "" && o.ClOrdID == cl) {
			s.closeResting(a, o, "canceled", reasonUserCanceled)
			n++
		}
	}
	if n == 0 {
		return nil, errInvalidOrder
	}
	return map[string]any{"count": n}, nil
}

// closeResting ends an open order and releases what it held.
func (s *Server) closeResting(a *account, o *order, status, reason string) {
	if o.OrderType == "limit" {
		s.reserve(a, o, o.Volume.Sub(o.VolExec), false)
	}
	o.Status, o.Reason, o.CloseTm = status, reason, unixFrac(s.now())
}

// tradesHistory lists the account's trades newest first, 50 a page from
// ofs, with the total count.
func (s *Server) tradesHistory(a *account, f url.Values) (any, error) {
	if err := knownArgs(f, "nonce", "type", "trades", "start", "end", "ofs", "consolidate_taker", "ledgers"); err != nil {
		return nil, err
	}
	ofs := 0
	if v := f.Get("ofs"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, invalidArg("ofs")
		}
		ofs = n
	}
	out := map[string]any{}
	for i := len(a.trades) - 1 - ofs; i >= 0 && i > len(a.trades)-1-ofs-50; i-- {
		t := a.trades[i]
		p := t.Order.Pair
		out[t.ID] = map[string]any{
			"ordertxid": t.Order.Txid, "postxid": "TKH2SE-M7IF5-CFI7LT", "pair": p.Key,
			"time": json.Number(t.Time.String()), "type": t.Order.Type, "ordertype": t.Order.OrderType,
			"price": t.Price.StringFixed(p.PairDecimals), "cost": t.Cost.StringFixed(p.CostDecimals),
			"fee": t.Fee.StringFixed(p.CostDecimals), "vol": t.Vol.StringFixed(8), "margin": "0.00000",
			"leverage": "0", "misc": "", "maker": t.Maker, "trade_id": 1000 + i,
		}
	}
	return map[string]any{"trades": out, "count": len(a.trades)}, nil
}

// FillOrder fills what is left of key's open limit order (by txid or
// cl_ord_id) at its limit price, as a maker, as if the market had come to
// it.
func (s *Server) FillOrder(key, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[key]
	if a == nil {
		return fmt.Errorf("krakenfake: no account %s", key)
	}
	for _, o := range a.orders {
		if o.OrderType == "limit" && o.Status == "open" && (o.Txid == id || o.ClOrdID == id) {
			left := o.Volume.Sub(o.VolExec)
			s.reserve(a, o, left, false)
			s.execute(a, o, o.Price, left, true)
			o.Status, o.CloseTm = "closed", unixFrac(s.now())
			s.syncExecutions(a)
			return nil
		}
	}
	return fmt.Errorf("krakenfake: no open limit order %s", id)
}

// PlaceOutside rests a limit order on key's account as if placed on
// Kraken's website: no cl_ord_id. It returns the txid.
func (s *Server) PlaceOutside(key, pairKey, typ, volume, price string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[key]
	p := s.pairByName(pairKey)
	if a == nil || p == nil {
		return "", fmt.Errorf("krakenfake: no account %s or pair %s", key, pairKey)
	}
	s.seq++
	o := &order{
		Txid: fmt.Sprintf("O%05d-%05d-W%05d", s.seq%100000, (s.seq*7919)%100000, (s.seq*104729)%100000),
		Pair: p, Type: typ, OrderType: "limit", Price: decimal.RequireFromString(price), TimeInForce: "GTC",
		Volume: decimal.RequireFromString(volume), Oflags: []string{"fciq"}, Status: "open", OpenTm: unixFrac(s.now()),
	}
	a.orders = append(a.orders, o)
	s.reserve(a, o, o.Volume, true)
	s.syncExecutions(a)
	return o.Txid, nil
}

// Orders returns how many orders key holds (validate=true places none).
func (s *Server) Orders(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[key]; a != nil {
		return len(a.orders)
	}
	return 0
}

// Validated returns how many AddOrder calls of key with validate=true
// passed Kraken's checks.
func (s *Server) Validated(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[key]; a != nil {
		return a.validated
	}
	return 0
}

// LastOrder returns the pair key, type, volume and price of key's newest
// order (zero values when there is none).
func (s *Server) LastOrder(key string) (pair, typ, volume, price string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[key]
	if a == nil || len(a.orders) == 0 {
		return "", "", "", ""
	}
	o := a.orders[len(a.orders)-1]
	return o.Pair.Key, o.Type, o.Volume.String(), o.Price.String()
}

// descrJSON is an order's descr object.
func descrJSON(o *order) map[string]any {
	d := map[string]any{"pair": o.Pair.Altname, "type": o.Type, "ordertype": "market", "price": "0", "price2": "0",
		"leverage": "none", "order": describe(o.Type, o.Volume, o.Pair), "close": ""}
	if o.OrderType == "limit" {
		d["ordertype"] = "limit"
		d["price"] = o.Price.StringFixed(o.Pair.PairDecimals)
		d["order"] = describeLimit(o.Type, o.Volume, o.Price, o.Pair)
	}
	return d
}

// knownArgs refuses a parameter the call does not document, naming it as
// Kraken names a bad argument.
func knownArgs(f url.Values, names ...string) error {
	for k := range f {
		if !slices.Contains(names, k) {
			return invalidArg(k)
		}
	}
	return nil
}
