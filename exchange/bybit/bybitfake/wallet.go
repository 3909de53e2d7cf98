package bybitfake

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// chain is one network of a coin: its withdrawal fee, percentage fee,
// minimum and decimals, and whether it has a tag.
type chain struct {
	coin, chain, chainType string
	fee, pct, min          decimal.Decimal
	accuracy               int32
	tag                    bool
}

// chains are the fake's coins and networks (coin-info), in a fixed order.
var chains = func() []chain {
	d := decimal.RequireFromString
	return []chain{
		{"BTC", "BTC", "BTC", d("0.0002"), d("0"), d("0.001"), 8, false},
		{"ETH", "ETH", "ERC20", d("0.0015"), d("0"), d("0.01"), 8, false},
		{"ETH", "ARBI", "Arbitrum One", d("0.0001"), d("0"), d("0.001"), 8, false},
		{"USDT", "ETH", "ERC20", d("5"), d("0"), d("10"), 6, false},
		{"USDT", "TRX", "TRC20", d("1"), d("0"), d("10"), 6, false},
		{"USDT", "BSC", "BEP20", d("0.3"), d("0"), d("10"), 6, false},
		{"XRP", "XRP", "XRP", d("0.25"), d("0"), d("20"), 6, true},
		{"SOL", "SOL", "SOL", d("0.01"), d("0.001"), d("0.1"), 6, false},
	}
}()

// knownCoin reports whether the fake lists the coin.
func knownCoin(coin string) bool {
	for _, c := range chains {
		if c.coin == coin {
			return true
		}
	}
	return false
}

func findChain(coin, ch string) *chain {
	for i := range chains {
		if chains[i].coin == coin && chains[i].chain == ch {
			return &chains[i]
		}
	}
	return nil
}

// handleWalletBalance serves GET /v5/account/wallet-balance
// accountType=UNIFIED: non-zero coins only unless coin names them.
func (s *Server) handleWalletBalance(c *call) (any, *apiError) {
	if c.query.Get("accountType") != "UNIFIED" {
		return nil, errorf(10001, "accountType only support UNIFIED.")
	}
	want := map[string]bool{}
	for _, coin := range strings.Split(c.query.Get("coin"), ",") {
		if coin != "" {
			want[coin] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	coins := []map[string]any{}
	for _, coin := range sortedKeys(a.unified) {
		bal := a.unified[coin]
		if (len(want) > 0 && !want[coin]) || (len(want) == 0 && bal.IsZero()) {
			continue
		}
		coins = append(coins, map[string]any{
			"coin": coin, "walletBalance": bal.String(), "locked": a.locked[coin].String(), "equity": bal.String(),
			"usdValue": "", "borrowAmount": "0", "availableToWithdraw": "", "availableToBorrow": "", "accruedInterest": "0",
			"totalOrderIM": "0", "totalPositionIM": "0", "unrealisedPnl": "0", "cumRealisedPnl": "0", "bonus": "0",
			"marginCollateral": true, "collateralSwitch": true, "spotBorrow": "0", "free": "",
		})
	}
	return map[string]any{"list": []map[string]any{{"accountType": "UNIFIED", "totalEquity": "", "coin": coins}}}, nil
}

func sortedKeys(m map[string]decimal.Decimal) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// handleFundBalance serves GET /v5/asset/transfer/query-account-coins-balance
// for accountType FUND (coin optional) and UNIFIED (coin required).
func (s *Server) handleFundBalance(c *call) (any, *apiError) {
	at := c.query.Get("accountType")
	if at != "FUND" && at != "UNIFIED" {
		return nil, errorf(131203, "request parameter err: accountType invalid")
	}
	if at == "UNIFIED" && c.query.Get("coin") == "" {
		return nil, errorf(131203, "request parameter err: coin invalid")
	}
	want := map[string]bool{}
	for _, coin := range strings.Split(c.query.Get("coin"), ",") {
		if coin != "" {
			want[coin] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	wallet := a.fund
	if at == "UNIFIED" {
		wallet = a.unified
	}
	rows := []map[string]string{}
	for _, coin := range sortedKeys(wallet) {
		bal := wallet[coin]
		if (len(want) > 0 && !want[coin]) || (len(want) == 0 && bal.IsZero() && !s.opts.FundListsZero) {
			continue
		}
		free := bal
		if at == "UNIFIED" {
			free = a.available(coin)
		}
		rows = append(rows, map[string]string{"coin": coin, "walletBalance": bal.String(), "transferBalance": free.String(), "bonus": "0"})
	}
	return map[string]any{"memberId": "533285", "accountType": at, "balance": rows}, nil
}

// handleCoinInfo serves GET /v5/asset/coin/query-info.
func (s *Server) handleCoinInfo(c *call) (any, *apiError) {
	want := c.query.Get("coin")
	rows := []map[string]any{}
	var coins []string
	for _, ch := range chains {
		if !slices.Contains(coins, ch.coin) {
			coins = append(coins, ch.coin)
		}
	}
	for _, coin := range coins {
		if want != "" && want != coin {
			continue
		}
		var cs []map[string]string
		for _, ch := range chains {
			if ch.coin != coin {
				continue
			}
			cs = append(cs, map[string]string{
				"chain": ch.chain, "chainType": ch.chainType, "confirmation": "6", "withdrawFee": ch.fee.String(),
				"depositMin": "0", "withdrawMin": ch.min.String(), "minAccuracy": strconv.Itoa(int(ch.accuracy)),
				"chainDeposit": "1", "chainWithdraw": "1", "withdrawPercentageFee": ch.pct.String(), "contractAddress": "",
				"safeConfirmNumber": "12",
			})
		}
		rows = append(rows, map[string]any{"name": coin, "coin": coin, "remainAmount": "1000000", "chains": cs})
	}
	return map[string]any{"rows": rows}, nil
}

// handleDeposits serves GET /v5/asset/deposit/query-record: a window
// under 30 days (default the last 30), newest first, limit [1, 50]
// default 50.
func (s *Server) handleDeposits(c *call) (any, *apiError) {
	from, to, e := window(c, 30*24*time.Hour)
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(c.query, 50, 50)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	var ds []Deposit
	for _, d := range c.acc.deposits {
		if (c.query.Get("coin") != "" && d.Coin != c.query.Get("coin")) || d.Time.Before(from) || d.Time.After(to) {
			continue
		}
		ds = append(ds, d)
	}
	s.mu.Unlock()
	slices.SortStableFunc(ds, func(a, b Deposit) int { return b.Time.Compare(a.Time) })
	pg, next, e := page(ds, c.query.Get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	rows := make([]map[string]any, 0, len(pg))
	for _, d := range pg {
		rows = append(rows, map[string]any{
			"id": d.ID, "coin": d.Coin, "chain": d.Chain, "amount": d.Amount, "txID": d.TxID, "status": d.Status,
			"toAddress": d.Address, "tag": d.Tag, "depositFee": "", "successAt": ms(d.Time), "confirmations": "12",
			"txIndex": "0", "blockHash": "", "batchReleaseLimit": "-1", "depositType": "0", "fromAddress": "",
		})
	}
	return map[string]any{"rows": rows, "nextPageCursor": next}, nil
}

// DepositAddressOf is the fake's deposit address of a coin on a chain and
// its tag ("" when the chain has none).
func DepositAddressOf(coin, ch string) (string, string) {
	switch ch {
	case "BTC":
		return "bc1qfakebybit0" + strings.ToLower(coin), ""
	case "TRX":
		return "TFakeBybitTron" + coin, ""
	case "XRP":
		return "rFakeBybitRippleAddr", "700123"
	case "SOL":
		return "FakeBybitSol" + coin, ""
	}
	return "0xfakebybit" + strings.ToLower(coin+ch), ""
}

// handleDepositAddress serves GET /v5/asset/deposit/query-address.
func (s *Server) handleDepositAddress(c *call) (any, *apiError) {
	coin := c.query.Get("coin")
	if coin == "" {
		return nil, errorf(10001, "params error: coin is required")
	}
	var out []map[string]string
	for _, ch := range chains {
		if ch.coin != coin || (c.query.Get("chainType") != "" && c.query.Get("chainType") != ch.chain) {
			continue
		}
		addr, tag := DepositAddressOf(coin, ch.chain)
		out = append(out, map[string]string{"chainType": ch.chainType, "addressDeposit": addr, "tagDeposit": tag, "chain": ch.chain, "batchReleaseLimit": "-1", "contractAddress": ""})
	}
	if out == nil {
		return nil, errorf(131002, "coin or chain not supported")
	}
	return map[string]any{"coin": coin, "chains": out}, nil
}

// withdrawal is one withdrawal of an account.
type withdrawal struct {
	requestID, id, coin, chain, address, tag, status, txID string
	amount, fee                                            decimal.Decimal
	created, updated                                       time.Time
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)

// handleWithdraw serves POST /v5/asset/withdraw/create: the timestamp in
// the body, an address of the address book (AddressRefusalCode
// otherwise), a tag only where the chain has one (131081), a requestId used
// once (131082), at most the chain's decimals (131210), its minimum
// (131096), and the fee (feeType 0: on top; 1: out of the amount) taken
// from the funding wallet, which must cover it (131001).
func (s *Server) handleWithdraw(c *call) (any, *apiError) {
	var b struct {
		Coin        string `json:"coin"`
		Chain       string `json:"chain"`
		Address     string `json:"address"`
		Tag         string `json:"tag"`
		Amount      string `json:"amount"`
		Timestamp   int64  `json:"timestamp"`
		ForceChain  int    `json:"forceChain"`
		AccountType string `json:"accountType"`
		FeeType     int    `json:"feeType"`
		RequestID   string `json:"requestId"`
	}
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	if b.Timestamp <= 0 || b.Coin == "" || b.Chain == "" || b.Address == "" || b.Amount == "" || b.AccountType == "" {
		return nil, errorf(10001, "params error: coin, chain, address, amount, timestamp and accountType are required")
	}
	if b.AccountType != "FUND" {
		return nil, errorf(10001, "params error: this fake takes accountType FUND only")
	}
	if b.RequestID != "" && !requestIDPattern.MatchString(b.RequestID) {
		return nil, errorf(10001, "params error: requestId invalid")
	}
	ch := findChain(b.Coin, b.Chain)
	if ch == nil {
		return nil, errorf(131002, "Withdraw address chain or destination tag are not equal")
	}
	amount, err := decimal.NewFromString(b.Amount)
	if err != nil || !amount.IsPositive() {
		return nil, errorf(10001, "params error: amount invalid")
	}
	if !amount.Equal(amount.RoundDown(ch.accuracy)) {
		return nil, errorf(131210, "Amount accuracy error")
	}
	if b.Tag != "" && !ch.tag {
		return nil, errorf(131081, "Do not input memo/tag,please.")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	if a.ReadOnly {
		return nil, errorf(10005, "Permission denied, please check your API key permissions.")
	}
	if b.RequestID != "" && a.requestIDs[b.RequestID] {
		return nil, errorf(131082, "Do not repeat the request")
	}
	if !slices.Contains(a.AddressBook, BookAddress{Coin: b.Coin, Chain: b.Chain, Address: b.Address, Tag: b.Tag}) {
		return nil, errorf(s.opts.AddressRefusalCode, "Withdraw address chain or destination tag are not equal")
	}
	if amount.LessThan(ch.min) {
		return nil, errorf(131096, "Withdraw amount is less than the minimum")
	}
	fee := ch.fee
	arrives, debit := amount, amount
	if b.FeeType == 1 {
		fee = ch.fee.Add(amount.Sub(ch.fee).Mul(ch.pct))
		arrives = amount.Sub(fee)
	} else {
		if ch.pct.IsPositive() {
			fee = fee.Add(amount.DivRound(decimal.NewFromInt(1).Sub(ch.pct), 18).Mul(ch.pct))
		}
		debit = amount.Add(fee)
	}
	if a.fund[b.Coin].LessThan(debit) {
		return nil, errorf(131001, "the available balance is not sufficient to cover the handling fee")
	}
	a.fund[b.Coin] = a.fund[b.Coin].Sub(debit)
	if b.RequestID != "" {
		a.requestIDs[b.RequestID] = true
	}
	s.nextWID++
	w := &withdrawal{requestID: b.RequestID, id: strconv.FormatInt(s.nextWID, 10), coin: b.Coin, chain: b.Chain, address: b.Address, tag: b.Tag,
		amount: arrives, fee: fee, status: "success", txID: fmt.Sprintf("0xfaketx%d", s.nextWID), created: c.now, updated: c.now}
	if a.PendingWithdrawals {
		w.status, w.txID = "Pending", ""
	}
	a.withdrawals = append(a.withdrawals, w)
	return map[string]string{"id": w.id}, nil
}

// SetWithdrawalStatus changes the status of an account's withdrawal.
func (s *Server) SetWithdrawalStatus(apiKey, id, status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		for _, w := range a.withdrawals {
			if w.id == id {
				w.status = status
				return nil
			}
		}
	}
	return fmt.Errorf("bybitfake: no withdrawal %s", id)
}

// Withdrawals returns how many withdrawals the account made.
func (s *Server) Withdrawals(apiKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return len(a.withdrawals)
	}
	return 0
}

// WithdrawalsByRequestID returns how many withdrawals the account made
// with the given requestId (0 or 1: Bybit refuses a repeat).
func (s *Server) WithdrawalsByRequestID(apiKey, requestID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	if a := s.accounts[apiKey]; a != nil {
		for _, w := range a.withdrawals {
			if w.requestID == requestID {
				n++
			}
		}
	}
	return n
}

// handleWithdrawals serves GET /v5/asset/withdraw/query-record:
// withdrawType 0 (on-chain, the default), 1 (internal) or 2 (all); a window
// under 30 days; newest first; limit [1, 50] default 50.
func (s *Server) handleWithdrawals(c *call) (any, *apiError) {
	from, to, e := window(c, 30*24*time.Hour)
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(c.query, 50, 50)
	if e != nil {
		return nil, e
	}
	if wt := c.query.Get("withdrawType"); wt != "" && wt != "0" && wt != "1" && wt != "2" {
		return nil, errorf(10001, "params error: withdrawType invalid")
	}
	s.mu.Lock()
	var ws []*withdrawal
	for i := len(c.acc.withdrawals) - 1; i >= 0; i-- {
		w := c.acc.withdrawals[i]
		if id := c.query.Get("withdrawID"); id != "" {
			if w.id == id {
				ws = append(ws, w)
			}
			continue
		}
		if c.query.Get("withdrawType") == "1" || (c.query.Get("coin") != "" && w.coin != c.query.Get("coin")) || w.created.Before(from) || w.created.After(to) {
			continue
		}
		ws = append(ws, w)
	}
	s.mu.Unlock()
	pg, next, e := page(ws, c.query.Get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	rows := make([]map[string]any, 0, len(pg))
	for _, w := range pg {
		rows = append(rows, map[string]any{
			"coin": w.coin, "chain": w.chain, "amount": w.amount.String(), "txID": w.txID, "status": w.status, "toAddress": w.address,
			"tag": w.tag, "withdrawFee": w.fee.String(), "createTime": ms(w.created), "updateTime": ms(w.updated),
			"withdrawId": w.id, "withdrawType": 0, "fee": "", "tax": "", "taxRate": "", "taxType": "",
		})
	}
	return map[string]any{"rows": rows, "nextPageCursor": next}, nil
}

// transfer is one inter-transfer of an account.
type transfer struct {
	id, coin, from, to, status string
	amount                     decimal.Decimal
	at                         time.Time
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// handleTransfer serves POST /v5/asset/transfer/inter-transfer between
// UNIFIED and FUND: a UUID transferId used once (131214), an upper-case
// coin, at most 8 decimals (131210), two different account types (131211)
// and enough of the coin in the source (131212).
func (s *Server) handleTransfer(c *call) (any, *apiError) {
	var b struct {
		TransferID      string `json:"transferId"`
		Coin            string `json:"coin"`
		Amount          string `json:"amount"`
		FromAccountType string `json:"fromAccountType"`
		ToAccountType   string `json:"toAccountType"`
	}
	if e := decodeBody(c.body, &b); e != nil {
		return nil, e
	}
	switch {
	case !uuidPattern.MatchString(b.TransferID):
		return nil, errorf(131203, "request parameter err: transferId invalid")
	case b.Coin == "" || b.Coin != strings.ToUpper(b.Coin) || !knownCoin(b.Coin):
		return nil, errorf(131203, "request parameter err: coin invalid")
	case (b.FromAccountType != "UNIFIED" && b.FromAccountType != "FUND") || (b.ToAccountType != "UNIFIED" && b.ToAccountType != "FUND"):
		return nil, errorf(131203, "request parameter err: accountType invalid")
	case b.FromAccountType == b.ToAccountType:
		return nil, errorf(131211, "fromAccountType can't be the same as toAccountType")
	}
	amount, err := decimal.NewFromString(b.Amount)
	if err != nil || !amount.IsPositive() || strings.ContainsAny(b.Amount, "eE+ ") {
		return nil, errorf(131203, "request parameter err: amount invalid")
	}
	if !amount.Equal(amount.RoundDown(8)) {
		return nil, errorf(131210, "Amount accuracy error")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := c.acc
	if a.ReadOnly {
		return nil, errorf(10005, "Permission denied, please check your API key permissions.")
	}
	for _, t := range a.transfers {
		if t.id == b.TransferID {
			return nil, errorf(131214, "TransferId exist")
		}
	}
	src, dst := a.unified, a.fund
	free := a.available(b.Coin)
	if b.FromAccountType == "FUND" {
		src, dst, free = a.fund, a.unified, a.fund[b.Coin]
	}
	if free.LessThan(amount) {
		return nil, errorf(131212, "Insufficient balance")
	}
	src[b.Coin] = src[b.Coin].Sub(amount)
	dst[b.Coin] = dst[b.Coin].Add(amount)
	t := &transfer{id: b.TransferID, coin: b.Coin, from: b.FromAccountType, to: b.ToAccountType, status: "SUCCESS", amount: amount, at: c.now.Truncate(time.Second)}
	a.transfers = append(a.transfers, t)
	return map[string]string{"transferId": t.id, "status": t.status}, nil
}

// TransfersOf returns how many transfers of the coin and amount the
// account made.
func (s *Server) TransfersOf(apiKey, coin, amount string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	want, _ := decimal.NewFromString(amount)
	if a := s.accounts[apiKey]; a != nil {
		for _, t := range a.transfers {
			if t.coin == coin && t.amount.Equal(want) {
				n++
			}
		}
	}
	return n
}

// Transfers returns how many transfers the account made.
func (s *Server) Transfers(apiKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return len(a.transfers)
	}
	return 0
}

// handleTransfers serves GET /v5/asset/transfer/query-inter-transfer-list:
// a window of at most 7 days (default the last 7; it applies to a lookup
// by transferId too), newest first, limit [1, 50] default 20.
func (s *Server) handleTransfers(c *call) (any, *apiError) {
	from, to, e := window(c, 7*24*time.Hour)
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(c.query, 20, 50)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	var ts []*transfer
	for i := len(c.acc.transfers) - 1; i >= 0; i-- {
		t := c.acc.transfers[i]
		q := c.query
		if (q.Get("transferId") != "" && t.id != q.Get("transferId")) || (q.Get("coin") != "" && t.coin != q.Get("coin")) ||
			(q.Get("status") != "" && t.status != q.Get("status")) || t.at.Before(from.Truncate(time.Second)) || t.at.After(to) {
			continue
		}
		ts = append(ts, t)
	}
	s.mu.Unlock()
	pg, next, e := page(ts, c.query.Get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	list := make([]map[string]string, 0, len(pg))
	for _, t := range pg {
		list = append(list, map[string]string{"transferId": t.id, "coin": t.coin, "amount": t.amount.String(),
			"fromAccountType": t.from, "toAccountType": t.to, "timestamp": ms(t.at), "status": t.status})
	}
	return map[string]any{"list": list, "nextPageCursor": next}, nil
}
