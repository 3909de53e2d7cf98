package gateiofake

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// chain is one network a currency moves on in the fake.
type chain struct {
	name string
	// fee is the fixed withdrawal fee; decimals the withdrawal precision.
	fee      string
	decimals int32
	// memo says deposits need a payment id (tag or memo).
	memo    string
	address *regexp.Regexp
}

var (
	evmAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	trxAddress = regexp.MustCompile(`^T[1-9A-HJ-NP-Za-km-z]{33}$`)
	btcAddress = regexp.MustCompile(`^(bc1[02-9ac-hj-np-z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34})$`)
	solAddress = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{32,44}$`)
	xrpAddress = regexp.MustCompile(`^r[1-9A-HJ-NP-Za-km-z]{24,34}$`)
)

// currency is one currency of the fake's wallet.
type currency struct {
	chains []chain
	// min and max are the smallest and largest withdrawal (fee included).
	min, max string
}

var currencies = map[string]currency{
	"BTC":  {chains: []chain{{name: "BTC", fee: "0.0002", decimals: 8, address: btcAddress}}, min: "0.0005", max: "100"},
	"ETH":  {chains: []chain{{name: "ETH", fee: "0.002", decimals: 8, address: evmAddress}, {name: "ARBEVM", fee: "0.0002", decimals: 8, address: evmAddress}}, min: "0.003", max: "1000"},
	"USDT": {chains: []chain{{name: "ETH", fee: "4.15", decimals: 6, address: evmAddress}, {name: "TRX", fee: "1", decimals: 6, address: trxAddress}, {name: "BSC", fee: "0.3", decimals: 6, address: evmAddress}}, min: "2", max: "1000000"},
	"SOL":  {chains: []chain{{name: "SOL", fee: "0.01", decimals: 8, address: solAddress}}, min: "0.05", max: "100000"},
	"XRP":  {chains: []chain{{name: "XRP", fee: "0.25", decimals: 6, memo: "Tag", address: xrpAddress}}, min: "1", max: "1000000"},
	"BNB":  {chains: []chain{{name: "BSC", fee: "0.0005", decimals: 8, address: evmAddress}}, min: "0.01", max: "10000"},
	"GT":   {chains: []chain{{name: "GTEVM", fee: "0.01", decimals: 8, address: evmAddress}}, min: "0.1", max: "100000"},
	"DOGE": {chains: []chain{{name: "DOGE", fee: "5", decimals: 8, address: regexp.MustCompile(`^D[1-9A-HJ-NP-Za-km-z]{33}$`)}}, min: "20", max: "10000000"},
}

func (cur currency) chain(name string) (chain, bool) {
	for _, c := range cur.chains {
		if c.name == name {
			return c, true
		}
	}
	return chain{}, false
}

// withdrawal is one withdrawal of an account.
type withdrawal struct {
	id, orderID, currency, chain, address, memo, txid, blockNumber, status string
	amount, fee                                                            decimal.Decimal
	time                                                                   time.Time
}

func (w *withdrawal) json() map[string]any {
	return map[string]any{
		"id":                w.id,
		"txid":              w.txid,
		"block_number":      w.blockNumber,
		"withdraw_order_id": w.orderID,
		"timestamp":         strconv.FormatInt(w.time.Unix(), 10),
		"amount":            decimalText(w.amount),
		"fee":               decimalText(w.fee),
		"currency":          w.currency,
		"address":           w.address,
		"fail_reason":       "",
		"timestamp2":        strconv.FormatInt(w.time.Unix(), 10),
		"memo":              w.memo,
		"status":            w.status,
		"chain":             w.chain,
		"type":              "withdrawal",
	}
}

func (s *Server) handleAccounts(c *call) (any, *apiError) {
	want := strings.ToUpper(c.query.Get("currency"))
	s.mu.Lock()
	defer s.mu.Unlock()
	names := map[string]bool{}
	for k := range c.acc.avail {
		names[k] = true
	}
	for k := range c.acc.locked {
		names[k] = true
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		if want == "" || k == want {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := []map[string]any{}
	for i, k := range keys {
		out = append(out, map[string]any{
			"currency":     k,
			"available":    decimalText(c.acc.avail[k]),
			"locked":       decimalText(c.acc.locked[k]),
			"update_id":    100 + i,
			"refresh_time": c.now.UnixMilli(),
		})
	}
	return out, nil
}

// currencyParam reads a required currency parameter.
func currencyParam(v string) (string, currency, *apiError) {
	if v == "" {
		return "", currency{}, missingParam("currency")
	}
	name := strings.ToUpper(v)
	cur, ok := currencies[name]
	if !ok {
		return "", currency{}, errorf(http.StatusBadRequest, "INVALID_CURRENCY", "Invalid currency %s", v)
	}
	return name, cur, nil
}

func (s *Server) handleChains(c *call) (any, *apiError) {
	v := c.query.Get("currency")
	if v == "" {
		return nil, missingParam("currency")
	}
	out := []map[string]any{}
	for _, ch := range currencies[strings.ToUpper(v)].chains {
		out = append(out, map[string]any{
			"chain": ch.name, "name_cn": ch.name, "name_en": ch.name, "contract_address": "",
			"is_disabled": 0, "is_deposit_disabled": 0, "is_withdraw_disabled": 0,
			"decimal": strconv.Itoa(int(ch.decimals)),
		})
	}
	return out, nil
}

// depositAddress is deterministic per key, currency and chain, in the
// chain's format.
func depositAddress(key, cur string, ch chain) (address, tag string) {
	h := sha256.Sum256([]byte(key + "|" + cur + "|" + ch.name))
	const b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	b58s := func(n int) string {
		out := make([]byte, n)
		for i := range out {
			out[i] = b58[int(h[i%len(h)]+byte(i*7))%len(b58)]
		}
		return string(out)
	}
	switch ch.name {
	case "ETH", "BSC", "ARBEVM", "GTEVM":
		address = "0x" + hex.EncodeToString(h[:20])
	case "TRX":
		address = "T" + b58s(33)
	case "BTC":
		address = "bc1q" + strings.Map(func(r rune) rune {
			if strings.ContainsRune("1bio", r) {
				return 'q'
			}
			return r
		}, hex.EncodeToString(h[:19]))
	case "SOL":
		address = b58s(44)
	case "XRP":
		address = "r" + b58s(33)
	case "DOGE":
		address = "D" + b58s(33)
	default:
		address = hex.EncodeToString(h[:20])
	}
	if ch.memo != "" {
		tag = strconv.FormatUint(uint64(h[20])<<16|uint64(h[21])<<8|uint64(h[22]), 10)
	}
	return address, tag
}

func (s *Server) handleDepositAddress(c *call) (any, *apiError) {
	name, cur, e := currencyParam(c.query.Get("currency"))
	if e != nil {
		return nil, e
	}
	multi := []map[string]any{}
	for _, ch := range cur.chains {
		addr, tag := depositAddress(c.acc.APIKey, name, ch)
		multi = append(multi, map[string]any{
			"chain": ch.name, "address": addr, "payment_id": tag, "payment_name": ch.memo, "obtain_failed": 0,
		})
	}
	first, _ := depositAddress(c.acc.APIKey, name, cur.chains[0])
	return map[string]any{"currency": name, "address": first, "multichain_addresses": multi, "min_deposit_amount": "0"}, nil
}

// timeRange reads from/to (Unix seconds; default the last 7 days, at
// most 30 days apart).
func timeRange(c *call) (from, to int64, e *apiError) {
	if to, e = intParam(c.query, "to", c.now.Unix()); e != nil {
		return 0, 0, e
	}
	if from, e = intParam(c.query, "from", to-7*24*3600); e != nil {
		return 0, 0, e
	}
	if to < from || to-from > 30*24*3600 {
		return 0, 0, errorf(http.StatusBadRequest, "INVALID_PARAM_VALUE", "Query time range cannot exceed 30 days")
	}
	return from, to, nil
}

func (s *Server) handleDeposits(c *call) (any, *apiError) {
	from, to, e := timeRange(c)
	if e != nil {
		return nil, e
	}
	limit, e := intParam(c.query, "limit", 100)
	if e != nil || limit < 1 || limit > 500 {
		return nil, invalidParam("limit", c.query.Get("limit"))
	}
	offset, e := intParam(c.query, "offset", 0)
	if e != nil || offset < 0 {
		return nil, invalidParam("offset", c.query.Get("offset"))
	}
	want := strings.ToUpper(c.query.Get("currency"))
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, d := range c.acc.deposits { // in the order they were added
		if (want != "" && d.Currency != want) || d.Time.Unix() < from || d.Time.Unix() > to {
			continue
		}
		out = append(out, map[string]any{
			"id": d.ID, "timestamp": strconv.FormatInt(d.Time.Unix(), 10), "withdraw_order_id": "",
			"currency": d.Currency, "address": d.Address, "txid": d.TxID, "amount": d.Amount,
			"memo": d.Memo, "status": d.Status, "chain": d.Chain,
		})
	}
	start := min(int(offset), len(out))
	return out[start:min(start+int(limit), len(out))], nil
}

func (s *Server) handleWithdrawStatus(c *call) (any, *apiError) {
	want := strings.ToUpper(c.query.Get("currency"))
	names := make([]string, 0, len(currencies))
	for k := range currencies {
		if want == "" || k == want {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	out := []map[string]any{}
	for _, k := range names {
		cur := currencies[k]
		fix, pct := map[string]string{}, map[string]string{}
		for _, ch := range cur.chains {
			fix[ch.name], pct[ch.name] = ch.fee, "0%"
		}
		out = append(out, map[string]any{
			"currency": k, "name": k, "name_cn": k, "deposit": "0",
			"withdraw_percent": "0%", "withdraw_fix": cur.chains[0].fee,
			"withdraw_day_limit": "500000", "withdraw_amount_mini": cur.min,
			"withdraw_day_limit_remain": "500000", "withdraw_eachtime_limit": cur.max,
			"withdraw_fix_on_chains": fix, "withdraw_percent_on_chains": pct,
		})
	}
	return out, nil
}

// withdrawIDPattern is Gate's withdraw_order_id rule.
var withdrawIDPattern = regexp.MustCompile(`^[0-9A-Za-z_.-]{1,32}$`)

func (s *Server) handleWithdraw(c *call) (any, *apiError) {
	var b struct {
		WithdrawOrderID string `json:"withdraw_order_id"`
		Currency        string `json:"currency"`
		Address         string `json:"address"`
		Amount          string `json:"amount"`
		Memo            string `json:"memo"`
		Chain           string `json:"chain"`
	}
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	if c.acc.NoWithdraw {
		return nil, errorf(http.StatusForbidden, "FORBIDDEN", "API key does not have the withdrawal permission")
	}
	name, cur, e := currencyParam(b.Currency)
	if e != nil {
		return nil, e
	}
	switch {
	case b.Amount == "":
		return nil, missingParam("amount")
	case b.Chain == "":
		return nil, missingParam("chain")
	case b.Address == "":
		return nil, missingParam("address")
	case b.WithdrawOrderID != "" && !withdrawIDPattern.MatchString(b.WithdrawOrderID):
		return nil, invalidParam("withdraw_order_id", b.WithdrawOrderID)
	}
	ch, ok := cur.chain(strings.ToUpper(b.Chain))
	if !ok {
		return nil, invalidParam("chain", b.Chain)
	}
	if !ch.address.MatchString(b.Address) {
		return nil, invalidParam("address", b.Address)
	}
	if ch.memo == "" && b.Memo != "" {
		return nil, invalidParam("memo", b.Memo)
	}
	amount, err := decimal.NewFromString(b.Amount)
	if err != nil || !amount.IsPositive() || strings.ContainsAny(b.Amount, "eE") {
		return nil, invalidParam("amount", b.Amount)
	}
	if !amount.Equal(amount.Truncate(ch.decimals)) {
		return nil, errorf(http.StatusBadRequest, "INVALID_PRECISION", "Invalid amount precision: at most %d decimals", ch.decimals)
	}
	fee := decimal.RequireFromString(ch.fee)
	if amount.LessThan(decimal.RequireFromString(cur.min)) || !amount.GreaterThan(fee) {
		return nil, errorf(http.StatusBadRequest, "AMOUNT_TOO_LITTLE", "Withdrawal amount %s is less than the minimum %s", b.Amount, cur.min)
	}
	if amount.GreaterThan(decimal.RequireFromString(cur.max)) {
		return nil, errorf(http.StatusBadRequest, "AMOUNT_TOO_MUCH", "Withdrawal amount %s is over the maximum %s", b.Amount, cur.max)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	if a.avail[name].LessThan(amount) {
		return nil, errorf(http.StatusBadRequest, "BALANCE_NOT_ENOUGH", "Not enough balance")
	}
	a.avail[name] = a.avail[name].Sub(amount)
	s.nextWID++
	h := sha256.Sum256([]byte(strconv.FormatInt(s.nextWID, 10) + b.Address))
	w := &withdrawal{
		id: "w" + strconv.FormatInt(s.nextWID, 10), orderID: b.WithdrawOrderID, currency: name, chain: ch.name,
		address: b.Address, memo: b.Memo, amount: amount, fee: fee, time: c.now, status: "DONE",
		txid: "0x" + hex.EncodeToString(h[:]), blockNumber: strconv.FormatInt(41575382+s.nextWID%1000, 10),
	}
	if a.PendingWithdrawals {
		w.status, w.txid, w.blockNumber = "REQUEST", "", "0"
	}
	a.withdrawals = append(a.withdrawals, w)
	// The answer is written as Gate's (real answers seen in ccxt): lower-
	// case currency and chain, fee_amount, status REQUEST at first.
	return map[string]any{
		"id": w.id, "currency": strings.ToLower(name), "amount": decimalText(amount), "address": w.address,
		"memo": w.memo, "status": "REQUEST", "chain": strings.ToLower(ch.name), "withdraw_order_id": w.orderID,
		"fee_amount": decimalText(fee), "timestamp": strconv.FormatInt(c.now.Unix(), 10),
	}, nil
}

func (s *Server) handleWithdrawals(c *call) (any, *apiError) {
	q := c.query
	limit, e := intParam(q, "limit", 100)
	if e != nil || limit < 1 || limit > 1000 {
		return nil, invalidParam("limit", q.Get("limit"))
	}
	offset, e := intParam(q, "offset", 0)
	if e != nil || offset < 0 {
		return nil, invalidParam("offset", q.Get("offset"))
	}
	wid := q.Get("withdraw_id")
	var from, to int64
	if wid == "" {
		if from, to, e = timeRange(c); e != nil {
			return nil, e
		}
	}
	want := strings.ToUpper(q.Get("currency"))
	oid := q.Get("withdraw_order_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for i := len(c.acc.withdrawals) - 1; i >= 0; i-- {
		w := c.acc.withdrawals[i]
		switch {
		case want != "" && w.currency != want,
			wid != "" && w.id != wid,
			oid != "" && w.orderID != oid,
			wid == "" && (w.time.Unix() < from || w.time.Unix() > to):
			continue
		}
		out = append(out, w.json())
	}
	start := min(int(offset), len(out))
	return out[start:min(start+int(limit), len(out))], nil
}
