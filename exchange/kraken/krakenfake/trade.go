package krakenfake

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// order is an order as the fake keeps it.
type order struct {
	Txid    string
	ClOrdID string
	Pair    *Pair
	Type    string // buy, sell
	Volume  decimal.Decimal
	Oflags  []string
	Status  string
	Reason  string
	// OrderType is market or limit; Price and TimeInForce are a limit
	// order's.
	OrderType   string
	Price       decimal.Decimal
	TimeInForce string
	OpenTm      decimal.Decimal
	CloseTm     decimal.Decimal
	VolExec     decimal.Decimal
	Cost        decimal.Decimal
	Fee         decimal.Decimal
	AvgPrice    decimal.Decimal
}

var (
	longUUID  = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	shortUUID = regexp.MustCompile(`^[0-9a-fA-F]{32}$`)
	freeText  = regexp.MustCompile(`^[\x21-\x7e]{1,18}$`)
)

// validClOrdID checks Kraken's cl_ord_id formats: a long UUID, a short
// (dashless) UUID, or up to 18 printable ASCII characters.
func validClOrdID(s string) bool {
	return longUUID.MatchString(s) || shortUUID.MatchString(s) || freeText.MatchString(s)
}

var allowedOflags = []string{"post", "fcib", "fciq", "nompp", "viqc"}

// addOrder places a market order and fills it against the book.
func (s *Server) addOrder(a *account, f url.Values) (any, error) {
	p := s.pairByName(f.Get("pair"))
	if p == nil {
		return nil, errUnknownPair
	}
	typ := f.Get("type")
	if typ != "buy" && typ != "sell" {
		return nil, invalidArg("type")
	}
	if f.Get("ordertype") == "limit" {
		return s.addLimitOrder(a, p, typ, f)
	}
	if f.Get("ordertype") != "market" {
		return nil, invalidArg("ordertype")
	}
	vol, err := decimal.NewFromString(f.Get("volume"))
	if err != nil || vol.Sign() <= 0 || strings.ContainsAny(f.Get("volume"), "eE") {
		return nil, invalidArg("volume")
	}
	var flags []string
	if v := f.Get("oflags"); v != "" {
		flags = strings.Split(v, ",")
	}
	for _, fl := range flags {
		if !slices.Contains(allowedOflags, fl) {
			return nil, invalidArg("oflags")
		}
	}
	if slices.Contains(flags, "fcib") && slices.Contains(flags, "fciq") {
		return nil, invalidArg("oflags")
	}
	if slices.Contains(flags, "post") {
		return nil, invalidArg("oflags")
	}
	viqc := slices.Contains(flags, "viqc")
	if viqc && typ == "sell" {
		return nil, invalidArg("viqc")
	}
	places := p.LotDecimals
	if viqc {
		places = p.CostDecimals
	}
	if !vol.Equal(vol.Truncate(places)) {
		return nil, invalidArg("volume")
	}
	cl := f.Get("cl_ord_id")
	if err := checkClOrdID(a, cl, f); err != nil {
		return nil, err
	}
	if p.Status != "" && p.Status != "online" {
		return nil, krakenError("EService:Market in " + p.Status + " mode")
	}
	ordermin, costmin := decimal.RequireFromString(p.OrderMin), decimal.RequireFromString(p.CostMin)
	b := s.books[p.Key]
	levels := b.asks
	if typ == "sell" {
		levels = b.bids
	}
	var base, cost decimal.Decimal
	if viqc {
		if vol.LessThan(costmin) {
			return nil, errCostMinimum
		}
		base, cost = walkQuote(levels, vol, p.LotDecimals)
		if base.LessThan(ordermin) {
			return nil, errOrderMinimum
		}
	} else {
		if vol.LessThan(ordermin) {
			return nil, errOrderMinimum
		}
		base, cost = walkBase(levels, vol)
		if cost.LessThan(costmin) {
			return nil, errCostMinimum
		}
	}
	// Fees are charged in quote currency whatever fcib/fciq say, as
	// Kraken's own examples and user reports show; the flags are echoed
	// (with Kraken's documented default added).
	feeInQuote := true
	if !slices.Contains(flags, "fciq") && !slices.Contains(flags, "fcib") {
		if typ == "buy" {
			flags = append(flags, "fciq")
		} else {
			flags = append(flags, "fcib")
		}
	}
	fee := s.fee(p, base, cost, feeInQuote)
	if !s.affordable(a, p, typ, base, cost, fee, feeInQuote) {
		return nil, errInsufficient
	}
	if f.Get("validate") == "true" {
		a.validated++
		return map[string]any{"descr": map[string]any{"order": describe(typ, vol, p)}}, nil
	}
	s.seq++
	now := unixFrac(s.now())
	o := &order{
		Txid:    fmt.Sprintf("O%05d-%05d-K%05d", s.seq%100000, (s.seq*7919)%100000, (s.seq*104729)%100000),
		ClOrdID: cl, Pair: p, Type: typ, OrderType: "market", Volume: vol, Oflags: flags,
		Status: "open", OpenTm: now,
	}
	a.orders = append(a.orders, o)
	if !s.hold {
		s.fill(a, o)
	}
	return map[string]any{
		"descr": map[string]any{"order": describe(typ, vol, p)},
		"txid":  []string{o.Txid},
	}, nil
}

func describe(typ string, vol decimal.Decimal, p *Pair) string {
	return fmt.Sprintf("%s %s %s @ market", typ, vol.StringFixed(8), p.Altname)
}

// checkClOrdID checks a cl_ord_id as Kraken does: one of its formats, not
// with userref, unique among the account's open orders.
func checkClOrdID(a *account, cl string, f url.Values) error {
	if cl == "" {
		return nil
	}
	if !validClOrdID(cl) || f.Get("userref") != "" {
		return invalidArg("cl_ord_id")
	}
	for _, o := range a.orders {
		if o.ClOrdID == cl && (o.Status == "open" || o.Status == "pending") {
			return invalidArg("cl_ord_id")
		}
	}
	return nil
}

// walkBase fills base volume vol against levels: the base filled and its
// quote cost.
func walkBase(levels []Level, vol decimal.Decimal) (base, cost decimal.Decimal) {
	remaining := vol
	for _, l := range levels {
		if remaining.Sign() <= 0 {
			break
		}
		take := decimal.Min(remaining, l.Volume)
		base = base.Add(take)
		cost = cost.Add(take.Mul(l.Price))
		remaining = remaining.Sub(take)
	}
	return base, cost
}

// walkQuote spends quote q against levels: the base bought (rounded down
// to lot decimals) and the quote spent.
func walkQuote(levels []Level, q decimal.Decimal, lot int32) (base, cost decimal.Decimal) {
	remaining := q
	for _, l := range levels {
		if remaining.Sign() <= 0 {
			break
		}
		levelCost := l.Volume.Mul(l.Price)
		if remaining.GreaterThanOrEqual(levelCost) {
			base = base.Add(l.Volume)
			cost = cost.Add(levelCost)
			remaining = remaining.Sub(levelCost)
			continue
		}
		part, _ := remaining.QuoRem(l.Price, lot)
		base = base.Add(part)
		cost = cost.Add(part.Mul(l.Price))
		remaining = decimal.Zero
	}
	return base, cost
}

func (s *Server) fee(p *Pair, base, cost decimal.Decimal, inQuote bool) decimal.Decimal {
	if inQuote {
		return cost.Mul(s.feeRate).Round(p.CostDecimals)
	}
	return base.Mul(s.feeRate).Round(p.LotDecimals)
}

func (s *Server) available(a *account, id string) decimal.Decimal {
	return a.balances[id].Sub(a.holds[id])
}

func (s *Server) affordable(a *account, p *Pair, typ string, base, cost, fee decimal.Decimal, feeInQuote bool) bool {
	if typ == "buy" {
		need := cost
		if feeInQuote {
			need = need.Add(fee)
		}
		return s.available(a, p.Quote).GreaterThanOrEqual(need)
	}
	need := base
	if !feeInQuote {
		need = need.Add(fee)
	}
	return s.available(a, p.Base).GreaterThanOrEqual(need)
}

// fill executes an open order against the book and closes it; an order
// the account can no longer pay for is canceled.
func (s *Server) fill(a *account, o *order) {
	p := o.Pair
	b := s.books[p.Key]
	levels := b.asks
	if o.Type == "sell" {
		levels = b.bids
	}
	viqc := slices.Contains(o.Oflags, "viqc")
	var base, cost decimal.Decimal
	if viqc {
		base, cost = walkQuote(levels, o.Volume, p.LotDecimals)
	} else {
		base, cost = walkBase(levels, o.Volume)
	}
	cost = cost.Round(p.CostDecimals)
	feeInQuote := true
	fee := s.fee(p, base, cost, feeInQuote)
	o.CloseTm = unixFrac(s.now())
	if !s.affordable(a, p, o.Type, base, cost, fee, feeInQuote) {
		o.Status, o.Reason = "canceled", "Insufficient funds"
		return
	}
	if o.Type == "buy" {
		a.balances[p.Quote] = a.balances[p.Quote].Sub(cost)
		a.balances[p.Base] = a.balances[p.Base].Add(base)
	} else {
		a.balances[p.Base] = a.balances[p.Base].Sub(base)
		a.balances[p.Quote] = a.balances[p.Quote].Add(cost)
	}
	if feeInQuote {
		a.balances[p.Quote] = a.balances[p.Quote].Sub(fee)
	} else {
		a.balances[p.Base] = a.balances[p.Base].Sub(fee)
	}
	o.VolExec, o.Cost, o.Fee = base, cost, fee
	if base.Sign() > 0 {
		o.AvgPrice = cost.DivRound(base, p.PairDecimals+2)
		s.addTrade(a, o, o.AvgPrice, base, cost, fee, false)
	}
	o.Status = "closed"
	full := (viqc && cost.Equal(o.Volume)) || (!viqc && base.Equal(o.Volume))
	if !full && !viqc {
		o.Status, o.Reason = "canceled", "Insufficient liquidity"
	}
}

// orderJSON is an order in Kraken's QueryOrders shape.
func orderJSON(o *order) map[string]any {
	p := o.Pair
	var reason any
	if o.Reason != "" {
		reason = o.Reason
	}
	out := map[string]any{
		"refid":     nil,
		"userref":   0,
		"status":    o.Status,
		"reason":    reason,
		"opentm":    json.Number(o.OpenTm.String()),
		"closetm":   json.Number("0"),
		"starttm":   0,
		"expiretm":  0,
		"descr":     descrJSON(o),
		"vol":       o.Volume.StringFixed(8),
		"vol_exec":  o.VolExec.StringFixed(8),
		"cost":      o.Cost.StringFixed(p.CostDecimals),
		"fee":       o.Fee.StringFixed(max(p.CostDecimals, p.LotDecimals)),
		"price":     o.AvgPrice.StringFixed(p.PairDecimals),
		"stopprice": "0.00000", "limitprice": "0.00000",
		"misc":   "",
		"oflags": strings.Join(o.Oflags, ","),
	}
	if o.Status != "open" && o.Status != "pending" {
		out["closetm"] = json.Number(o.CloseTm.String())
	}
	if o.ClOrdID != "" {
		out["cl_ord_id"] = o.ClOrdID
	}
	return out
}

func (s *Server) queryOrders(a *account, f url.Values) (any, error) {
	ids := splitList(f.Get("txid"))
	if len(ids) == 0 || len(ids) > 50 {
		return nil, invalidArg("txid")
	}
	out := map[string]any{}
	for _, id := range ids {
		var found *order
		for _, o := range a.orders {
			if o.Txid == id {
				found = o
			}
		}
		if found == nil {
			return nil, errInvalidOrder
		}
		out[id] = orderJSON(found)
	}
	return out, nil
}

func (s *Server) openOrders(a *account, f url.Values) (any, error) {
	cl := f.Get("cl_ord_id")
	open := map[string]any{}
	for _, o := range a.orders {
		if (o.Status == "open" || o.Status == "pending") && (cl == "" || o.ClOrdID == cl) {
			open[o.Txid] = orderJSON(o)
		}
	}
	return map[string]any{"open": open}, nil
}

func (s *Server) closedOrders(a *account, f url.Values) (any, error) {
	cl := f.Get("cl_ord_id")
	var rows []*order
	for i := len(a.orders) - 1; i >= 0; i-- {
		o := a.orders[i]
		if o.Status != "open" && o.Status != "pending" && (cl == "" || o.ClOrdID == cl) {
			rows = append(rows, o)
		}
	}
	ofs := 0
	if v := f.Get("ofs"); v != "" {
		if _, err := fmt.Sscan(v, &ofs); err != nil || ofs < 0 {
			return nil, invalidArg("ofs")
		}
	}
	closed := map[string]any{}
	for i := ofs; i < len(rows) && i < ofs+50; i++ {
		closed[rows[i].Txid] = orderJSON(rows[i])
	}
	return map[string]any{"closed": closed, "count": len(rows)}, nil
}

func (s *Server) balance(a *account, _ url.Values) (any, error) {
	out := map[string]string{}
	for id, v := range a.balances {
		out[id] = v.StringFixed(s.assetDecimals(id))
	}
	return out, nil
}

func (s *Server) balanceEx(a *account, _ url.Values) (any, error) {
	out := map[string]any{}
	for id, v := range a.balances {
		dec := s.assetDecimals(id)
		out[id] = map[string]string{"balance": v.StringFixed(dec), "hold_trade": a.holds[id].StringFixed(dec)}
	}
	return out, nil
}
