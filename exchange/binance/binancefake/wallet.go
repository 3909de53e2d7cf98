package binancefake

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// network is a coin's network in the fake's wallet configuration.
type network struct {
	coin, network, name    string
	fee, min, max          decimal.Decimal
	multiple               decimal.Decimal
	addressRegex           string
	memoRegex              string
	memoRequired           bool
	isDefault              bool
	depositOn, withdrawOn  bool
	addressRe, memoRe      *regexp.Regexp
	addressKind            string // btc, evm, trx, sol, xrp
	confirmations, arrival int
}

// coinNetworks is the wallet configuration: fees, minimums and address
// patterns in the shape of GET /sapi/v1/capital/config/getall.
var coinNetworks = func() []*network {
	evm := `^(0x)[0-9A-Fa-f]{40}$`
	nws := []*network{
		{coin: "BTC", network: "BTC", name: "Bitcoin", fee: dec("0.0002"), min: dec("0.001"), max: dec("7500"), multiple: dec("0.00000001"),
			addressRegex: `^(bc1|[13])[a-zA-HJ-NP-Z0-9]{25,62}$`, isDefault: true, addressKind: "btc", confirmations: 1, arrival: 60},
		{coin: "ETH", network: "ETH", name: "Ethereum (ERC20)", fee: dec("0.0008"), min: dec("0.0016"), max: dec("10000"), multiple: dec("0.00000001"),
			addressRegex: evm, isDefault: true, addressKind: "evm", confirmations: 6, arrival: 5},
		{coin: "USDT", network: "ETH", name: "Ethereum (ERC20)", fee: dec("3.5"), min: dec("10"), max: dec("10000000"), multiple: dec("0.000001"),
			addressRegex: evm, addressKind: "evm", confirmations: 6, arrival: 5},
		{coin: "USDT", network: "TRX", name: "Tron (TRC20)", fee: dec("1"), min: dec("10"), max: dec("10000000"), multiple: dec("0.000001"),
			addressRegex: `^T[1-9A-HJ-NP-Za-km-z]{33}$`, isDefault: true, addressKind: "trx", confirmations: 1, arrival: 2},
		{coin: "USDT", network: "BSC", name: "BNB Smart Chain (BEP20)", fee: dec("0.8"), min: dec("10"), max: dec("10000000"), multiple: dec("0.00000001"),
			addressRegex: evm, addressKind: "evm", confirmations: 15, arrival: 1},
		{coin: "SOL", network: "SOL", name: "Solana", fee: dec("0.008"), min: dec("0.1"), max: dec("250000"), multiple: dec("0.00000001"),
			addressRegex: `^[1-9A-HJ-NP-Za-km-z]{32,44}$`, isDefault: true, addressKind: "sol", confirmations: 1, arrival: 1},
		{coin: "BNB", network: "BSC", name: "BNB Smart Chain (BEP20)", fee: dec("0.0005"), min: dec("0.01"), max: dec("100000"), multiple: dec("0.00000001"),
			addressRegex: evm, isDefault: true, addressKind: "evm", confirmations: 15, arrival: 1},
		{coin: "XRP", network: "XRP", name: "Ripple", fee: dec("0.2"), min: dec("2"), max: dec("5000000"), multiple: dec("0.000001"),
			addressRegex: `^r[1-9A-HJ-NP-Za-km-z]{24,34}$`, memoRegex: `^[0-9]{1,10}$`, memoRequired: true, isDefault: true, addressKind: "xrp", confirmations: 1, arrival: 1},
	}
	for _, n := range nws {
		n.depositOn, n.withdrawOn = true, true
		n.addressRe = regexp.MustCompile(n.addressRegex)
		if n.memoRegex != "" {
			n.memoRe = regexp.MustCompile(n.memoRegex)
		}
	}
	return nws
}()

// findNetwork returns the coin's network (its default when name is "").
func findNetwork(coin, name string) *network {
	for _, n := range coinNetworks {
		if n.coin == coin && (n.network == name || (name == "" && n.isDefault)) {
			return n
		}
	}
	return nil
}

func coinKnown(coin string) bool {
	for _, n := range coinNetworks {
		if n.coin == coin {
			return true
		}
	}
	return false
}

// encodeCoinConfig writes GET /sapi/v1/capital/config/getall's answer.
func encodeCoinConfig() []byte {
	type coinJSON struct {
		Coin              string           `json:"coin"`
		DepositAllEnable  bool             `json:"depositAllEnable"`
		WithdrawAllEnable bool             `json:"withdrawAllEnable"`
		Name              string           `json:"name"`
		Free              string           `json:"free"`
		Locked            string           `json:"locked"`
		Freeze            string           `json:"freeze"`
		Withdrawing       string           `json:"withdrawing"`
		Ipoing            string           `json:"ipoing"`
		Ipoable           string           `json:"ipoable"`
		Storage           string           `json:"storage"`
		IsLegalMoney      bool             `json:"isLegalMoney"`
		Trading           bool             `json:"trading"`
		NetworkList       []map[string]any `json:"networkList"`
	}
	var out []*coinJSON
	byCoin := map[string]*coinJSON{}
	for _, n := range coinNetworks {
		c := byCoin[n.coin]
		if c == nil {
			c = &coinJSON{Coin: n.coin, DepositAllEnable: true, WithdrawAllEnable: true, Name: n.coin, Free: "0", Locked: "0", Freeze: "0",
				Withdrawing: "0", Ipoing: "0", Ipoable: "0", Storage: "0", Trading: true}
			byCoin[n.coin] = c
			out = append(out, c)
		}
		c.NetworkList = append(c.NetworkList, map[string]any{
			"network": n.network, "coin": n.coin, "withdrawIntegerMultiple": n.multiple.String(), "isDefault": n.isDefault,
			"depositEnable": n.depositOn, "withdrawEnable": n.withdrawOn, "depositDesc": "", "withdrawDesc": "", "specialTips": "",
			"specialWithdrawTips": "", "name": n.name, "resetAddressStatus": false, "addressRegex": n.addressRegex, "addressRule": "",
			"memoRegex": n.memoRegex, "withdrawFee": n.fee.String(), "withdrawMin": n.min.String(), "withdrawMax": n.max.String(),
			"withdrawInternalMin": "0.00000001", "depositDust": "0.00000001", "minConfirm": n.confirmations, "unLockConfirm": n.confirmations,
			"sameAddress": n.memoRequired, "withdrawTag": n.memoRequired, "estimatedArrivalTime": n.arrival, "busy": false,
			"contractAddressUrl": "", "contractAddress": "", "denomination": 1,
		})
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // static data
	}
	return b
}

func (s *Server) handleCoinConfig(*call) response { return ok(s.coinConfig) }

// Deposit is an incoming transfer to add to an account's history.
type Deposit struct {
	Coin, Network, Amount string
	// Status is Binance's deposit status code: 0 pending, 1 success,
	// 2 rejected, 6 credited but cannot withdraw, 7 wrong deposit,
	// 8 waiting for user confirmation.
	Status     int
	Address    string
	Tag        string
	TxID       string
	InsertTime time.Time
	CompleteAt time.Time
	ID         string
}

type deposit struct {
	id, coin, network, address, tag, txID string
	amount                                decimal.Decimal
	status                                int
	insertTime, completeTime              int64
}

// AddDeposit appends a deposit to the account's history. Empty ids,
// addresses and transaction ids are generated.
func (s *Server) AddDeposit(apiKey string, dep Deposit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return
	}
	s.nextID++
	seed := apiKey + "/dep/" + strconv.FormatInt(s.nextID, 10)
	d := &deposit{id: dep.ID, coin: dep.Coin, network: dep.Network, address: dep.Address, tag: dep.Tag, txID: dep.TxID,
		amount: decimal.RequireFromString(dep.Amount), status: dep.Status, insertTime: dep.InsertTime.UnixMilli(), completeTime: dep.CompleteAt.UnixMilli()}
	fillDeposit(d, apiKey, seed)
	a.deposits = append(a.deposits, d)
}

func fillDeposit(d *deposit, apiKey, seed string) {
	if d.id == "" {
		d.id = numericID(seed, 18)
	}
	if d.txID == "" {
		d.txID = "0x" + hexID(seed+"/tx", 64)
	}
	if d.address == "" {
		if n := findNetwork(d.coin, d.network); n != nil {
			d.address, d.tag = address(n, apiKey)
		}
	}
	if d.completeTime < 0 {
		d.completeTime = 0
	}
}

// seedDeposits gives a new account a history with every normalized state.
func seedDeposits(a *account, now time.Time) []*deposit {
	day := 24 * time.Hour
	seeds := []struct {
		coin, network, amount string
		status                int
		ago                   time.Duration
	}{
		{"XRP", "XRP", "100", 2, 20 * day},
		{"BTC", "BTC", "0.5", 1, 10 * day},
		{"USDT", "TRX", "1500", 1, 5 * day},
		{"ETH", "ETH", "2", 6, 2 * day},
		{"USDT", "ETH", "250", 0, time.Hour},
		{"SOL", "SOL", "10", 8, 30 * time.Minute},
	}
	out := make([]*deposit, 0, len(seeds))
	for i, sd := range seeds {
		t := now.Add(-sd.ago).UnixMilli()
		dep := &deposit{coin: sd.coin, network: sd.network, amount: decimal.RequireFromString(sd.amount), status: sd.status, insertTime: t}
		if sd.status == 1 || sd.status == 6 {
			dep.completeTime = t + 600_000
		}
		fillDeposit(dep, a.key, a.key+"/seed/"+strconv.Itoa(i))
		out = append(out, dep)
	}
	return out
}

// timeWindow reads startTime/endTime with Binance's defaults (the last
// span) and its 90-day limit.
func timeWindow(c *call, span time.Duration) (start, end int64, bad response, good bool) {
	now := c.now.UnixMilli()
	end, start = now, now-span.Milliseconds()
	for name, dst := range map[string]*int64{"startTime": &start, "endTime": &end} {
		if v := c.get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return 0, 0, illegal(name, "^[0-9]{1,20}$"), false
			}
			*dst = n
		}
	}
	if c.get("startTime") != "" && c.get("endTime") == "" {
		end = min(start+span.Milliseconds(), now)
	}
	if c.get("endTime") != "" && c.get("startTime") == "" {
		start = end - span.Milliseconds()
	}
	if end-start > (90 * 24 * time.Hour).Milliseconds() {
		return 0, 0, apiErr(http.StatusBadRequest, -1127, "Lookup interval is too big."), false
	}
	return start, end, response{}, true
}

// pageParams reads offset and limit (default 1000, at most 1000).
func pageParams(c *call) (offset, limit int, bad response, good bool) {
	limit = 1000
	if v := c.get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, illegal("offset", "^[0-9]{1,20}$"), false
		}
		offset = n
	}
	if v := c.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 1000 {
			return 0, 0, illegal("limit", "^[0-9]{1,20}$"), false
		}
		limit = n
	}
	return offset, limit, response{}, true
}

func (s *Server) handleDepositHistory(c *call) response {
	start, end, bad, good := timeWindow(c, 90*24*time.Hour)
	if !good {
		return bad
	}
	offset, limit, bad, good := pageParams(c)
	if !good {
		return bad
	}
	status := -1
	if v := c.get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return illegal("status", "^[0-9]{1,20}$")
		}
		status = n
	}
	if v := c.get("includeSource"); v != "" && v != "true" && v != "false" {
		return illegal("includeSource", "true, false")
	}
	coin, txID := c.get("coin"), c.get("txId")
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []map[string]any
	deps := c.account.deposits
	for i := len(deps) - 1; i >= 0; i-- { // newest first
		dp := deps[i]
		if (coin != "" && dp.coin != coin) || (status >= 0 && dp.status != status) || (txID != "" && dp.txID != txID) ||
			dp.insertTime < start || dp.insertTime > end {
			continue
		}
		rows = append(rows, map[string]any{
			"id": dp.id, "amount": dp.amount.String(), "coin": dp.coin, "network": dp.network, "status": dp.status,
			"address": dp.address, "addressTag": dp.tag, "txId": dp.txID, "insertTime": dp.insertTime, "completeTime": dp.completeTime,
			"transferType": 0, "confirmTimes": "1/1", "unlockConfirm": 0, "walletType": 0, "travelRuleStatus": 0,
		})
	}
	return ok(encodePage(rows, offset, limit))
}

func encodePage(rows []map[string]any, offset, limit int) []byte {
	if offset >= len(rows) {
		rows = nil
	} else {
		rows = rows[offset:min(len(rows), offset+limit)]
	}
	if rows == nil {
		return []byte("[]")
	}
	b, err := json.Marshal(rows)
	if err != nil {
		panic(err) // maps of plain values
	}
	return b
}

func (s *Server) handleDepositAddress(c *call) response {
	coin := c.get("coin")
	if !coinKnown(coin) {
		return apiErr(http.StatusBadRequest, -4018, "This coin is not supported.")
	}
	n := findNetwork(coin, c.get("network"))
	if n == nil {
		return apiErr(http.StatusBadRequest, -4018, "This network is not supported for the coin.")
	}
	addr, tag := address(n, c.account.key)
	body, _ := json.Marshal(map[string]string{"address": addr, "coin": coin, "tag": tag, "url": "https://explorer.example/address/" + addr})
	return ok(body)
}

const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
const bech32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// address is the deterministic deposit address of an account on a network.
func address(n *network, apiKey string) (addr, tag string) {
	seed := apiKey + "/" + n.coin + "/" + n.network
	switch n.addressKind {
	case "btc":
		return "bc1q" + alphabetID(seed, bech32, 38), ""
	case "trx":
		return "T" + alphabetID(seed, base58, 33), ""
	case "sol":
		return alphabetID(seed, base58, 44), ""
	case "xrp":
		return "r" + alphabetID(n.network, base58, 33), strings.TrimLeft(numericID(seed, 9), "0")
	}
	return "0x" + hexID(seed, 40), ""
}

func alphabetID(seed, alphabet string, n int) string {
	out := make([]byte, 0, n)
	for i := 0; len(out) < n; i++ {
		sum := sha256.Sum256([]byte(seed + "#" + strconv.Itoa(i)))
		for _, c := range sum {
			if len(out) == n {
				break
			}
			out = append(out, alphabet[int(c)%len(alphabet)])
		}
	}
	return string(out)
}

func hexID(seed string, n int) string {
	return alphabetID(seed, "0123456789abcdef", n)
}

func numericID(seed string, n int) string {
	id := alphabetID(seed, "0123456789", n)
	if id[0] == '0' {
		id = "7" + id[1:]
	}
	return id
}

// withdrawal is one withdrawal the fake accepted.
type withdrawal struct {
	id, clientID, coin, network, address, tag, txID string
	amount, fee                                     decimal.Decimal
	status                                          int
	applyTime, completeTime                         time.Time
}

// WithdrawalsWithClientID counts the withdrawals accepted with that
// withdrawOrderId, on every account.
func (s *Server) WithdrawalsWithClientID(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.accounts {
		for _, w := range a.withdrawals {
			if w.clientID == id {
				n++
			}
		}
	}
	return n
}

// SetWithdrawalStatus changes the status code of the account's withdrawals
// with that withdrawOrderId (6 completed gives them a txId).
func (s *Server) SetWithdrawalStatus(apiKey, withdrawOrderID string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return
	}
	for _, w := range a.withdrawals {
		if w.clientID == withdrawOrderID {
			w.status = status
			if status == 6 && w.txID == "" {
				w.txID = "0x" + hexID(w.id, 64)
				w.completeTime = s.serverTime()
			}
		}
	}
}

func (s *Server) handleWithdraw(c *call) response {
	a := c.account
	if a.noWithdraw {
		return apiErr(http.StatusUnauthorized, -2015, "Invalid API-key, IP, or permissions for action.")
	}
	coin := c.get("coin")
	if !coinKnown(coin) {
		return apiErr(http.StatusBadRequest, -4018, "This coin is not supported.")
	}
	n := findNetwork(coin, c.get("network"))
	if n == nil {
		return apiErr(http.StatusBadRequest, -4018, "This network is not supported for the coin.")
	}
	if !n.withdrawOn {
		return apiErr(http.StatusBadRequest, -4019, "Current asset is not open for withdrawal.")
	}
	addr, tag := c.get("address"), c.get("addressTag")
	if !n.addressRe.MatchString(addr) {
		return apiErr(http.StatusBadRequest, -4007, "Address verification failed.")
	}
	if tag != "" && n.memoRe == nil {
		return apiErr(http.StatusBadRequest, -4106, "Tag is not supported for this network.")
	}
	if tag != "" && !n.memoRe.MatchString(tag) {
		return apiErr(http.StatusBadRequest, -4008, "Address tag verification failed.")
	}
	if v := c.get("transactionFeeFlag"); v != "" && v != "true" && v != "false" {
		return illegal("transactionFeeFlag", "true, false")
	}
	if v := c.get("walletType"); v != "" && v != "0" && v != "1" {
		return illegal("walletType", "0, 1")
	}
	amountText := c.get("amount")
	if !decimalPattern.MatchString(amountText) {
		return illegal("amount", `^([0-9]{1,20})(\.[0-9]{1,20})?$`)
	}
	amount := decimal.RequireFromString(amountText)
	switch {
	case amount.LessThan(n.min):
		return apiErr(http.StatusBadRequest, -4022, "The amount is less than the minimum withdrawal amount "+n.min.String()+".")
	case amount.GreaterThan(n.max):
		return apiErr(http.StatusBadRequest, -4023, "The amount exceeds the maximum withdrawal amount.")
	case !amount.Mod(n.multiple).IsZero():
		return apiErr(http.StatusBadRequest, -4021, "Asset withdrawal must be an integer multiple of "+n.multiple.String()+".")
	case !amount.GreaterThan(n.fee):
		return apiErr(http.StatusBadRequest, -4028, "The amount of withdrawal must be greater than the fee.")
	}
	clientID := c.get("withdrawOrderId")
	if clientID != "" && !clientIDPattern.MatchString(clientID) {
		return illegal("withdrawOrderId", "^[a-zA-Z0-9-_]{1,36}$")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.free[coin].LessThan(amount) {
		return apiErr(http.StatusBadRequest, -4026, "User has insufficient balance")
	}
	s.nextID++
	w := &withdrawal{id: hexID(a.key+"/wd/"+strconv.FormatInt(s.nextID, 10), 32), clientID: clientID, coin: coin, network: n.network,
		address: addr, tag: tag, amount: amount.Sub(n.fee), fee: n.fee, status: 6, applyTime: c.now}
	if a.pendingWithdrawals {
		w.status = 4
	} else {
		w.txID = "0x" + hexID(w.id, 64)
		w.completeTime = c.now
	}
	a.free[coin] = a.free[coin].Sub(amount)
	a.withdrawals = append(a.withdrawals, w)
	a.touch(c.now)
	return ok([]byte(`{"id":"` + w.id + `"}`))
}

const applyTimeLayout = "2006-01-02 15:04:05"

func (s *Server) handleWithdrawHistory(c *call) response {
	clientID := c.get("withdrawOrderId")
	span := 90 * 24 * time.Hour
	if clientID != "" {
		span = 7 * 24 * time.Hour
	}
	start, end, bad, good := timeWindow(c, span)
	if !good {
		return bad
	}
	if clientID != "" && end-start >= (7*24*time.Hour).Milliseconds()+1 {
		return apiErr(http.StatusBadRequest, -1127, "Lookup interval is too big.")
	}
	offset, limit, bad, good := pageParams(c)
	if !good {
		return bad
	}
	status := -1
	if v := c.get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return illegal("status", "^[0-9]{1,20}$")
		}
		status = n
	}
	var ids []string
	if v := c.get("idList"); v != "" {
		ids = strings.Split(v, ",")
		if len(ids) > 45 {
			return illegal("idList", "at most 45 ids")
		}
	}
	coin := c.get("coin")
	s.mu.Lock()
	defer s.mu.Unlock()
	var rows []map[string]any
	ws := c.account.withdrawals
	for i := len(ws) - 1; i >= 0; i-- { // newest first
		w := ws[i]
		t := w.applyTime.UnixMilli()
		if (coin != "" && w.coin != coin) || (clientID != "" && w.clientID != clientID) || (status >= 0 && w.status != status) ||
			(ids != nil && !contains(ids, w.id)) || t < start || t > end {
			continue
		}
		row := map[string]any{
			"id": w.id, "amount": w.amount.String(), "transactionFee": w.fee.String(), "coin": w.coin, "status": w.status,
			"address": w.address, "txId": w.txID, "applyTime": w.applyTime.UTC().Format(applyTimeLayout), "network": w.network,
			"transferType": 0, "info": "", "confirmNo": 0, "walletType": 0, "txKey": "",
		}
		if w.tag != "" {
			row["addressTag"] = w.tag
		}
		if w.clientID != "" {
			row["withdrawOrderId"] = w.clientID
		}
		if !w.completeTime.IsZero() {
			row["completeTime"] = w.completeTime.UTC().Format(applyTimeLayout)
		}
		rows = append(rows, row)
	}
	return ok(encodePage(rows, offset, limit))
}
