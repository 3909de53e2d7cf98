package binance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// Balances returns the assets with a non-zero free or locked amount, from
// GET /api/v3/account?omitZeroBalances=true.
func (e *Exchange) Balances(ctx context.Context, cred exgate.Credential) ([]exgate.Balance, error) {
	return rest.Fetch(ctx, e.c.do, request{ep: epAccount, params: rest.Params{{"omitZeroBalances", "true"}}, cred: &cred}, parseBalances)
}

// parseBalances reads the balances of an account answer, dropping zero
// ones, sorted by asset.
func parseBalances(body []byte) ([]exgate.Balance, error) {
	var acct struct {
		Balances []struct {
			Asset  string       `json:"asset"`
			Free   rest.Decimal `json:"free"`
			Locked rest.Decimal `json:"locked"`
		} `json:"balances"`
	}
	if err := json.Unmarshal(body, &acct); err != nil {
		return nil, fmt.Errorf("account answer: %w", err)
	}
	out := make([]exgate.Balance, 0, len(acct.Balances))
	for _, b := range acct.Balances {
		if b.Asset == "" || b.Free.IsNegative() || b.Locked.IsNegative() {
			return nil, fmt.Errorf("account answer: bad balance %q", b.Asset)
		}
		if b.Free.IsZero() && b.Locked.IsZero() {
			continue
		}
		out = append(out, exgate.Balance{Asset: exgate.NormalizeAsset(b.Asset), Available: b.Free.Decimal, Locked: b.Locked.Decimal})
	}
	slices.SortFunc(out, func(a, b exgate.Balance) int { return strings.Compare(a.Asset, b.Asset) })
	return out, nil
}

// RecentDeposits returns the deposits of the last 90 days (Binance's
// default window, at most 1000) from GET /sapi/v1/capital/deposit/hisrec,
// newest first. The status filter is applied here, because one normalized
// status covers several Binance codes.
func (e *Exchange) RecentDeposits(ctx context.Context, cred exgate.Credential, f exgate.DepositFilter) ([]exgate.Deposit, error) {
	var p rest.Params
	if f.Asset != "" {
		p.Add("coin", exgate.NormalizeAsset(f.Asset))
	}
	p.Add("limit", "1000")
	ds, err := rest.Fetch(ctx, e.c.do, request{ep: epDepositHist, params: p, cred: &cred}, parseDeposits)
	if err != nil {
		return nil, err
	}
	out := ds[:0]
	for _, d := range ds {
		if (f.Asset == "" || d.Asset == exgate.NormalizeAsset(f.Asset)) && (f.Status == "" || d.Status == f.Status) {
			out = append(out, d)
		}
	}
	return out, nil
}

// parseDeposits reads a deposit history answer, newest first.
func parseDeposits(body []byte) ([]exgate.Deposit, error) {
	var rows []struct {
		ID         json.RawMessage `json:"id"`
		Amount     rest.Decimal    `json:"amount"`
		Coin       string          `json:"coin"`
		Network    string          `json:"network"`
		Status     int             `json:"status"`
		Address    string          `json:"address"`
		AddressTag string          `json:"addressTag"`
		TxID       string          `json:"txId"`
		InsertTime int64           `json:"insertTime"`
	}
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("deposit history answer: %w", err)
	}
	out := make([]exgate.Deposit, 0, len(rows))
	for _, r := range rows {
		id, err := idString(r.ID)
		if err != nil || r.Coin == "" || r.Amount.IsNegative() {
			return nil, fmt.Errorf("deposit history answer: bad record %q", rest.Truncate(r.ID))
		}
		out = append(out, exgate.Deposit{
			ID:        id,
			Amount:    exgate.NewNumber(r.Amount.Decimal),
			Asset:     exgate.NormalizeAsset(r.Coin),
			Status:    transferStatus(depositStatuses, r.Status),
			Address:   r.Address,
			Tag:       r.AddressTag,
			Network:   networkFromBinance(r.Network),
			TxID:      r.TxID,
			Timestamp: r.InsertTime,
			RawStatus: strconv.Itoa(r.Status),
		})
	}
	slices.SortStableFunc(out, func(a, b exgate.Deposit) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	return out, nil
}

// idString reads an id sent as a JSON string or number.
func idString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil && s != "" {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil && n != "" {
		return n.String(), nil
	}
	return "", fmt.Errorf("bad id %q", rest.Truncate(raw))
}

// DepositAddress returns the address from GET /sapi/v1/capital/deposit/address
// after checking the network against the coin configuration.
func (e *Exchange) DepositAddress(ctx context.Context, cred exgate.Credential, req exgate.DepositAddressRequest) (exgate.DepositAddress, error) {
	coin := exgate.NormalizeAsset(req.Asset)
	nw, err := e.coins.network(ctx, cred, coin, req.Network)
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	if !nw.DepositEnable {
		return exgate.DepositAddress{}, exgate.Errorf(exgate.CodeExchangeUnavailable, "binance has suspended %s deposits on %s: %s", coin, nw.Network, nw.DepositDesc)
	}
	var p rest.Params
	p.Add("coin", coin)
	p.Add("network", nw.Network)
	body, err := e.c.do(ctx, request{ep: epDepositAddr, params: p, cred: &cred})
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	var a struct {
		Address string `json:"address"`
		Coin    string `json:"coin"`
		Tag     string `json:"tag"`
	}
	if err := json.Unmarshal(body, &a); err != nil || a.Address == "" {
		return exgate.DepositAddress{}, badAnswer(epDepositAddr, fmt.Errorf("deposit address answer: %q", rest.Truncate(body)))
	}
	out := exgate.DepositAddress{Asset: coin, Address: a.Address, Network: networkFromBinance(nw.Network)}
	if a.Tag != "" {
		out.Tag = &a.Tag
	}
	return out, nil
}

// Withdraw submits one withdrawal with POST /sapi/v1/capital/withdraw/apply,
// withdrawOrderId = req.ClientWithdrawalID, and reads the record back from
// the withdraw history. Binance takes the fee out of the amount it is
// given, so the adapter sends req.Amount plus the network's withdrawFee:
// the destination receives req.Amount, the account is debited the sum.
func (e *Exchange) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	if !clientIDRule.Pattern.MatchString(req.ClientWithdrawalID) {
		return exgate.Withdrawal{}, exgate.ParamError("clientWithdrawalId", "binance takes 1 to 36 characters of [a-zA-Z0-9_-] as a client withdrawal id")
	}
	coin := exgate.NormalizeAsset(req.Asset)
	nw, err := e.coins.network(ctx, cred, coin, req.Network)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	gross, err := checkWithdrawal(coin, nw, req)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	var p rest.Params
	p.Add("coin", coin)
	p.Add("withdrawOrderId", req.ClientWithdrawalID)
	p.Add("network", nw.Network)
	p.Add("address", req.Address)
	if req.Tag != "" {
		p.Add("addressTag", req.Tag)
	}
	p.Add("amount", gross.String())
	body, err := e.c.do(ctx, request{ep: epWithdraw, params: p, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "binance withdrawal not submitted", "clientWithdrawalId", req.ClientWithdrawalID, "err", err)
		return exgate.Withdrawal{}, err
	}
	var applied struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(body, &applied); err != nil {
		return exgate.Withdrawal{}, badAnswer(epWithdraw, err)
	}
	id, err := idString(applied.ID)
	if err != nil {
		return exgate.Withdrawal{}, badAnswer(epWithdraw, err)
	}
	e.log.InfoContext(ctx, "binance withdrawal submitted", "clientWithdrawalId", req.ClientWithdrawalID, "id", id)
	fee := nw.WithdrawFee.Decimal
	out := exgate.Withdrawal{
		ID:                 req.ClientWithdrawalID,
		Amount:             exgate.NewNumber(req.Amount),
		Fees:               exgate.NumberPtr(fee),
		TotalAmount:        exgate.NewNumber(gross),
		Asset:              coin,
		Status:             exgate.TransferPending,
		ToAddress:          req.Address,
		Timestamp:          e.c.Now().UnixMilli(),
		Network:            networkFromBinance(nw.Network),
		Tag:                req.Tag,
		Exchange:           Name,
		ClientWithdrawalID: req.ClientWithdrawalID,
		ExchangeID:         id,
	}
	rec, err := e.withdrawal(ctx, cred, exgate.WithdrawalQuery{Asset: coin, ClientWithdrawalID: req.ClientWithdrawalID, ExchangeID: id})
	if err != nil {
		// Accepted; the record is not readable yet. The gateway looks it
		// up again with QueryWithdrawal.
		e.log.WarnContext(ctx, "binance withdrawal record not read back", "clientWithdrawalId", req.ClientWithdrawalID, "err", err)
		return out, nil
	}
	return rec, nil
}

// checkWithdrawal applies the network's rules (enabled, address and memo
// patterns, minimum, maximum, multiple) locally and returns the amount to
// send: req.Amount plus the fee.
func checkWithdrawal(coin string, nw *networkJSON, req exgate.WithdrawalRequest) (decimal.Decimal, error) {
	if !nw.WithdrawEnable {
		return decimal.Zero, exgate.Errorf(exgate.CodeWithdrawalRejected, "binance has suspended %s withdrawals on %s: %s", coin, nw.Network, nw.WithdrawDesc)
	}
	if re := compileOptional(nw.AddressRegex); re != nil && !re.MatchString(req.Address) {
		return decimal.Zero, exgate.ParamError("address", "not a %s address on binance's %s network", coin, nw.Network)
	}
	if req.Tag != "" {
		if nw.MemoRegex == "" && !nw.WithdrawTag {
			return decimal.Zero, exgate.ParamError("tag", "binance's %s network takes no tag", nw.Network)
		}
		if re := compileOptional(nw.MemoRegex); re != nil && !re.MatchString(req.Tag) {
			return decimal.Zero, exgate.ParamError("tag", "not a valid tag on binance's %s network", nw.Network)
		}
	}
	fee := nw.WithdrawFee.Decimal
	gross := req.Amount.Add(fee)
	if m := nw.WithdrawIntegerMultiple.Decimal; m.IsPositive() && !gross.Mod(m).IsZero() {
		return decimal.Zero, exgate.ParamError("amount", "binance takes %s withdrawals in multiples of %s on %s (amount %s plus the fee %s is sent)", coin, m, nw.Network, req.Amount, fee)
	}
	if gross.LessThan(nw.WithdrawMin.Decimal) {
		return decimal.Zero, exgate.Errorf(exgate.CodeWithdrawalRejected, "binance's minimum %s withdrawal on %s is %s including the fee %s; %s plus the fee is %s", coin, nw.Network, nw.WithdrawMin, fee, req.Amount, gross)
	}
	if mx := nw.WithdrawMax.Decimal; mx.IsPositive() && gross.GreaterThan(mx) {
		return decimal.Zero, exgate.Errorf(exgate.CodeWithdrawalRejected, "binance's maximum %s withdrawal on %s is %s including the fee", coin, nw.Network, mx)
	}
	return gross, nil
}

// compileOptional compiles an exchange-provided pattern; an empty one or
// one Go's regexp cannot compile is no constraint (Binance checks it).
func compileOptional(pattern string) *regexp.Regexp {
	if pattern == "" {
		return nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil
	}
	return re
}

// QueryWithdrawal reads a withdrawal back from
// GET /sapi/v1/capital/withdraw/history by withdrawOrderId (Binance keeps
// that lookup to the last 7 days), or by id. None is an error wrapping
// exgate.ErrNotFound.
func (e *Exchange) QueryWithdrawal(ctx context.Context, cred exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	return e.withdrawal(ctx, cred, q)
}

func (e *Exchange) withdrawal(ctx context.Context, cred exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	var p rest.Params
	if q.Asset != "" {
		p.Add("coin", exgate.NormalizeAsset(q.Asset))
	}
	switch {
	case q.ClientWithdrawalID != "":
		p.Add("withdrawOrderId", q.ClientWithdrawalID)
	case q.ExchangeID != "":
		p.Add("idList", q.ExchangeID)
	default:
		return exgate.Withdrawal{}, exgate.ParamError("clientWithdrawalId", "a withdrawal is looked up by its client withdrawal id")
	}
	ws, err := rest.Fetch(ctx, e.c.do, request{ep: epWithdrawHist, params: p, cred: &cred}, parseWithdrawals)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	for _, w := range ws {
		if (q.ClientWithdrawalID != "" && w.ClientWithdrawalID == q.ClientWithdrawalID) ||
			(q.ClientWithdrawalID == "" && w.ExchangeID == q.ExchangeID) {
			if q.ClientWithdrawalID != "" {
				w.ID = q.ClientWithdrawalID
			}
			return w, nil
		}
	}
	name := q.ClientWithdrawalID
	if name == "" {
		name = q.ExchangeID
	}
	return exgate.Withdrawal{}, &exgate.Error{Code: exgate.CodeNotFound,
		Detail: fmt.Sprintf("binance has no withdrawal %s in its history of the last 7 days", name),
		Err:    exgate.ErrNotFound}
}

// applyTimeLayout is the UTC time format of withdraw history's applyTime.
const applyTimeLayout = "2006-01-02 15:04:05"

// parseWithdrawals reads a withdraw history answer. Binance's amount is
// what is sent to the address and transactionFee comes on top of it
// (together they are the amount given to withdraw/apply): Amount is
// amount, TotalAmount amount + transactionFee.
func parseWithdrawals(body []byte) ([]exgate.Withdrawal, error) {
	var rows []struct {
		ID              json.RawMessage `json:"id"`
		Amount          rest.Decimal    `json:"amount"`
		TransactionFee  *rest.Decimal   `json:"transactionFee"`
		Coin            string          `json:"coin"`
		Status          int             `json:"status"`
		Address         string          `json:"address"`
		AddressTag      string          `json:"addressTag"`
		TxID            string          `json:"txId"`
		ApplyTime       string          `json:"applyTime"`
		Network         string          `json:"network"`
		WithdrawOrderID string          `json:"withdrawOrderId"`
	}
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("withdraw history answer: %w", err)
	}
	out := make([]exgate.Withdrawal, 0, len(rows))
	for _, r := range rows {
		id, err := idString(r.ID)
		if err != nil || r.Coin == "" || r.Amount.IsNegative() {
			return nil, fmt.Errorf("withdraw history answer: bad record %q", rest.Truncate(r.ID))
		}
		w := exgate.Withdrawal{
			ID:                 r.WithdrawOrderID,
			Amount:             exgate.NewNumber(r.Amount.Decimal),
			TotalAmount:        exgate.NewNumber(r.Amount.Decimal),
			Asset:              exgate.NormalizeAsset(r.Coin),
			Status:             transferStatus(withdrawStatuses, r.Status),
			ToAddress:          r.Address,
			TxID:               r.TxID,
			Network:            networkFromBinance(r.Network),
			Tag:                r.AddressTag,
			Exchange:           Name,
			ClientWithdrawalID: r.WithdrawOrderID,
			ExchangeID:         id,
			RawStatus:          strconv.Itoa(r.Status),
		}
		if w.ID == "" {
			w.ID = id
		}
		if r.TransactionFee != nil {
			if r.TransactionFee.IsNegative() {
				return nil, fmt.Errorf("withdraw history answer: negative fee")
			}
			w.Fees = exgate.NumberPtr(r.TransactionFee.Decimal)
			w.TotalAmount = exgate.NewNumber(r.Amount.Add(r.TransactionFee.Decimal))
		}
		if r.ApplyTime != "" {
			t, err := time.ParseInLocation(applyTimeLayout, r.ApplyTime, time.UTC)
			if err != nil {
				return nil, fmt.Errorf("withdraw history answer: applyTime %q", r.ApplyTime)
			}
			w.Timestamp = t.UnixMilli()
		}
		out = append(out, w)
	}
	return out, nil
}

// networkJSON is one entry of a coin's networkList in
// GET /sapi/v1/capital/config/getall.
type networkJSON struct {
	Network                 string       `json:"network"`
	Coin                    string       `json:"coin"`
	DepositEnable           bool         `json:"depositEnable"`
	WithdrawEnable          bool         `json:"withdrawEnable"`
	DepositDesc             string       `json:"depositDesc"`
	WithdrawDesc            string       `json:"withdrawDesc"`
	AddressRegex            string       `json:"addressRegex"`
	MemoRegex               string       `json:"memoRegex"`
	WithdrawFee             rest.Decimal `json:"withdrawFee"`
	WithdrawMin             rest.Decimal `json:"withdrawMin"`
	WithdrawMax             rest.Decimal `json:"withdrawMax"`
	WithdrawIntegerMultiple rest.Decimal `json:"withdrawIntegerMultiple"`
	WithdrawTag             bool         `json:"withdrawTag"`
}

// coinSet is one load of the coin configuration: coin -> network -> rules.
type coinSet struct {
	byCoin  map[string]map[string]*networkJSON
	fetched time.Time
}

// coins caches the coin configuration (withdrawal fees and rules are the
// same for every account): loaded on first use with the caller's
// credential, refreshed in the background when older than ttl.
type coins struct {
	c       *client
	ttl     time.Duration
	cur     atomic.Pointer[coinSet]
	group   singleflight.Group
	nextTry atomic.Int64 // unix ms; see markets.nextTry
}

func (cs *coins) get(ctx context.Context, cred exgate.Credential) (*coinSet, error) {
	if set := cs.cur.Load(); set != nil {
		if now := cs.c.Now(); now.Sub(set.fetched) > cs.ttl && startRefresh(&cs.nextTry, now) {
			go cs.load(context.WithoutCancel(ctx), cred, set) //nolint:errcheck // logged in load
		}
		return set, nil
	}
	return cs.load(ctx, cred, nil)
}

// load reads the configuration once for every concurrent caller; see
// markets.load.
func (cs *coins) load(ctx context.Context, cred exgate.Credential, seen *coinSet) (*coinSet, error) {
	ch := cs.group.DoChan("config", func() (any, error) {
		if cur := cs.cur.Load(); cur != seen {
			return cur, nil
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		body, err := cs.c.do(fctx, request{ep: epCoinConfig, cred: &cred})
		if err != nil {
			cs.c.Log.ErrorContext(fctx, "binance coin configuration load failed", "err", err)
			return nil, err
		}
		set, err := parseCoins(body)
		if err != nil {
			return nil, badAnswer(epCoinConfig, err)
		}
		set.fetched = cs.c.Now()
		cs.cur.Store(set)
		return set, nil
	})
	return rest.Await[*coinSet](ctx, ch, "binance coin configuration")
}

// network returns the rules of coin on the normalized network, or
// INVALID_PARAMETER naming the networks Binance has for the coin.
func (cs *coins) network(ctx context.Context, cred exgate.Credential, coin, network string) (*networkJSON, error) {
	set, err := cs.get(ctx, cred)
	if err != nil {
		return nil, err
	}
	nws, ok := set.byCoin[coin]
	if !ok {
		return nil, exgate.ParamError("asset", "binance has no asset %s", coin)
	}
	if nw, ok := nws[networkToBinance(network)]; ok {
		return nw, nil
	}
	names := make([]string, 0, len(nws))
	for n := range nws {
		names = append(names, networkFromBinance(n))
	}
	slices.Sort(names)
	return nil, exgate.ParamError("network", "binance has no %s network for %s (it has %s)", exgate.NormalizeAsset(network), coin, strings.Join(names, ", "))
}

// parseCoins reads GET /sapi/v1/capital/config/getall.
func parseCoins(body []byte) (*coinSet, error) {
	var rows []struct {
		Coin        string        `json:"coin"`
		NetworkList []networkJSON `json:"networkList"`
	}
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("coin configuration answer: %w", err)
	}
	set := &coinSet{byCoin: make(map[string]map[string]*networkJSON, len(rows))}
	for _, r := range rows {
		if r.Coin == "" {
			return nil, errors.New("coin configuration answer: coin without a name")
		}
		nws := make(map[string]*networkJSON, len(r.NetworkList))
		for i := range r.NetworkList {
			nw := &r.NetworkList[i]
			if nw.Network == "" || nw.WithdrawFee.IsNegative() || nw.WithdrawMin.IsNegative() {
				return nil, fmt.Errorf("coin configuration answer: bad network of %s", r.Coin)
			}
			nw.Network = exgate.NormalizeAsset(nw.Network)
			nws[nw.Network] = nw
		}
		set.byCoin[exgate.NormalizeAsset(r.Coin)] = nws
	}
	return set, nil
}

// RecentWithdrawals reads GET /sapi/v1/capital/withdraw/history (the last
// 90 days, newest first as Binance answers; weight 18000 of the UID
// budget) for the asset when given, and keeps those in the status asked:
// Binance's status parameter takes one of its codes, and one normalized
// status stands for several of them (withdrawStatuses), so the filter is
// applied here.
func (e *Exchange) RecentWithdrawals(ctx context.Context, cred exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error) {
	var p rest.Params
	if f.Asset != "" {
		p.Add("coin", exgate.NormalizeAsset(f.Asset))
	}
	ws, err := rest.Fetch(ctx, e.c.do, request{ep: epWithdrawHist, params: p, cred: &cred}, parseWithdrawals)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Withdrawal, 0, len(ws))
	for _, w := range ws {
		if f.Status == "" || w.Status == f.Status {
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b exgate.Withdrawal) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	return out, nil
}
