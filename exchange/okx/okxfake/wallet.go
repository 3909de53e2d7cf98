package okxfake

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// chain is one currency on one chain, as GET /asset/currencies writes it.
type chain struct {
	Ccy      string `json:"ccy"`
	Chain    string `json:"chain"`
	CanDep   bool   `json:"canDep"`
	CanWd    bool   `json:"canWd"`
	MinWd    string `json:"minWd"`
	MaxWd    string `json:"maxWd"`
	WdTickSz string `json:"wdTickSz"`
	Fee      string `json:"fee"`
	MinFee   string `json:"minFee"`
	MaxFee   string `json:"maxFee"`
	NeedTag  bool   `json:"needTag"`
	MainNet  bool   `json:"mainNet"`
	// addr and tag are the account's deposit address on the chain.
	addr, tag string
}

// chains are the fake's currencies and chains (constructed; BTC's values
// are those of OKX's docs example).
var chains = []chain{
	{Ccy: "BTC", Chain: "BTC-Bitcoin", CanDep: true, CanWd: true, MinWd: "0.0005", MaxWd: "500", WdTickSz: "8", Fee: "0.00005", MainNet: true, addr: "39XNxK1Ryqgg3Bsyn6HzoqV4Xji25pNkv6"},
	{Ccy: "ETH", Chain: "ETH-ERC20", CanDep: true, CanWd: true, MinWd: "0.01", MaxWd: "5000", WdTickSz: "8", Fee: "0.002", MainNet: true, addr: "0x66d0edc2e63b6b992381ee668fbcb01f20ae0428"},
	{Ccy: "USDT", Chain: "USDT-TRC20", CanDep: true, CanWd: true, MinWd: "2", MaxWd: "1000000", WdTickSz: "6", Fee: "1", MainNet: false, addr: "TN4hGjVXMzyBDaAqYDGkbHc8nK9b4N1aGz"},
	{Ccy: "USDT", Chain: "USDT-ERC20", CanDep: true, CanWd: true, MinWd: "10", MaxWd: "1000000", WdTickSz: "6", Fee: "3", MainNet: false, addr: "0x66d0edc2e63b6b992381ee668fbcb01f20ae0428"},
	{Ccy: "XRP", Chain: "XRP-Ripple", CanDep: true, CanWd: true, MinWd: "20", MaxWd: "1000000", WdTickSz: "6", Fee: "0.2", NeedTag: true, MainNet: true, addr: "rLdinLq5CJood9wdjY9ZCdgycK8KGevkUj", tag: "104223"},
	{Ccy: "SOL", Chain: "SOL-Solana", CanDep: true, CanWd: true, MinWd: "0.1", MaxWd: "100000", WdTickSz: "8", Fee: "0.008", MainNet: true, addr: "5Hd1cNpXYjXyJvBHsZhyZkTrQcyZ4e1Ep1Hkp9bvTg2B"},
}

func findChain(ccy, name string) *chain {
	for i := range chains {
		if chains[i].Ccy == ccy && chains[i].Chain == name {
			return &chains[i]
		}
	}
	return nil
}

// ccyFilter reads a comma-separated ccy parameter; empty matches all.
func ccyFilter(v string) func(string) bool {
	if v == "" {
		return func(string) bool { return true }
	}
	set := strings.Split(v, ",")
	return func(c string) bool { return slices.Contains(set, c) }
}

func (s *Server) handleBalance(c *call) (any, *apiError) {
	match := ccyFilter(c.query.Get("ccy"))
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	var ccys []string
	for cur, v := range a.avail {
		if match(cur) && (v.IsPositive() || a.locked[cur].IsPositive()) {
			ccys = append(ccys, cur)
		}
	}
	for cur, v := range a.locked {
		if match(cur) && v.IsPositive() && !slices.Contains(ccys, cur) {
			ccys = append(ccys, cur)
		}
	}
	slices.Sort(ccys)
	details := []map[string]string{}
	for _, cur := range ccys {
		av, fr := a.avail[cur], a.locked[cur]
		details = append(details, map[string]string{
			"ccy": cur, "availBal": av.String(), "frozenBal": fr.String(), "ordFrozen": fr.String(),
			"cashBal": av.Add(fr).String(), "eq": av.Add(fr).String(), "availEq": "", "upl": "", "liab": "",
			"uTime": ms(c.now),
		})
	}
	return []map[string]any{{"totalEq": "0", "uTime": ms(c.now), "details": details}}, nil
}

func (s *Server) handleFundingBalances(c *call) (any, *apiError) {
	match := ccyFilter(c.query.Get("ccy"))
	s.mu.Lock()
	defer s.mu.Unlock()
	var ccys []string
	for cur, v := range c.acc.funding {
		if match(cur) && v.IsPositive() {
			ccys = append(ccys, cur)
		}
	}
	slices.Sort(ccys)
	out := []map[string]string{}
	for _, cur := range ccys {
		v := c.acc.funding[cur].String()
		out = append(out, map[string]string{"ccy": cur, "bal": v, "availBal": v, "frozenBal": "0"})
	}
	return out, nil
}

func (s *Server) handleCurrencies(c *call) (any, *apiError) {
	match := ccyFilter(c.query.Get("ccy"))
	out := []chain{}
	for _, ch := range chains {
		if match(ch.Ccy) {
			ch.MinFee, ch.MaxFee = ch.Fee, ch.Fee
			out = append(out, ch)
		}
	}
	return out, nil
}

func (s *Server) handleDepositAddress(c *call) (any, *apiError) {
	ccy := c.query.Get("ccy")
	if ccy == "" {
		return nil, emptyParam("ccy")
	}
	out := []map[string]any{}
	for _, ch := range chains {
		if ch.Ccy != ccy {
			continue
		}
		a := map[string]any{"ccy": ch.Ccy, "chain": ch.Chain, "addr": ch.addr, "to": "6", "selected": true, "ctAddr": "", "verifiedName": ""}
		if ch.tag != "" {
			a["tag"] = ch.tag
		}
		out = append(out, a)
	}
	return out, nil
}

func (s *Server) handleDeposits(c *call) (any, *apiError) {
	q := c.query
	limit, e := limitParam(q, 100, 100)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	deps := slices.Clone(c.acc.deposits)
	s.mu.Unlock()
	slices.SortFunc(deps, func(a, b Deposit) int { return b.Time.Compare(a.Time) })
	out := []map[string]string{}
	for _, d := range deps {
		if len(out) >= limit {
			break
		}
		if (q.Get("ccy") != "" && d.Ccy != q.Get("ccy")) || (q.Get("state") != "" && d.State != q.Get("state")) {
			continue
		}
		out = append(out, map[string]string{"ccy": d.Ccy, "chain": d.Chain, "amt": d.Amt, "from": "", "areaCodeFrom": "",
			"to": d.To, "txId": d.TxID, "ts": ms(d.Time), "state": d.State, "depId": d.ID, "fromWdId": "", "actualDepBlkConfirm": "2"})
	}
	return out, nil
}

// withdrawal is one withdrawal of an account.
type withdrawal struct {
	id, clientID, ccy, chain, to, tag, txID, state string
	amt, fee                                       decimal.Decimal
	ts                                             time.Time
}

func (w *withdrawal) json() map[string]any {
	out := map[string]any{"ccy": w.ccy, "chain": w.chain, "amt": w.amt.String(), "fee": w.fee.String(), "feeCcy": w.ccy,
		"to": w.to, "txId": w.txID, "state": w.state, "ts": ms(w.ts), "wdId": w.id, "clientId": w.clientID,
		"from": "", "areaCodeFrom": "", "nonTradableAsset": false, "note": ""}
	if w.tag != "" {
		out["tag"] = w.tag
	}
	return out
}

func (s *Server) handleWithdraw(c *call) (any, *apiError) {
	var b struct {
		Ccy      string `json:"ccy"`
		Amt      string `json:"amt"`
		Dest     string `json:"dest"`
		ToAddr   string `json:"toAddr"`
		Chain    string `json:"chain"`
		ClientID string `json:"clientId"`
	}
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	for _, f := range []struct{ name, v string }{{"ccy", b.Ccy}, {"amt", b.Amt}, {"dest", b.Dest}, {"toAddr", b.ToAddr}} {
		if f.v == "" {
			return nil, emptyParam(f.name)
		}
	}
	if b.Dest != "4" {
		return nil, paramError("dest")
	}
	if b.ClientID != "" && !clOrdIDPattern.MatchString(b.ClientID) {
		return nil, paramError("clientId")
	}
	ch := findChain(b.Ccy, b.Chain)
	if ch == nil || !ch.CanWd {
		return nil, fail(http.StatusOK, "58200", "Withdrawal from %s to %s is currently not supported for this currency.", b.Ccy, b.Chain)
	}
	amt, err := decimal.NewFromString(b.Amt)
	if err != nil || !amt.IsPositive() {
		return nil, paramError("amt")
	}
	prec := int32(len(ch.WdTickSz)) // one or two digits
	if p, err := decimal.NewFromString(ch.WdTickSz); err == nil {
		prec = int32(p.IntPart())
	}
	if !amt.Equal(amt.RoundDown(prec)) {
		return nil, paramError("amt")
	}
	if amt.LessThan(decimal.RequireFromString(ch.MinWd)) {
		return nil, fail(http.StatusOK, "58206", "Withdrawal amount is lower than the lower limit")
	}
	addr, tag, hasTag := strings.Cut(b.ToAddr, ":")
	if ch.NeedTag && (!hasTag || tag == "") {
		return nil, fail(http.StatusOK, "58221", "Missing label of withdrawal address.")
	}
	if addr == "" {
		return nil, fail(http.StatusOK, "58222", "Invalid withdrawal address")
	}
	fee := decimal.RequireFromString(ch.Fee)
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	if a.funding[b.Ccy].LessThan(amt.Add(fee)) {
		return nil, fail(http.StatusOK, "58350", "Insufficient balance")
	}
	a.funding[b.Ccy] = a.funding[b.Ccy].Sub(amt.Add(fee))
	w := &withdrawal{id: s.newID(), clientID: b.ClientID, ccy: b.Ccy, chain: b.Chain, to: addr, tag: tag, amt: amt, fee: fee,
		state: "2", txID: "0x" + s.newID(), ts: c.now}
	if a.PendingWithdrawals {
		w.state, w.txID = "0", ""
	}
	if !hasTag {
		w.tag = ""
	}
	a.withdrawals = append(a.withdrawals, w)
	return []map[string]string{{"amt": b.Amt, "wdId": w.id, "ccy": b.Ccy, "clientId": b.ClientID, "chain": b.Chain}}, nil
}

func (s *Server) handleWithdrawals(c *call) (any, *apiError) {
	q := c.query
	limit, e := limitParam(q, 100, 100)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for i := len(c.acc.withdrawals) - 1; i >= 0 && len(out) < limit; i-- {
		w := c.acc.withdrawals[i]
		if (q.Get("ccy") != "" && w.ccy != q.Get("ccy")) || (q.Get("wdId") != "" && w.id != q.Get("wdId")) ||
			(q.Get("clientId") != "" && w.clientID != q.Get("clientId")) || (q.Get("state") != "" && w.state != q.Get("state")) {
			continue
		}
		out = append(out, w.json())
	}
	return out, nil
}

// transfer is one transfer between an account's trading and funding
// accounts; bill is the funding account's record of it.
type transfer struct {
	id, clientID, ccy, from, to string
	amt                         decimal.Decimal
}

type bill struct {
	id, ccy, clientID, typ string
	balChg                 decimal.Decimal
	ts                     time.Time
}

func (t *transfer) json() map[string]string {
	return map[string]string{"transId": t.id, "clientId": t.clientID, "ccy": t.ccy, "amt": t.amt.String(), "type": "0",
		"from": t.from, "to": t.to, "subAcct": "", "instId": "", "toInstId": "", "state": "success"}
}

func (s *Server) handleTransfer(c *call) (any, *apiError) {
	var b struct {
		Ccy      string `json:"ccy"`
		Amt      string `json:"amt"`
		From     string `json:"from"`
		To       string `json:"to"`
		Type     string `json:"type"`
		ClientID string `json:"clientId"`
	}
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	for _, f := range []struct{ name, v string }{{"ccy", b.Ccy}, {"amt", b.Amt}, {"from", b.From}, {"to", b.To}} {
		if f.v == "" {
			return nil, emptyParam(f.name)
		}
	}
	if b.Type != "" && b.Type != "0" {
		return nil, paramError("type")
	}
	if (b.From != "6" && b.From != "18") || (b.To != "6" && b.To != "18") || b.From == b.To {
		return nil, paramError("from")
	}
	if b.ClientID != "" && !clOrdIDPattern.MatchString(b.ClientID) {
		return nil, paramError("clientId")
	}
	amt, err := decimal.NewFromString(b.Amt)
	if err != nil || !amt.IsPositive() {
		return nil, paramError("amt")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	src, dst := a.avail, a.funding
	typ, chg := billFromTrading, amt
	if b.From == "6" {
		src, dst = a.funding, a.avail
		typ, chg = billToTrading, amt.Neg()
	}
	if src[b.Ccy].LessThan(amt) {
		return nil, fail(http.StatusOK, "58350", "Insufficient balance")
	}
	src[b.Ccy] = src[b.Ccy].Sub(amt)
	dst[b.Ccy] = dst[b.Ccy].Add(amt)
	t := &transfer{id: s.newID(), clientID: b.ClientID, ccy: b.Ccy, from: b.From, to: b.To, amt: amt}
	a.transfers = append(a.transfers, t)
	a.bills = append(a.bills, &bill{id: s.newID(), ccy: b.Ccy, clientID: b.ClientID, typ: typ, balChg: chg, ts: c.now})
	return []map[string]string{{"transId": t.id, "ccy": b.Ccy, "clientId": b.ClientID, "from": b.From, "amt": b.Amt, "to": b.To}}, nil
}

// Funding bill types of transfers (OKX API v5 docs, "Asset bills
// details"): 130 from the trading account, 131 to it.
const (
	billFromTrading = "130"
	billToTrading   = "131"
)

func (s *Server) handleTransferState(c *call) (any, *apiError) {
	id, cid := c.query.Get("transId"), c.query.Get("clientId")
	if id == "" && cid == "" {
		return nil, fail(http.StatusBadRequest, "50015", "Either parameter transId or clientId is required.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(c.acc.transfers) - 1; i >= 0; i-- {
		t := c.acc.transfers[i]
		if (id != "" && t.id == id) || (id == "" && t.clientID == cid) {
			return []map[string]string{t.json()}, nil
		}
	}
	return []any{}, nil
}

func (s *Server) handleBills(c *call) (any, *apiError) {
	q := c.query
	limit, e := limitParam(q, 100, 100)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]string{}
	for i := len(c.acc.bills) - 1; i >= 0 && len(out) < limit; i-- {
		b := c.acc.bills[i]
		if (q.Get("ccy") != "" && b.ccy != q.Get("ccy")) || (q.Get("type") != "" && b.typ != q.Get("type")) ||
			(q.Get("clientId") != "" && b.clientID != q.Get("clientId")) {
			continue
		}
		bal := c.acc.funding[b.ccy].String()
		out = append(out, map[string]string{"billId": b.id, "ccy": b.ccy, "clientId": b.clientID, "balChg": b.balChg.String(),
			"bal": bal, "type": b.typ, "ts": ms(b.ts), "notes": ""})
	}
	return out, nil
}
