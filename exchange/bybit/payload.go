package bybit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/exgate/exgate/exchange/internal/rest"
)

// The answers' `result` objects as the adapter reads them. Bybit writes
// numbers as strings and ids and times mostly as strings
// (https://bybit-exchange.github.io/docs/v5/guide, "Response"); text takes
// either, so that a number where a string was expected does not break a
// read. Every parser refuses what it cannot read rather than guess.

// text is a JSON string or number (or boolean) read as its text; null is
// "".
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errors.New("empty value")
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
	case string(b) == "null":
		*t = ""
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("want a string or a number, got %q", rest.Truncate(b))
	default:
		*t = text(b)
	}
	return nil
}

// millis reads a millisecond timestamp; "" and "0" are 0.
func (t text) millis() (int64, error) {
	s := strings.TrimSpace(string(t))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad timestamp %q", rest.Truncate(s))
	}
	return n, nil
}

// decode reads a result object into v.
func decode[T any](result []byte) (T, error) {
	var v T
	if len(bytes.TrimSpace(result)) == 0 {
		return v, errors.New("no result")
	}
	if err := json.Unmarshal(result, &v); err != nil {
		return v, fmt.Errorf("reading %q: %w", rest.Truncate(result), err)
	}
	return v, nil
}

// parseServerTime reads GET /v5/market/time: {"timeSecond","timeNano"}.
func parseServerTime(result []byte) (int64, error) {
	st, err := decode[struct {
		TimeSecond text `json:"timeSecond"`
		TimeNano   text `json:"timeNano"`
	}](result)
	if err != nil {
		return 0, err
	}
	if ns, err := strconv.ParseInt(string(st.TimeNano), 10, 64); err == nil && ns > 0 {
		return ns / 1e6, nil
	}
	if s, err := strconv.ParseInt(string(st.TimeSecond), 10, 64); err == nil && s > 0 {
		return s * 1000, nil
	}
	return 0, fmt.Errorf("bad server time %q", rest.Truncate(result))
}

// instrumentJSON is one spot item of GET /v5/market/instruments-info.
type instrumentJSON struct {
	Symbol        string `json:"symbol"`
	BaseCoin      string `json:"baseCoin"`
	QuoteCoin     string `json:"quoteCoin"`
	Status        string `json:"status"`
	LotSizeFilter struct {
		BasePrecision     rest.Decimal `json:"basePrecision"`
		QuotePrecision    rest.Decimal `json:"quotePrecision"`
		MinOrderQty       rest.Decimal `json:"minOrderQty"`
		MinOrderAmt       rest.Decimal `json:"minOrderAmt"`
		MaxLimitOrderQty  rest.Decimal `json:"maxLimitOrderQty"`
		MaxMarketOrderQty rest.Decimal `json:"maxMarketOrderQty"`
		MaxOrderAmt       rest.Decimal `json:"maxOrderAmt"`
	} `json:"lotSizeFilter"`
	PriceFilter struct {
		TickSize rest.Decimal `json:"tickSize"`
	} `json:"priceFilter"`
}

// parseInstruments reads the spot instrument list; an item without a
// symbol, its coins, a positive base precision or tick size is refused.
func parseInstruments(result []byte) ([]instrumentJSON, error) {
	v, err := decode[struct {
		List []instrumentJSON `json:"list"`
	}](result)
	if err != nil {
		return nil, err
	}
	for _, in := range v.List {
		if in.Symbol == "" || in.BaseCoin == "" || in.QuoteCoin == "" {
			return nil, fmt.Errorf("instrument %q without its coins", in.Symbol)
		}
		if !in.LotSizeFilter.BasePrecision.IsPositive() || !in.PriceFilter.TickSize.IsPositive() {
			return nil, fmt.Errorf("instrument %s without a positive basePrecision and tickSize", in.Symbol)
		}
	}
	return v.List, nil
}

// candle is one kline row: [startTime, open, high, low, close, volume,
// turnover], all strings.
type candle struct {
	start                          int64
	open, high, low, close, volume string
}

// parseKlines reads GET /v5/market/kline (rows newest first, as Bybit
// sends them). Prices and volume must be plain decimals.
func parseKlines(result []byte) ([]candle, error) {
	v, err := decode[struct {
		List [][]text `json:"list"`
	}](result)
	if err != nil {
		return nil, err
	}
	out := make([]candle, 0, len(v.List))
	for _, row := range v.List {
		if len(row) < 6 {
			return nil, fmt.Errorf("kline row of %d fields", len(row))
		}
		start, err := row[0].millis()
		if err != nil {
			return nil, err
		}
		c := candle{start: start, open: string(row[1]), high: string(row[2]), low: string(row[3]), close: string(row[4]), volume: string(row[5])}
		for _, f := range []string{c.open, c.high, c.low, c.close, c.volume} {
			if !plain(f) {
				return nil, fmt.Errorf("kline at %d: bad decimal %q", start, rest.Truncate(f))
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// plain reports whether s is a plain non-negative decimal.
func plain(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return true
}

// level is one book level as text and decimals.
type level struct {
	price, qty rest.Decimal
	p, q       string
}

// bookJSON is GET /v5/market/orderbook and the stream's book data.
type bookJSON struct {
	Symbol string   `json:"s"`
	Bids   [][]text `json:"b"`
	Asks   [][]text `json:"a"`
	U      int64    `json:"u"`
	Seq    int64    `json:"seq"`
	TS     int64    `json:"ts"`
}

// levels reads [[price, size], ...]; allowZero admits size 0 (a delete in
// a stream delta).
func levels(rows [][]text, allowZero bool) ([]level, error) {
	out := make([]level, 0, len(rows))
	for _, r := range rows {
		if len(r) < 2 || !plain(string(r[0])) || !plain(string(r[1])) {
			return nil, fmt.Errorf("bad book level %q", r)
		}
		var l level
		l.p, l.q = string(r[0]), string(r[1])
		if err := l.price.UnmarshalJSON([]byte(l.p)); err != nil {
			return nil, err
		}
		if err := l.qty.UnmarshalJSON([]byte(l.q)); err != nil {
			return nil, err
		}
		if !l.price.IsPositive() || (!allowZero && !l.qty.IsPositive()) {
			return nil, fmt.Errorf("bad book level %q", r)
		}
		out = append(out, l)
	}
	return out, nil
}

// parseBook reads the REST order book.
func parseBook(result []byte) (bids, asks []level, err error) {
	v, err := decode[bookJSON](result)
	if err != nil {
		return nil, nil, err
	}
	if bids, err = levels(v.Bids, false); err != nil {
		return nil, nil, err
	}
	if asks, err = levels(v.Asks, false); err != nil {
		return nil, nil, err
	}
	return bids, asks, nil
}

// orderAckJSON is the answer of order/create and order/cancel.
type orderAckJSON struct {
	OrderID     string `json:"orderId"`
	OrderLinkID string `json:"orderLinkId"`
}

// parseOrderAck reads an order acknowledgement; it must name the order.
func parseOrderAck(result []byte) (orderAckJSON, error) {
	v, err := decode[orderAckJSON](result)
	if err == nil && v.OrderID == "" && v.OrderLinkID == "" {
		err = errors.New("acknowledgement without an order id")
	}
	return v, err
}

// orderJSON is one order of order/realtime, order/history and the order
// stream topic.
type orderJSON struct {
	OrderID      string          `json:"orderId"`
	OrderLinkID  string          `json:"orderLinkId"`
	Symbol       string          `json:"symbol"`
	Category     string          `json:"category"`
	Price        rest.Decimal    `json:"price"`
	Qty          rest.Decimal    `json:"qty"`
	Side         string          `json:"side"`
	OrderStatus  string          `json:"orderStatus"`
	CancelType   string          `json:"cancelType"`
	RejectReason string          `json:"rejectReason"`
	AvgPrice     rest.Decimal    `json:"avgPrice"`
	CumExecQty   rest.Decimal    `json:"cumExecQty"`
	CumExecValue rest.Decimal    `json:"cumExecValue"`
	CumExecFee   rest.Decimal    `json:"cumExecFee"`
	CumFeeDetail map[string]text `json:"cumFeeDetail"`
	FeeCurrency  string          `json:"feeCurrency"`
	TimeInForce  string          `json:"timeInForce"`
	OrderType    string          `json:"orderType"`
	MarketUnit   string          `json:"marketUnit"`
	CreatedTime  text            `json:"createdTime"`
	UpdatedTime  text            `json:"updatedTime"`
}

// checkOrder refuses an order record without its ids, side or times.
func checkOrder(o orderJSON) error {
	if o.OrderID == "" {
		return errors.New("order without an orderId")
	}
	if o.Side != "Buy" && o.Side != "Sell" {
		return fmt.Errorf("order %s with side %q", o.OrderID, o.Side)
	}
	if _, err := o.CreatedTime.millis(); err != nil {
		return fmt.Errorf("order %s: %w", o.OrderID, err)
	}
	if _, err := o.UpdatedTime.millis(); err != nil {
		return fmt.Errorf("order %s: %w", o.OrderID, err)
	}
	return nil
}

// listJSON is a page of a cursor-paged list.
type listJSON[T any] struct {
	List   []T    `json:"list"`
	Rows   []T    `json:"rows"`
	Cursor string `json:"nextPageCursor"`
}

// items is the page's records (Bybit names them list or rows).
func (l listJSON[T]) items() []T {
	if l.List != nil {
		return l.List
	}
	return l.Rows
}

// parseOrders reads a page of orders.
func parseOrders(result []byte) (listJSON[orderJSON], error) {
	v, err := decode[listJSON[orderJSON]](result)
	if err != nil {
		return v, err
	}
	for _, o := range v.items() {
		if err := checkOrder(o); err != nil {
			return v, err
		}
	}
	return v, nil
}

// executionJSON is one fill of execution/list.
type executionJSON struct {
	Symbol      string       `json:"symbol"`
	OrderID     string       `json:"orderId"`
	OrderLinkID string       `json:"orderLinkId"`
	Side        string       `json:"side"`
	ExecID      string       `json:"execId"`
	ExecPrice   rest.Decimal `json:"execPrice"`
	ExecQty     rest.Decimal `json:"execQty"`
	ExecValue   rest.Decimal `json:"execValue"`
	ExecFee     rest.Decimal `json:"execFee"`
	FeeCurrency string       `json:"feeCurrency"`
	IsMaker     bool         `json:"isMaker"`
	ExecTime    text         `json:"execTime"`
	ExecType    string       `json:"execType"`
}

// parseExecutions reads a page of fills.
func parseExecutions(result []byte) (listJSON[executionJSON], error) {
	v, err := decode[listJSON[executionJSON]](result)
	if err != nil {
		return v, err
	}
	for _, x := range v.items() {
		if x.ExecID == "" || (x.Side != "Buy" && x.Side != "Sell") || !x.ExecPrice.Set || !x.ExecQty.Set {
			return v, fmt.Errorf("fill %q without its id, side, price or quantity", x.ExecID)
		}
		if _, err := x.ExecTime.millis(); err != nil {
			return v, err
		}
	}
	return v, nil
}

// walletCoinJSON is one coin of the unified wallet.
type walletCoinJSON struct {
	Coin          string       `json:"coin"`
	WalletBalance rest.Decimal `json:"walletBalance"`
	Locked        rest.Decimal `json:"locked"`
}

// parseWalletBalance reads GET /v5/account/wallet-balance.
func parseWalletBalance(result []byte) ([]walletCoinJSON, error) {
	v, err := decode[struct {
		List []struct {
			AccountType string           `json:"accountType"`
			Coin        []walletCoinJSON `json:"coin"`
		} `json:"list"`
	}](result)
	if err != nil {
		return nil, err
	}
	var out []walletCoinJSON
	for _, a := range v.List {
		for _, c := range a.Coin {
			if c.Coin == "" || c.WalletBalance.IsNegative() || c.Locked.IsNegative() {
				return nil, fmt.Errorf("bad wallet row %q", c.Coin)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// fundCoinJSON is one coin of the funding wallet.
type fundCoinJSON struct {
	Coin            string       `json:"coin"`
	WalletBalance   rest.Decimal `json:"walletBalance"`
	TransferBalance rest.Decimal `json:"transferBalance"`
}

// parseFundBalance reads GET /v5/asset/transfer/query-account-coins-balance.
func parseFundBalance(result []byte) ([]fundCoinJSON, error) {
	v, err := decode[struct {
		AccountType string         `json:"accountType"`
		Balance     []fundCoinJSON `json:"balance"`
	}](result)
	if err != nil {
		return nil, err
	}
	for _, c := range v.Balance {
		if c.Coin == "" || c.WalletBalance.IsNegative() || c.TransferBalance.IsNegative() {
			return nil, fmt.Errorf("bad funding row %q", c.Coin)
		}
	}
	return v.Balance, nil
}

// chainJSON is one chain of a coin (GET /v5/asset/coin/query-info).
type chainJSON struct {
	Chain                 string       `json:"chain"`
	ChainType             string       `json:"chainType"`
	WithdrawFee           rest.Decimal `json:"withdrawFee"`
	WithdrawMin           rest.Decimal `json:"withdrawMin"`
	WithdrawPercentageFee rest.Decimal `json:"withdrawPercentageFee"`
	MinAccuracy           text         `json:"minAccuracy"`
	ChainDeposit          text         `json:"chainDeposit"`
	ChainWithdraw         text         `json:"chainWithdraw"`
}

// parseCoinInfo reads the coins and their chains.
func parseCoinInfo(result []byte) (map[string][]chainJSON, error) {
	v, err := decode[struct {
		Rows []struct {
			Coin   string      `json:"coin"`
			Chains []chainJSON `json:"chains"`
		} `json:"rows"`
	}](result)
	if err != nil {
		return nil, err
	}
	out := map[string][]chainJSON{}
	for _, r := range v.Rows {
		if r.Coin == "" {
			return nil, errors.New("coin row without a coin")
		}
		out[strings.ToUpper(r.Coin)] = r.Chains
	}
	return out, nil
}

// depositJSON is one record of GET /v5/asset/deposit/query-record.
type depositJSON struct {
	ID        text         `json:"id"`
	Coin      string       `json:"coin"`
	Chain     string       `json:"chain"`
	Amount    rest.Decimal `json:"amount"`
	TxID      string       `json:"txID"`
	Status    text         `json:"status"`
	ToAddress string       `json:"toAddress"`
	Tag       string       `json:"tag"`
	SuccessAt text         `json:"successAt"`
}

// parseDeposits reads a page of deposits.
func parseDeposits(result []byte) (listJSON[depositJSON], error) {
	v, err := decode[listJSON[depositJSON]](result)
	if err != nil {
		return v, err
	}
	for _, d := range v.items() {
		if d.Coin == "" || d.Status == "" || !d.Amount.Set {
			return v, fmt.Errorf("deposit %q without its coin, status or amount", d.ID)
		}
		if _, err := d.SuccessAt.millis(); err != nil {
			return v, err
		}
	}
	return v, nil
}

// addressJSON is GET /v5/asset/deposit/query-address.
type addressJSON struct {
	Coin   string `json:"coin"`
	Chains []struct {
		ChainType      string `json:"chainType"`
		AddressDeposit string `json:"addressDeposit"`
		TagDeposit     string `json:"tagDeposit"`
		Chain          string `json:"chain"`
	} `json:"chains"`
}

func parseAddress(result []byte) (addressJSON, error) { return decode[addressJSON](result) }

// parseWithdrawAck reads the answer of asset/withdraw/create: {"id"}.
func parseWithdrawAck(result []byte) (string, error) {
	v, err := decode[struct {
		ID text `json:"id"`
	}](result)
	if err == nil && v.ID == "" {
		err = errors.New("withdrawal answer without an id")
	}
	return string(v.ID), err
}

// withdrawalJSON is one record of GET /v5/asset/withdraw/query-record.
type withdrawalJSON struct {
	WithdrawID  text         `json:"withdrawId"`
	Coin        string       `json:"coin"`
	Chain       string       `json:"chain"`
	Amount      rest.Decimal `json:"amount"`
	WithdrawFee rest.Decimal `json:"withdrawFee"`
	Status      string       `json:"status"`
	ToAddress   string       `json:"toAddress"`
	Tag         string       `json:"tag"`
	TxID        string       `json:"txID"`
	CreateTime  text         `json:"createTime"`
	UpdateTime  text         `json:"updateTime"`
}

// parseWithdrawals reads a page of withdrawals.
func parseWithdrawals(result []byte) (listJSON[withdrawalJSON], error) {
	v, err := decode[listJSON[withdrawalJSON]](result)
	if err != nil {
		return v, err
	}
	for _, w := range v.items() {
		if w.WithdrawID == "" || w.Coin == "" || w.Status == "" || !w.Amount.Set {
			return v, fmt.Errorf("withdrawal %q without its id, coin, status or amount", w.WithdrawID)
		}
		if _, err := w.CreateTime.millis(); err != nil {
			return v, err
		}
	}
	return v, nil
}

// transferJSON is an inter-transfer's answer and list record.
type transferJSON struct {
	TransferID      string       `json:"transferId"`
	Coin            string       `json:"coin"`
	Amount          rest.Decimal `json:"amount"`
	FromAccountType string       `json:"fromAccountType"`
	ToAccountType   string       `json:"toAccountType"`
	Timestamp       text         `json:"timestamp"`
	Status          string       `json:"status"`
}

// parseTransferAck reads the answer of inter-transfer: {transferId, status}.
func parseTransferAck(result []byte) (transferJSON, error) {
	v, err := decode[transferJSON](result)
	if err == nil && v.TransferID == "" {
		err = errors.New("transfer answer without a transferId")
	}
	return v, err
}

// parseTransfers reads a page of transfers.
func parseTransfers(result []byte) (listJSON[transferJSON], error) {
	v, err := decode[listJSON[transferJSON]](result)
	if err != nil {
		return v, err
	}
	for _, t := range v.items() {
		if t.TransferID == "" || t.Coin == "" || !t.Amount.Set {
			return v, fmt.Errorf("transfer %q without its id, coin or amount", t.TransferID)
		}
		if _, err := t.Timestamp.millis(); err != nil {
			return v, err
		}
	}
	return v, nil
}

// keyInfoJSON is GET /v5/user/query-api.
type keyInfoJSON struct {
	ReadOnly    int      `json:"readOnly"`
	IPs         []string `json:"ips"`
	Permissions struct {
		Spot   []string `json:"Spot"`
		Wallet []string `json:"Wallet"`
	} `json:"permissions"`
}

func parseKeyInfo(result []byte) (keyInfoJSON, error) { return decode[keyInfoJSON](result) }
