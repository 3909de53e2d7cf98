package okx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// This file holds OKX's wire shapes and the parsers of its answers: every
// function here reads untrusted bytes and has a fuzz target (fuzz_test.go).
// OKX writes every number as a string; the parsers accept numbers too.

// text is a JSON string that also accepts a number or null.
type text string

// UnmarshalJSON reads a string, a number or null.
func (t *text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*t = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
		return nil
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*t = text(b)
		return nil
	}
	return fmt.Errorf("want a string or number, got %q", rest.Truncate(b))
}

// millis reads a Unix millisecond time; 0 when empty.
func millis(t text) (int64, error) {
	s := strings.TrimSpace(string(t))
	if s == "" {
		return 0, nil
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms < 0 || ms > 1<<50 {
		return 0, fmt.Errorf("bad time %q", rest.Truncate(s))
	}
	return ms, nil
}

// envelope is every REST answer: {"code":"0","msg":"","data":[...]}.
// Source: OKX API v5 docs, "REST API" response format
// (https://www.okx.com/docs-v5/en/#overview-rest-api). code is a string of
// digits; a few server failures carry it as a number.
type envelope struct {
	Code text            `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// itemResult is the per-item outcome of an order or cancel (sCode "0" is
// accepted).
type itemResult struct {
	SCode text   `json:"sCode"`
	SMsg  string `json:"sMsg"`
}

// parseEnvelope reads an answer with its HTTP status. It returns the data
// array of a success, or the *apiError of a refusal: the envelope's code,
// or for code 1 or 2 (an order or cancel refused item by item) the first
// refused item's sCode and sMsg. A 2xx answer that is not an OKX envelope
// is an error (err), not a refusal.
func parseEnvelope(status int, body []byte) (data []byte, ae *apiError, err error) {
	var env envelope
	jerr := json.Unmarshal(body, &env)
	ok2xx := status >= 200 && status < 300
	switch {
	case jerr != nil && ok2xx:
		return nil, nil, fmt.Errorf("answer is not an OKX envelope: %w", jerr)
	case jerr != nil:
		return nil, &apiError{status: status, msg: statusMessage(status, strings.TrimSpace(rest.Truncate(body)))}, nil
	case env.Code == "" && ok2xx:
		return nil, nil, fmt.Errorf("answer without a code: %q", rest.Truncate(body))
	case env.Code == "0" && ok2xx:
		if len(bytes.TrimSpace(env.Data)) == 0 || string(bytes.TrimSpace(env.Data)) == "null" {
			return []byte("[]"), nil, nil
		}
		if !bytes.HasPrefix(bytes.TrimSpace(env.Data), []byte("[")) {
			return nil, nil, fmt.Errorf("answer data is not an array: %q", rest.Truncate(env.Data))
		}
		return env.Data, nil, nil
	}
	ae = &apiError{status: status, code: string(env.Code), msg: strings.TrimSpace(env.Msg)}
	if env.Code == "1" || env.Code == "2" {
		var items []itemResult
		if json.Unmarshal(env.Data, &items) == nil {
			for _, it := range items {
				if it.SCode != "" && it.SCode != "0" {
					ae.code, ae.msg = string(it.SCode), strings.TrimSpace(it.SMsg)
					break
				}
			}
		}
	}
	if ae.msg == "" {
		ae.msg = statusMessage(status, "")
	}
	return nil, ae, nil
}

// statusMessage is the message of an error answer whose body said nothing
// readable.
func statusMessage(status int, body string) string {
	if body != "" {
		return body
	}
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "HTTP status " + strconv.Itoa(status)
}

// parseServerTime reads GET /public/time: [{"ts":"1597026383085"}].
func parseServerTime(data []byte) (int64, error) {
	var rows []struct {
		TS text `json:"ts"`
	}
	if err := json.Unmarshal(data, &rows); err != nil || len(rows) == 0 {
		return 0, fmt.Errorf("okx: bad server time answer %q", rest.Truncate(data))
	}
	ms, err := millis(rows[0].TS)
	if err != nil || ms <= 0 {
		return 0, fmt.Errorf("okx: bad server time %q", rows[0].TS)
	}
	return ms, nil
}

// instrumentJSON is one SPOT instrument of GET /public/instruments.
type instrumentJSON struct {
	InstID   string       `json:"instId"`
	InstType string       `json:"instType"`
	BaseCcy  string       `json:"baseCcy"`
	QuoteCcy string       `json:"quoteCcy"`
	State    string       `json:"state"`
	TickSz   rest.Decimal `json:"tickSz"`
	LotSz    rest.Decimal `json:"lotSz"`
	MinSz    rest.Decimal `json:"minSz"`
	MaxLmtSz rest.Decimal `json:"maxLmtSz"`
	MaxMktSz rest.Decimal `json:"maxMktSz"`
}

// parseInstruments reads the instrument list. An instrument without an
// id, currencies or positive tick and lot sizes is an error: the adapter
// could not check an order against it.
func parseInstruments(data []byte) ([]instrumentJSON, error) {
	var rows []instrumentJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("instruments answer: %w", err)
	}
	for i, r := range rows {
		if r.InstID == "" || r.BaseCcy == "" || r.QuoteCcy == "" {
			return nil, fmt.Errorf("instrument %d without an id or currencies", i)
		}
		if !r.TickSz.IsPositive() || !r.LotSz.IsPositive() || r.MinSz.IsNegative() {
			return nil, fmt.Errorf("instrument %s with tickSz %s, lotSz %s, minSz %s", r.InstID, r.TickSz.Decimal, r.LotSz.Decimal, r.MinSz.Decimal)
		}
	}
	return rows, nil
}

// candle is one parsed candlestick row.
type candle struct {
	openMS                 int64
	open, high, low, close string
	// baseVolume is vol: the base currency for SPOT.
	baseVolume string
	// confirmed is the bar's confirm flag: "1" closed, "0" still open.
	confirmed bool
}

// parseCandles reads GET /market/candles and /market/history-candles:
// rows of strings [ts, o, h, l, c, vol, volCcy, volCcyQuote, confirm],
// ts the bar's open time in ms, vol in the base currency for SPOT
// (OKX API v5 docs, "Get candlesticks"). OKX lists the newest first;
// the rows are returned as they came.
func parseCandles(data []byte) ([]candle, error) {
	var rows [][]text
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("candlesticks answer: %w", err)
	}
	out := make([]candle, 0, len(rows))
	for i, r := range rows {
		c, err := parseCandle(r)
		if err != nil {
			return nil, fmt.Errorf("candlestick %d: %w", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func parseCandle(r []text) (candle, error) {
	if len(r) < 6 {
		return candle{}, fmt.Errorf("%d elements, want 9", len(r))
	}
	ms, err := millis(r[0])
	if err != nil {
		return candle{}, err
	}
	c := candle{openMS: ms, confirmed: true}
	for j, f := range []*string{&c.open, &c.high, &c.low, &c.close, &c.baseVolume} {
		v, err := plainDecimal(string(r[1+j]))
		if err != nil {
			return candle{}, err
		}
		*f = v
	}
	if len(r) >= 9 {
		switch r[8] {
		case "0":
			c.confirmed = false
		case "1":
		default:
			return candle{}, fmt.Errorf("bad confirm flag %q", r[8])
		}
	}
	return c, nil
}

// plainDecimal returns s when it is a plain non-negative decimal, or its
// plain form when it is written with an exponent.
func plainDecimal(s string) (string, error) {
	if exgate.IsPlainDecimal(s) {
		return s, nil
	}
	d, err := exgate.ParseDecimal(s)
	if err != nil || d.IsNegative() {
		return "", fmt.Errorf("bad decimal %q", rest.Truncate(s))
	}
	return d.String(), nil
}

// level is one parsed book level.
type level struct {
	price, qty       string
	priceDec, qtyDec decimal.Decimal
}

// parseBook reads GET /market/books: data[0] = {asks, bids, ts}, levels
// [px, sz, "0", numOrders] (OKX API v5 docs, "Get order book"). Levels
// with a zero size are dropped; sides are sorted best first whatever
// order they came in.
func parseBook(data []byte) (bids, asks []level, err error) {
	var rows []struct {
		Asks [][]text `json:"asks"`
		Bids [][]text `json:"bids"`
	}
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, nil, fmt.Errorf("order book answer: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil, errors.New("order book answer without data")
	}
	if bids, err = parseLevels(rows[0].Bids); err != nil {
		return nil, nil, fmt.Errorf("bids: %w", err)
	}
	if asks, err = parseLevels(rows[0].Asks); err != nil {
		return nil, nil, fmt.Errorf("asks: %w", err)
	}
	sortLevels(bids, true)
	sortLevels(asks, false)
	return bids, asks, nil
}

func parseLevels(rows [][]text) ([]level, error) {
	pairs, err := levelStrings(rows)
	if err != nil {
		return nil, err
	}
	out := make([]level, 0, len(pairs))
	for i, pq := range pairs {
		pd, perr := exgate.ParseDecimal(pq[0])
		qd, qerr := exgate.ParseDecimal(pq[1])
		if perr != nil || qerr != nil {
			return nil, fmt.Errorf("level %d: bad decimal", i)
		}
		if !qd.IsPositive() || !pd.IsPositive() {
			continue
		}
		out = append(out, level{price: pq[0], qty: pq[1], priceDec: pd, qtyDec: qd})
	}
	return out, nil
}

// levelStrings reads [px, sz, ...] rows as plain decimal strings (the
// REST book and the stream's books alike).
func levelStrings(rows [][]text) ([][2]string, error) {
	out := make([][2]string, 0, len(rows))
	for i, r := range rows {
		if len(r) < 2 {
			return nil, fmt.Errorf("level %d: %d elements, want 4", i, len(r))
		}
		p, err := plainDecimal(string(r[0]))
		if err != nil {
			return nil, fmt.Errorf("level %d price: %w", i, err)
		}
		q, err := plainDecimal(string(r[1]))
		if err != nil {
			return nil, fmt.Errorf("level %d size: %w", i, err)
		}
		out = append(out, [2]string{p, q})
	}
	return out, nil
}

// sortLevels orders a side best first (insertion sort: OKX sends it
// sorted, so this is linear in practice).
func sortLevels(ls []level, descending bool) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0; j-- {
			a, b := ls[j-1].priceDec, ls[j].priceDec
			if (descending && a.GreaterThanOrEqual(b)) || (!descending && a.LessThanOrEqual(b)) {
				break
			}
			ls[j-1], ls[j] = ls[j], ls[j-1]
		}
	}
}

// balanceJSON is one currency of an account: the trading account's
// details (GET /account/balance) or the funding account's rows (GET
// /asset/balances). Both have ccy, availBal and frozenBal.
type balanceJSON struct {
	Ccy       string       `json:"ccy"`
	AvailBal  rest.Decimal `json:"availBal"`
	FrozenBal rest.Decimal `json:"frozenBal"`
	Bal       rest.Decimal `json:"bal"`
	CashBal   rest.Decimal `json:"cashBal"`
}

// parseTradingBalance reads GET /account/balance: data[0].details.
func parseTradingBalance(data []byte) ([]balanceJSON, error) {
	var rows []struct {
		Details []balanceJSON `json:"details"`
	}
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("account balance answer: %w", err)
	}
	var out []balanceJSON
	for _, r := range rows {
		out = append(out, r.Details...)
	}
	return out, checkBalances(out)
}

// parseFundingBalances reads GET /asset/balances.
func parseFundingBalances(data []byte) ([]balanceJSON, error) {
	var rows []balanceJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("asset balances answer: %w", err)
	}
	return rows, checkBalances(rows)
}

func checkBalances(rows []balanceJSON) error {
	for i, r := range rows {
		if r.Ccy == "" {
			return fmt.Errorf("balance %d without a currency", i)
		}
		if r.AvailBal.IsNegative() || r.FrozenBal.IsNegative() {
			return fmt.Errorf("balance of %s is negative", r.Ccy)
		}
	}
	return nil
}

// orderAck is one item of the answer to POST /trade/order or
// /trade/cancel-order.
type orderAck struct {
	OrdID   text   `json:"ordId"`
	ClOrdID string `json:"clOrdId"`
	SCode   text   `json:"sCode"`
	SMsg    string `json:"sMsg"`
}

// parseOrderAck reads the one item of an order or cancel answer; an item
// refused here (sCode not "0" under code "0") is an *apiError.
func parseOrderAck(data []byte) (orderAck, error) {
	var rows []orderAck
	if err := json.Unmarshal(data, &rows); err != nil {
		return orderAck{}, fmt.Errorf("order answer: %w", err)
	}
	if len(rows) != 1 {
		return orderAck{}, fmt.Errorf("order answer with %d items, want 1", len(rows))
	}
	a := rows[0]
	if a.SCode != "" && a.SCode != "0" {
		return orderAck{}, &apiError{status: http.StatusOK, code: string(a.SCode), msg: strings.TrimSpace(a.SMsg)}
	}
	if a.OrdID == "" {
		return orderAck{}, errors.New("order answer without an ordId")
	}
	return a, nil
}

// orderJSON is OKX's order object (GET /trade/order, /trade/orders-pending,
// /trade/orders-history, the orders channel). Source: OKX API v5 docs,
// "Get order details".
type orderJSON struct {
	InstID       string       `json:"instId"`
	OrdID        text         `json:"ordId"`
	ClOrdID      string       `json:"clOrdId"`
	OrdType      string       `json:"ordType"`
	Side         string       `json:"side"`
	TgtCcy       string       `json:"tgtCcy"`
	Px           rest.Decimal `json:"px"`
	Sz           rest.Decimal `json:"sz"`
	AccFillSz    rest.Decimal `json:"accFillSz"`
	AvgPx        rest.Decimal `json:"avgPx"`
	State        string       `json:"state"`
	Fee          rest.Decimal `json:"fee"`
	FeeCcy       string       `json:"feeCcy"`
	CancelSource string       `json:"cancelSource"`
	CTime        text         `json:"cTime"`
	UTime        text         `json:"uTime"`

	cMS, uMS int64
}

// parseOrders reads a list of orders.
func parseOrders(data []byte) ([]orderJSON, error) {
	var rows []orderJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("orders answer: %w", err)
	}
	for i := range rows {
		if err := checkOrder(&rows[i]); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// parseOrder reads GET /trade/order: exactly one order.
func parseOrder(data []byte) (orderJSON, error) {
	rows, err := parseOrders(data)
	if err != nil {
		return orderJSON{}, err
	}
	if len(rows) != 1 {
		return orderJSON{}, fmt.Errorf("order answer with %d orders, want 1", len(rows))
	}
	return rows[0], nil
}

// checkOrder checks the fields every conversion relies on and reads the
// times.
func checkOrder(o *orderJSON) error {
	if o.OrdID == "" || o.InstID == "" {
		return fmt.Errorf("order without an ordId or instId")
	}
	if o.Side != "buy" && o.Side != "sell" {
		return fmt.Errorf("order %s with side %q", o.OrdID, o.Side)
	}
	if o.State == "" {
		return fmt.Errorf("order %s without a state", o.OrdID)
	}
	if o.Sz.IsNegative() || o.AccFillSz.IsNegative() || o.AvgPx.IsNegative() || o.Px.IsNegative() {
		return fmt.Errorf("order %s with a negative size or price", o.OrdID)
	}
	var err error
	if o.cMS, err = millis(o.CTime); err != nil {
		return fmt.Errorf("order %s cTime: %w", o.OrdID, err)
	}
	if o.uMS, err = millis(o.UTime); err != nil {
		return fmt.Errorf("order %s uTime: %w", o.OrdID, err)
	}
	return nil
}

// fillJSON is one fill of GET /trade/fills.
type fillJSON struct {
	InstID   string       `json:"instId"`
	TradeID  text         `json:"tradeId"`
	OrdID    text         `json:"ordId"`
	ClOrdID  string       `json:"clOrdId"`
	BillID   text         `json:"billId"`
	Side     string       `json:"side"`
	FillPx   rest.Decimal `json:"fillPx"`
	FillSz   rest.Decimal `json:"fillSz"`
	Fee      rest.Decimal `json:"fee"`
	FeeCcy   string       `json:"feeCcy"`
	ExecType string       `json:"execType"`
	TS       text         `json:"ts"`
	FillTime text         `json:"fillTime"`

	ms int64
}

// parseFills reads the fills.
func parseFills(data []byte) ([]fillJSON, error) {
	var rows []fillJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("fills answer: %w", err)
	}
	for i := range rows {
		f := &rows[i]
		if f.TradeID == "" || f.OrdID == "" || (f.Side != "buy" && f.Side != "sell") {
			return nil, fmt.Errorf("fill %d without a trade id, order id or side", i)
		}
		if !f.FillPx.IsPositive() || f.FillSz.IsNegative() {
			return nil, fmt.Errorf("fill %s with price %s and size %s", f.TradeID, f.FillPx.Decimal, f.FillSz.Decimal)
		}
		t := f.FillTime
		if t == "" {
			t = f.TS
		}
		var err error
		if f.ms, err = millis(t); err != nil {
			return nil, fmt.Errorf("fill %s: %w", f.TradeID, err)
		}
	}
	return rows, nil
}

// currencyJSON is one currency on one chain of GET /asset/currencies.
type currencyJSON struct {
	Ccy      string       `json:"ccy"`
	Chain    string       `json:"chain"`
	CanDep   bool         `json:"canDep"`
	CanWd    bool         `json:"canWd"`
	MinWd    rest.Decimal `json:"minWd"`
	MaxWd    rest.Decimal `json:"maxWd"`
	WdTickSz text         `json:"wdTickSz"`
	Fee      rest.Decimal `json:"fee"`
	MinFee   rest.Decimal `json:"minFee"`
	NeedTag  bool         `json:"needTag"`
	MainNet  bool         `json:"mainNet"`
}

// parseCurrencies reads GET /asset/currencies.
func parseCurrencies(data []byte) ([]currencyJSON, error) {
	var rows []currencyJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("currencies answer: %w", err)
	}
	for i, r := range rows {
		if r.Ccy == "" || r.Chain == "" {
			return nil, fmt.Errorf("currency %d without a ccy or chain", i)
		}
		if r.Fee.IsNegative() || r.MinWd.IsNegative() {
			return nil, fmt.Errorf("currency %s on %s with a negative fee or minimum", r.Ccy, r.Chain)
		}
	}
	return rows, nil
}

// withdrawPrecision is a chain's wdTickSz: the decimals of a withdrawal
// amount; -1 when absent or unreadable.
func (c currencyJSON) withdrawPrecision() int32 {
	n, err := strconv.Atoi(strings.TrimSpace(string(c.WdTickSz)))
	if err != nil || n < 0 || n > 18 {
		return -1
	}
	return int32(n)
}

// fee is the chain's fixed withdrawal fee (minFee on answers that carry
// only the deprecated pair).
func (c currencyJSON) fee() decimal.Decimal {
	if c.Fee.Set {
		return c.Fee.Decimal
	}
	return c.MinFee.Decimal
}

// addressJSON is one entry of GET /asset/deposit-address: the chain's
// address and, where the chain needs one, its memo as tag, memo, pmtId or
// addrEx.comment (OKX API v5 docs, "Get deposit address").
type addressJSON struct {
	Ccy      string `json:"ccy"`
	Chain    string `json:"chain"`
	Addr     string `json:"addr"`
	Tag      string `json:"tag"`
	Memo     string `json:"memo"`
	PmtID    string `json:"pmtId"`
	Selected bool   `json:"selected"`
	AddrEx   *struct {
		Comment string `json:"comment"`
	} `json:"addrEx"`
}

// memo is the address's memo, wherever OKX put it.
func (a addressJSON) memo() string {
	for _, m := range []string{a.Tag, a.Memo, a.PmtID} {
		if m = strings.TrimSpace(m); m != "" {
			return m
		}
	}
	if a.AddrEx != nil {
		return strings.TrimSpace(a.AddrEx.Comment)
	}
	return ""
}

// parseAddresses reads GET /asset/deposit-address.
func parseAddresses(data []byte) ([]addressJSON, error) {
	var rows []addressJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("deposit address answer: %w", err)
	}
	for i, r := range rows {
		if r.Chain == "" {
			return nil, fmt.Errorf("deposit address %d without a chain", i)
		}
	}
	return rows, nil
}

// depositJSON is one record of GET /asset/deposit-history.
type depositJSON struct {
	Ccy   string       `json:"ccy"`
	Chain string       `json:"chain"`
	Amt   rest.Decimal `json:"amt"`
	To    string       `json:"to"`
	TxID  string       `json:"txId"`
	TS    text         `json:"ts"`
	State text         `json:"state"`
	DepID text         `json:"depId"`

	ms int64
}

// parseDeposits reads the deposit history.
func parseDeposits(data []byte) ([]depositJSON, error) {
	var rows []depositJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("deposit history answer: %w", err)
	}
	for i := range rows {
		d := &rows[i]
		if d.DepID == "" || d.Ccy == "" || d.State == "" {
			return nil, fmt.Errorf("deposit %d without an id, currency or state", i)
		}
		if d.Amt.IsNegative() {
			return nil, fmt.Errorf("deposit %s with a negative amount", d.DepID)
		}
		var err error
		if d.ms, err = millis(d.TS); err != nil {
			return nil, fmt.Errorf("deposit %s: %w", d.DepID, err)
		}
	}
	return rows, nil
}

// withdrawAck is the answer to POST /asset/withdrawal.
type withdrawAck struct {
	WdID     text         `json:"wdId"`
	ClientID string       `json:"clientId"`
	Amt      rest.Decimal `json:"amt"`
	Chain    string       `json:"chain"`
}

// parseWithdrawAck reads the one item of a withdrawal answer.
func parseWithdrawAck(data []byte) (withdrawAck, error) {
	var rows []withdrawAck
	if err := json.Unmarshal(data, &rows); err != nil {
		return withdrawAck{}, fmt.Errorf("withdrawal answer: %w", err)
	}
	if len(rows) != 1 || rows[0].WdID == "" {
		return withdrawAck{}, fmt.Errorf("withdrawal answer with %d items or no wdId", len(rows))
	}
	return rows[0], nil
}

// withdrawalJSON is one record of GET /asset/withdrawal-history.
type withdrawalJSON struct {
	Ccy      string       `json:"ccy"`
	Chain    string       `json:"chain"`
	Amt      rest.Decimal `json:"amt"`
	Fee      rest.Decimal `json:"fee"`
	FeeCcy   string       `json:"feeCcy"`
	To       string       `json:"to"`
	Tag      string       `json:"tag"`
	Memo     string       `json:"memo"`
	PmtID    string       `json:"pmtId"`
	TxID     string       `json:"txId"`
	State    text         `json:"state"`
	TS       text         `json:"ts"`
	WdID     text         `json:"wdId"`
	ClientID string       `json:"clientId"`

	ms int64
}

// parseWithdrawals reads the withdrawal history.
func parseWithdrawals(data []byte) ([]withdrawalJSON, error) {
	var rows []withdrawalJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("withdrawal history answer: %w", err)
	}
	for i := range rows {
		w := &rows[i]
		if w.WdID == "" || w.Ccy == "" || w.State == "" {
			return nil, fmt.Errorf("withdrawal %d without an id, currency or state", i)
		}
		if w.Amt.IsNegative() || w.Fee.IsNegative() {
			return nil, fmt.Errorf("withdrawal %s with a negative amount or fee", w.WdID)
		}
		var err error
		if w.ms, err = millis(w.TS); err != nil {
			return nil, fmt.Errorf("withdrawal %s: %w", w.WdID, err)
		}
	}
	return rows, nil
}

// transferJSON is the answer to POST /asset/transfer and a record of GET
// /asset/transfer-state (which adds state).
type transferJSON struct {
	TransID  text         `json:"transId"`
	ClientID string       `json:"clientId"`
	Ccy      string       `json:"ccy"`
	Amt      rest.Decimal `json:"amt"`
	From     string       `json:"from"`
	To       string       `json:"to"`
	State    string       `json:"state"`
}

// parseTransfers reads a transfer answer or the transfer state.
func parseTransfers(data []byte) ([]transferJSON, error) {
	var rows []transferJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("transfer answer: %w", err)
	}
	for i, r := range rows {
		if r.TransID == "" {
			return nil, fmt.Errorf("transfer %d without a transId", i)
		}
		if r.Amt.IsNegative() {
			return nil, fmt.Errorf("transfer %s with a negative amount", r.TransID)
		}
	}
	return rows, nil
}

// billJSON is one funding-account bill of GET /asset/bills.
type billJSON struct {
	BillID   text         `json:"billId"`
	Ccy      string       `json:"ccy"`
	ClientID string       `json:"clientId"`
	BalChg   rest.Decimal `json:"balChg"`
	Type     text         `json:"type"`
	TS       text         `json:"ts"`

	ms int64
}

// parseBills reads the funding bills.
func parseBills(data []byte) ([]billJSON, error) {
	var rows []billJSON
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("bills answer: %w", err)
	}
	for i := range rows {
		b := &rows[i]
		if b.BillID == "" || b.Ccy == "" {
			return nil, fmt.Errorf("bill %d without an id or currency", i)
		}
		var err error
		if b.ms, err = millis(b.TS); err != nil {
			return nil, fmt.Errorf("bill %s: %w", b.BillID, err)
		}
	}
	return rows, nil
}
