package gateio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// This file holds Gate's wire shapes and the parsers of its answers: every
// function here reads untrusted bytes and has a fuzz target.

// text is a JSON string that also accepts a number or null (Gate writes
// some ids and times either way).
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

// millis reads a time Gate writes as seconds (or, when scale is 1,
// milliseconds), as an integer, a string, or a string with a fraction.
// The result is in milliseconds; 0 when absent.
func millis(t text, scale int64) (int64, error) {
	s := strings.TrimSpace(string(t))
	if s == "" {
		return 0, nil
	}
	d, err := exgate.ParseDecimal(s)
	if err != nil || d.IsNegative() {
		return 0, fmt.Errorf("bad time %q", rest.Truncate([]byte(s)))
	}
	ms := d.Mul(decimal.NewFromInt(scale)).Truncate(0)
	if ms.GreaterThan(decimal.NewFromInt(1 << 50)) {
		return 0, fmt.Errorf("time %q out of range", s)
	}
	return ms.IntPart(), nil
}

// pairJSON is one entry of GET /spot/currency_pairs.
type pairJSON struct {
	ID              string       `json:"id"`
	Base            string       `json:"base"`
	Quote           string       `json:"quote"`
	MinBaseAmount   rest.Decimal `json:"min_base_amount"`
	MinQuoteAmount  rest.Decimal `json:"min_quote_amount"`
	MaxBaseAmount   rest.Decimal `json:"max_base_amount"`
	MaxQuoteAmount  rest.Decimal `json:"max_quote_amount"`
	AmountPrecision *int32       `json:"amount_precision"`
	Precision       *int32       `json:"precision"`
	TradeStatus     string       `json:"trade_status"`
	BuyStart        text         `json:"buy_start"`
	SellStart       text         `json:"sell_start"`
}

// parsePairs reads the pair list. Entries without an id, base, quote or
// precisions are skipped (not tradable through the gateway), as are
// precisions outside 0..18.
func parsePairs(body []byte) ([]pairJSON, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("currency pairs answer: %w", err)
	}
	out := make([]pairJSON, 0, len(raw))
	for _, r := range raw {
		var p pairJSON
		if err := json.Unmarshal(r, &p); err != nil {
			continue
		}
		if p.ID == "" || p.Base == "" || p.Quote == "" || p.AmountPrecision == nil || p.Precision == nil ||
			*p.AmountPrecision < 0 || *p.AmountPrecision > 18 || *p.Precision < 0 || *p.Precision > 18 {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// candle is one parsed candlestick row.
type candle struct {
	openSec                int64
	open, high, low, close string
	baseVolume             string
	closed                 bool
}

// parseCandles reads GET /spot/candlesticks: an array of string arrays,
// by position
//
//	0 open time (Unix seconds)   1 volume in quote   2 close   3 high
//	4 low                        5 open              6 volume in base
//	7 window closed ("true"/"false")
//
// (Gate API v4 docs, "Market candlesticks"; unlike Binance, close comes
// before high, low and open, and both volumes are there). Rows of 7
// elements are accepted with or without the flag; a row without the base
// volume is an error, since the gateway's volume is in the base asset.
// Prices written with an exponent are converted to plain decimals.
func parseCandles(body []byte) ([]candle, error) {
	var rows [][]text
	if err := json.Unmarshal(body, &rows); err != nil {
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
		return candle{}, fmt.Errorf("%d elements, want 7 or 8", len(r))
	}
	sec, err := strconv.ParseInt(string(r[0]), 10, 64)
	if err != nil || sec < 0 || sec > 1<<40 {
		return candle{}, fmt.Errorf("bad open time %q", r[0])
	}
	c := candle{openSec: sec, closed: true}
	fields := []*string{&c.close, &c.high, &c.low, &c.open}
	for j, f := range fields {
		v, err := plainDecimal(string(r[2+j]))
		if err != nil {
			return candle{}, err
		}
		*f = v
	}
	rest := r[6:]
	if len(rest) > 0 && !isFlag(rest[0]) {
		v, err := plainDecimal(string(rest[0]))
		if err != nil {
			return candle{}, fmt.Errorf("base volume: %w", err)
		}
		c.baseVolume = v
		rest = rest[1:]
	}
	if c.baseVolume == "" {
		return candle{}, errors.New("no volume in the base currency (element 6)")
	}
	if len(rest) > 0 {
		if !isFlag(rest[0]) {
			return candle{}, fmt.Errorf("bad window-closed flag %q", rest[0])
		}
		c.closed = rest[0] == "true"
	}
	return c, nil
}

func isFlag(t text) bool { return t == "true" || t == "false" }

// plainDecimal returns s when it is a plain non-negative decimal, or its
// plain form when it is written with an exponent.
func plainDecimal(s string) (string, error) {
	if exgate.IsPlainDecimal(s) {
		return s, nil
	}
	d, err := exgate.ParseDecimal(s)
	if err != nil || d.IsNegative() {
		return "", fmt.Errorf("bad decimal %q", rest.Truncate([]byte(s)))
	}
	return d.String(), nil
}

// bookJSON is GET /spot/order_book; ID is there with with_id=true.
type bookJSON struct {
	ID   *int64   `json:"id"`
	Asks [][]text `json:"asks"`
	Bids [][]text `json:"bids"`
}

// level is one parsed book level.
type level struct {
	price, qty       string
	priceDec, qtyDec decimal.Decimal
}

// parseBook reads the book: asks and bids as [price, amount] strings,
// amount in base. Levels with a zero amount are dropped; sides are sorted
// (bids descending, asks ascending) whatever order they came in.
func parseBook(body []byte) (bids, asks []level, err error) {
	_, bids, asks, err = parseBookJSON(body)
	return bids, asks, err
}

// parseBookWithID reads the book of GET /spot/order_book?with_id=true
// and its update id, which the stream's updates continue (Gate WS docs,
// "Order Book Channel").
func parseBookWithID(body []byte) (id int64, bids, asks []level, err error) {
	b, bids, asks, err := parseBookJSON(body)
	if err != nil {
		return 0, nil, nil, err
	}
	if b.ID == nil || *b.ID <= 0 {
		return 0, nil, nil, errors.New("order book answer without an update id")
	}
	return *b.ID, bids, asks, nil
}

func parseBookJSON(body []byte) (b bookJSON, bids, asks []level, err error) {
	if err := json.Unmarshal(body, &b); err != nil {
		return bookJSON{}, nil, nil, fmt.Errorf("order book answer: %w", err)
	}
	if bids, err = parseLevels(b.Bids); err != nil {
		return bookJSON{}, nil, nil, fmt.Errorf("bids: %w", err)
	}
	if asks, err = parseLevels(b.Asks); err != nil {
		return bookJSON{}, nil, nil, fmt.Errorf("asks: %w", err)
	}
	sortLevels(bids, true)
	sortLevels(asks, false)
	return b, bids, asks, nil
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

// levelStrings reads Gate's [price, amount] rows as plain decimal strings
// (the REST book and the stream's updates alike).
func levelStrings(rows [][]text) ([][2]string, error) {
	out := make([][2]string, 0, len(rows))
	for i, r := range rows {
		if len(r) < 2 {
			return nil, fmt.Errorf("level %d: %d elements, want 2", i, len(r))
		}
		p, err := plainDecimal(string(r[0]))
		if err != nil {
			return nil, fmt.Errorf("level %d price: %w", i, err)
		}
		q, err := plainDecimal(string(r[1]))
		if err != nil {
			return nil, fmt.Errorf("level %d amount: %w", i, err)
		}
		out = append(out, [2]string{p, q})
	}
	return out, nil
}

// sortLevels orders a side best first (insertion sort: Gate already sends
// it sorted, so this is linear in practice).
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

// accountJSON is one entry of GET /spot/accounts.
type accountJSON struct {
	Currency  string       `json:"currency"`
	Available rest.Decimal `json:"available"`
	Locked    rest.Decimal `json:"locked"`
}

// parseAccounts reads the balances; rows without a currency are an error.
func parseAccounts(body []byte) ([]accountJSON, error) {
	var rows []accountJSON
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("spot accounts answer: %w", err)
	}
	for i, r := range rows {
		if r.Currency == "" {
			return nil, fmt.Errorf("spot account %d without a currency", i)
		}
		if r.Available.IsNegative() || r.Locked.IsNegative() {
			return nil, fmt.Errorf("spot account %s with a negative balance", r.Currency)
		}
	}
	return rows, nil
}

// orderJSON is Gate's spot order object (POST /spot/orders with
// action_mode FULL, GET /spot/orders/{id}, GET /spot/orders).
type orderJSON struct {
	ID            text         `json:"id"`
	Text          string       `json:"text"`
	CreateTime    text         `json:"create_time"`
	UpdateTime    text         `json:"update_time"`
	CreateTimeMs  text         `json:"create_time_ms"`
	UpdateTimeMs  text         `json:"update_time_ms"`
	Status        string       `json:"status"`
	CurrencyPair  string       `json:"currency_pair"`
	Type          string       `json:"type"`
	Side          string       `json:"side"`
	Amount        rest.Decimal `json:"amount"`
	Price         rest.Decimal `json:"price"`
	TimeInForce   string       `json:"time_in_force"`
	Left          rest.Decimal `json:"left"`
	FilledAmount  rest.Decimal `json:"filled_amount"`
	FilledTotal   rest.Decimal `json:"filled_total"`
	AvgDealPrice  rest.Decimal `json:"avg_deal_price"`
	Fee           rest.Decimal `json:"fee"`
	FeeCurrency   string       `json:"fee_currency"`
	PointFee      rest.Decimal `json:"point_fee"`
	GTFee         rest.Decimal `json:"gt_fee"`
	FinishAs      string       `json:"finish_as"`
	createdMillis int64
	updatedMillis int64
}

// parseOrder reads one order object and checks what the adapter relies on.
func parseOrder(body []byte) (orderJSON, error) {
	var o orderJSON
	if err := json.Unmarshal(body, &o); err != nil {
		return orderJSON{}, fmt.Errorf("order answer: %w", err)
	}
	return o, checkOrder(&o)
}

// parseOrders reads a list of order objects.
func parseOrders(body []byte) ([]orderJSON, error) {
	var os []orderJSON
	if err := json.Unmarshal(body, &os); err != nil {
		return nil, fmt.Errorf("order list answer: %w", err)
	}
	for i := range os {
		if err := checkOrder(&os[i]); err != nil {
			return nil, err
		}
	}
	return os, nil
}

func checkOrder(o *orderJSON) error {
	if o.ID == "" || o.Status == "" {
		return fmt.Errorf("order answer without id or status")
	}
	if o.Side != "buy" && o.Side != "sell" {
		return fmt.Errorf("order %s: side %q", o.ID, o.Side)
	}
	for name, d := range map[string]rest.Decimal{"amount": o.Amount, "price": o.Price, "left": o.Left, "filled_amount": o.FilledAmount,
		"filled_total": o.FilledTotal, "avg_deal_price": o.AvgDealPrice, "fee": o.Fee, "point_fee": o.PointFee, "gt_fee": o.GTFee} {
		if d.IsNegative() {
			return fmt.Errorf("order %s: negative %s", o.ID, name)
		}
	}
	var err error
	if o.createdMillis, err = orderTime(o.CreateTimeMs, o.CreateTime); err != nil {
		return fmt.Errorf("order %s create time: %w", o.ID, err)
	}
	if o.updatedMillis, err = orderTime(o.UpdateTimeMs, o.UpdateTime); err != nil {
		return fmt.Errorf("order %s update time: %w", o.ID, err)
	}
	return nil
}

// orderTime prefers the _ms field and falls back to the seconds one.
func orderTime(ms, sec text) (int64, error) {
	if ms != "" {
		return millis(ms, 1)
	}
	return millis(sec, 1000)
}

// openOrdersJSON is one entry of GET /spot/open_orders: the open orders
// of one pair.
type openOrdersJSON struct {
	CurrencyPair string            `json:"currency_pair"`
	Total        int               `json:"total"`
	Orders       []json.RawMessage `json:"orders"`
}

// parseOpenOrders reads GET /spot/open_orders.
func parseOpenOrders(body []byte) ([]orderJSON, error) {
	var pairs []openOrdersJSON
	if err := json.Unmarshal(body, &pairs); err != nil {
		return nil, fmt.Errorf("open orders answer: %w", err)
	}
	var out []orderJSON
	for _, p := range pairs {
		for _, raw := range p.Orders {
			o, err := parseOrder(raw)
			if err != nil {
				return nil, err
			}
			if o.CurrencyPair == "" {
				o.CurrencyPair = p.CurrencyPair
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// tradeJSON is one entry of GET /spot/my_trades: a fill of one of the
// account's orders. amount is in base, price in quote per base.
type tradeJSON struct {
	ID           text         `json:"id"`
	CreateTime   text         `json:"create_time"`
	CreateTimeMs text         `json:"create_time_ms"`
	CurrencyPair string       `json:"currency_pair"`
	Side         string       `json:"side"`
	Role         string       `json:"role"`
	Amount       rest.Decimal `json:"amount"`
	Price        rest.Decimal `json:"price"`
	OrderID      text         `json:"order_id"`
	Fee          rest.Decimal `json:"fee"`
	FeeCurrency  string       `json:"fee_currency"`
	PointFee     rest.Decimal `json:"point_fee"`
	GTFee        rest.Decimal `json:"gt_fee"`
	Text         string       `json:"text"`
	millis       int64
}

// parseTrades reads GET /spot/my_trades. create_time_ms is a string with
// a fraction of a millisecond ("1548000000123.456").
func parseTrades(body []byte) ([]tradeJSON, error) {
	var rows []tradeJSON
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("trades answer: %w", err)
	}
	for i := range rows {
		r := &rows[i]
		if r.ID == "" || r.OrderID == "" || (r.Side != "buy" && r.Side != "sell") {
			return nil, fmt.Errorf("trade %d without id, order id or side", i)
		}
		if !r.Amount.IsPositive() || !r.Price.IsPositive() || r.Fee.IsNegative() || r.PointFee.IsNegative() || r.GTFee.IsNegative() {
			return nil, fmt.Errorf("trade %s: amount, price or fee out of range", r.ID)
		}
		var err error
		if r.millis, err = orderTime(r.CreateTimeMs, r.CreateTime); err != nil {
			return nil, fmt.Errorf("trade %s create time: %w", r.ID, err)
		}
	}
	return rows, nil
}

// depositJSON is one entry of GET /wallet/deposits.
type depositJSON struct {
	ID        text         `json:"id"`
	TxID      string       `json:"txid"`
	Timestamp text         `json:"timestamp"`
	Amount    rest.Decimal `json:"amount"`
	Currency  string       `json:"currency"`
	Address   string       `json:"address"`
	Memo      string       `json:"memo"`
	Status    string       `json:"status"`
	Chain     string       `json:"chain"`
}

// parseDeposits reads the deposit records.
func parseDeposits(body []byte) ([]depositJSON, error) {
	var rows []depositJSON
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("deposits answer: %w", err)
	}
	for i, r := range rows {
		if r.ID == "" || r.Currency == "" || r.Status == "" {
			return nil, fmt.Errorf("deposit %d without id, currency or status", i)
		}
		if r.Amount.IsNegative() {
			return nil, fmt.Errorf("deposit %s with a negative amount", r.ID)
		}
		if _, err := millis(r.Timestamp, 1000); err != nil {
			return nil, fmt.Errorf("deposit %s: %w", r.ID, err)
		}
	}
	return rows, nil
}

// withdrawalJSON is a withdrawal record (GET /wallet/withdrawals) or the
// answer of POST /withdrawals, which has fee_amount instead of fee.
type withdrawalJSON struct {
	ID              text         `json:"id"`
	TxID            string       `json:"txid"`
	BlockNumber     text         `json:"block_number"`
	WithdrawOrderID string       `json:"withdraw_order_id"`
	Timestamp       text         `json:"timestamp"`
	Amount          rest.Decimal `json:"amount"`
	Fee             rest.Decimal `json:"fee"`
	FeeAmount       rest.Decimal `json:"fee_amount"`
	Currency        string       `json:"currency"`
	Address         string       `json:"address"`
	Memo            string       `json:"memo"`
	Status          string       `json:"status"`
	Chain           string       `json:"chain"`
	FailReason      string       `json:"fail_reason"`
}

// fee returns the record's fee and whether it carries one.
func (w withdrawalJSON) fee() (decimal.Decimal, bool) {
	if w.Fee.Set {
		return w.Fee.Decimal, true
	}
	return w.FeeAmount.Decimal, w.FeeAmount.Set
}

// parseWithdrawal reads the answer of POST /withdrawals.
func parseWithdrawal(body []byte) (withdrawalJSON, error) {
	var w withdrawalJSON
	if err := json.Unmarshal(body, &w); err != nil {
		return withdrawalJSON{}, fmt.Errorf("withdraw answer: %w", err)
	}
	return w, checkWithdrawal(w)
}

// parseWithdrawals reads withdrawal records. The v4.99 docs show the list
// wrapped in a second array; that form is accepted too.
func parseWithdrawals(body []byte) ([]withdrawalJSON, error) {
	var rows []withdrawalJSON
	if err := json.Unmarshal(body, &rows); err != nil {
		var nested [][]withdrawalJSON
		if json.Unmarshal(body, &nested) != nil {
			return nil, fmt.Errorf("withdrawals answer: %w", err)
		}
		rows = nil
		for _, n := range nested {
			rows = append(rows, n...)
		}
	}
	for _, r := range rows {
		if err := checkWithdrawal(r); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func checkWithdrawal(w withdrawalJSON) error {
	if w.ID == "" || w.Currency == "" {
		return fmt.Errorf("withdrawal without id or currency")
	}
	fee, _ := w.fee()
	if w.Amount.IsNegative() || fee.IsNegative() {
		return fmt.Errorf("withdrawal %s with a negative amount or fee", w.ID)
	}
	if fee.GreaterThan(w.Amount.Decimal) {
		return fmt.Errorf("withdrawal %s: fee %s over its amount %s", w.ID, fee, w.Amount.Decimal)
	}
	if _, err := millis(w.Timestamp, 1000); err != nil {
		return fmt.Errorf("withdrawal %s: %w", w.ID, err)
	}
	return nil
}

// addressJSON is GET /wallet/deposit_address.
type addressJSON struct {
	Currency            string `json:"currency"`
	Address             string `json:"address"`
	MultichainAddresses []struct {
		Chain        string `json:"chain"`
		Address      string `json:"address"`
		PaymentID    string `json:"payment_id"`
		PaymentName  string `json:"payment_name"`
		ObtainFailed int    `json:"obtain_failed"`
	} `json:"multichain_addresses"`
}

// parseAddress reads the deposit address answer.
func parseAddress(body []byte) (addressJSON, error) {
	var a addressJSON
	if err := json.Unmarshal(body, &a); err != nil {
		return addressJSON{}, fmt.Errorf("deposit address answer: %w", err)
	}
	return a, nil
}

// chainJSON is one entry of GET /wallet/currency_chains.
type chainJSON struct {
	Chain              string `json:"chain"`
	IsDisabled         int    `json:"is_disabled"`
	IsDepositDisabled  int    `json:"is_deposit_disabled"`
	IsWithdrawDisabled int    `json:"is_withdraw_disabled"`
	Decimal            text   `json:"decimal"`
}

// parseChains reads the chains of a currency.
func parseChains(body []byte) ([]chainJSON, error) {
	var rows []chainJSON
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("currency chains answer: %w", err)
	}
	return rows, nil
}

// withdrawStatusJSON is one entry of GET /wallet/withdraw_status.
type withdrawStatusJSON struct {
	Currency                string                  `json:"currency"`
	WithdrawPercent         string                  `json:"withdraw_percent"`
	WithdrawFix             rest.Decimal            `json:"withdraw_fix"`
	WithdrawAmountMini      rest.Decimal            `json:"withdraw_amount_mini"`
	WithdrawEachtimeLimit   rest.Decimal            `json:"withdraw_eachtime_limit"`
	WithdrawFixOnChains     map[string]rest.Decimal `json:"withdraw_fix_on_chains"`
	WithdrawPercentOnChains map[string]string       `json:"withdraw_percent_on_chains"`
}

// parseWithdrawStatus reads the withdrawal rules of currencies.
func parseWithdrawStatus(body []byte) ([]withdrawStatusJSON, error) {
	var rows []withdrawStatusJSON
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("withdraw status answer: %w", err)
	}
	return rows, nil
}

// percent reads Gate's "0.1%" as the fraction 0.001; "" is 0.
func percent(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if s == "" {
		return decimal.Zero, nil
	}
	d, err := exgate.ParseDecimal(s)
	if err != nil || d.IsNegative() || d.GreaterThanOrEqual(decimal.NewFromInt(100)) {
		return decimal.Zero, fmt.Errorf("bad percentage %q", s)
	}
	return d.Shift(-2), nil
}
