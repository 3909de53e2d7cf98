package kraken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// balanceEx is one asset of BalanceEx.
type balanceEx struct {
	Balance   rest.Decimal `json:"balance"`
	HoldTrade rest.Decimal `json:"hold_trade"`
}

// parseBalanceEx decodes a BalanceEx result.
func parseBalanceEx(raw []byte) (map[string]balanceEx, error) {
	var res map[string]balanceEx
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return res, nil
}

// Balances reads BalanceEx: available = balance - hold_trade, locked =
// hold_trade, under the common code. Suffixed keys (XBT.F, ETH2.S, USD.M…)
// are earn and staking holdings, not spot balances, and are left out.
// Accounts where BalanceEx is unknown fall back to Balance (all available).
func (e *Exchange) Balances(ctx context.Context, cred exgate.Credential) ([]exgate.Balance, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	err = e.c.private(ctx, cred, "BalanceEx", nil, kindRead, "", &raw)
	var rows map[string]balanceEx
	if ae := (*apiError)(nil); errors.As(err, &ae) && strings.HasPrefix(ae.messages[0], "EGeneral:Unknown method") {
		var plain map[string]rest.Decimal
		if err := e.c.private(ctx, cred, "Balance", nil, kindRead, "", &plain); err != nil {
			return nil, err
		}
		rows = make(map[string]balanceEx, len(plain))
		for k, v := range plain {
			rows[k] = balanceEx{Balance: v}
		}
	} else if err != nil {
		return nil, err
	} else if rows, err = parseBalanceEx(raw); err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable Kraken balances", Err: err}
	}
	return m.toBalances(rows), nil
}

// toBalances normalizes balance rows, sorted by asset.
func (m *markets) toBalances(rows map[string]balanceEx) []exgate.Balance {
	byAsset := make(map[string]*exgate.Balance)
	for key, b := range rows {
		if isSuffixedBalance(key) {
			continue
		}
		common := m.common(key)
		hold := decimal.Max(b.HoldTrade.Decimal, decimal.Zero)
		avail := b.Balance.Sub(hold)
		if avail.Sign() < 0 {
			avail = decimal.Zero
		}
		cur, ok := byAsset[common]
		if !ok {
			cur = &exgate.Balance{Asset: common, Available: decimal.Zero, Locked: decimal.Zero}
			byAsset[common] = cur
		}
		cur.Available = cur.Available.Add(avail)
		cur.Locked = cur.Locked.Add(hold)
	}
	out := make([]exgate.Balance, 0, len(byAsset))
	for _, b := range byAsset {
		if b.Available.Sign() != 0 || b.Locked.Sign() != 0 {
			out = append(out, *b)
		}
	}
	slices.SortFunc(out, func(a, b exgate.Balance) int { return strings.Compare(a.Asset, b.Asset) })
	return out
}

// fundingRow is one deposit (DepositStatus) or withdrawal (WithdrawStatus).
type fundingRow struct {
	Method     string       `json:"method"`
	Network    string       `json:"network"`
	Asset      string       `json:"asset"`
	Refid      string       `json:"refid"`
	Txid       string       `json:"txid"`
	Info       string       `json:"info"`
	Amount     rest.Decimal `json:"amount"`
	Fee        rest.Decimal `json:"fee"`
	Time       rest.Decimal `json:"time"`
	Status     string       `json:"status"`
	StatusProp string       `json:"status-prop"`
	Key        string       `json:"key"`
}

// parseFundingRows decodes a DepositStatus or WithdrawStatus result: an
// array, or with a cursor an object holding the array.
func parseFundingRows(raw []byte) ([]fundingRow, error) {
	var rows []fundingRow
	if err := json.Unmarshal(raw, &rows); err == nil {
		return rows, nil
	}
	var paged map[string]json.RawMessage
	if err := json.Unmarshal(raw, &paged); err != nil {
		return nil, err
	}
	for _, k := range []string{"deposit", "deposits", "withdrawal", "withdrawals"} {
		if v, ok := paged[k]; ok {
			if err := json.Unmarshal(v, &rows); err != nil {
				return nil, err
			}
			return rows, nil
		}
	}
	return nil, errors.New("no funding rows in the answer")
}

// fundingStatus reads DepositStatus or WithdrawStatus, newest first.
func (e *Exchange) fundingStatus(ctx context.Context, cred exgate.Credential, method, assetID string) ([]fundingRow, error) {
	form := url.Values{}
	if assetID != "" {
		form.Set("asset", assetID)
	}
	var raw json.RawMessage
	if err := e.c.private(ctx, cred, method, form, kindRead, "", &raw); err != nil {
		return nil, err
	}
	rows, err := parseFundingRows(raw)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "unparseable Kraken " + method + " answer", Err: err}
	}
	slices.SortStableFunc(rows, func(a, b fundingRow) int { return b.Time.Cmp(a.Time.Decimal) })
	return rows, nil
}

// RecentDeposits reads DepositStatus (Kraken's recent deposits, newest
// first), filtered by asset and normalized status.
func (e *Exchange) RecentDeposits(ctx context.Context, cred exgate.Credential, f exgate.DepositFilter) ([]exgate.Deposit, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, err
	}
	assetID := ""
	if f.Asset != "" {
		id, ok := m.assetID(f.Asset)
		if !ok {
			return []exgate.Deposit{}, nil
		}
		assetID = id
	}
	rows, err := e.fundingStatus(ctx, cred, "DepositStatus", assetID)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Deposit, 0, len(rows))
	for _, r := range rows {
		d := m.toDeposit(r)
		if (f.Asset != "" && d.Asset != f.Asset) || (f.Status != "" && d.Status != f.Status) {
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// toDeposit normalizes a DepositStatus row.
func (m *markets) toDeposit(r fundingRow) exgate.Deposit {
	return exgate.Deposit{
		ID:        r.Refid,
		Amount:    exgate.NewNumber(r.Amount.Decimal),
		Asset:     m.common(r.Asset),
		Status:    depositStatus(r.Status, r.StatusProp),
		Address:   r.Info,
		Network:   transferNetwork(r.Method, r.Network),
		TxID:      r.Txid,
		Timestamp: r.Time.Mul(decimal.NewFromInt(1000)).IntPart(),
		RawStatus: rawTransferStatus(r.Status, r.StatusProp),
	}
}

// depositMethod is one row of DepositMethods.
type depositMethod struct {
	Method     string `json:"method"`
	GenAddress bool   `json:"gen-address"`
}

// depositAddress is one row of DepositAddresses.
type depositAddress struct {
	Address  string       `json:"address"`
	Expiretm rest.Decimal `json:"expiretm"`
	Tag      string       `json:"tag"`
	Memo     string       `json:"memo"`
}

// DepositAddress picks the deposit method of req.Network (method names are
// mapped by networksByMethod) and returns its first current address,
// asking Kraken to generate one when the method has none yet.
func (e *Exchange) DepositAddress(ctx context.Context, cred exgate.Credential, req exgate.DepositAddressRequest) (exgate.DepositAddress, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	id, ok := m.assetID(req.Asset)
	if !ok {
		return exgate.DepositAddress{}, exgate.ParamError("asset", "Kraken does not know asset %s", req.Asset)
	}
	var methods []depositMethod
	if err := e.c.private(ctx, cred, "DepositMethods", url.Values{"asset": {id}}, kindRead, "", &methods); err != nil {
		return exgate.DepositAddress{}, err
	}
	var (
		chosen   *depositMethod
		networks []string
	)
	for i, dm := range methods {
		n := methodNetwork(dm.Method)
		if n == "" {
			continue
		}
		networks = append(networks, n)
		if n == req.Network && chosen == nil {
			chosen = &methods[i]
		}
	}
	if chosen == nil {
		return exgate.DepositAddress{}, exgate.ParamError("network", "Kraken has no deposit method for %s on network %s (networks: %s)", req.Asset, req.Network, strings.Join(networks, ", "))
	}
	addrs, err := e.depositAddresses(ctx, cred, id, chosen.Method, false)
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	if len(addrs) == 0 && chosen.GenAddress {
		if addrs, err = e.depositAddresses(ctx, cred, id, chosen.Method, true); err != nil {
			return exgate.DepositAddress{}, err
		}
	}
	nowSec := e.now().Unix()
	for _, a := range addrs {
		if a.Address == "" || (a.Expiretm.Sign() > 0 && a.Expiretm.IntPart() <= nowSec) {
			continue
		}
		out := exgate.DepositAddress{Asset: req.Asset, Address: a.Address, Network: req.Network}
		if tag := firstNonEmpty(a.Tag, a.Memo); tag != "" {
			out.Tag = &tag
		}
		return out, nil
	}
	return exgate.DepositAddress{}, exgate.Errorf(exgate.CodeExchangeError, "Kraken has no current deposit address for %s on %s (method %s)", req.Asset, req.Network, chosen.Method)
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (e *Exchange) depositAddresses(ctx context.Context, cred exgate.Credential, assetID, method string, fresh bool) ([]depositAddress, error) {
	form := url.Values{"asset": {assetID}, "method": {method}}
	if fresh {
		form.Set("new", "true")
	}
	var addrs []depositAddress
	if err := e.c.private(ctx, cred, "DepositAddresses", form, kindRead, "", &addrs); err != nil {
		return nil, err
	}
	return addrs, nil
}

// withdrawKey is one row of WithdrawAddresses: a withdrawal address saved
// (and email-confirmed when verified) in the Kraken account under a key
// name.
type withdrawKey struct {
	Address  string `json:"address"`
	Asset    string `json:"asset"`
	Method   string `json:"method"`
	Key      string `json:"key"`
	Tag      string `json:"tag"`
	Memo     string `json:"memo"`
	Verified bool   `json:"verified"`
}

// findWithdrawKey picks the saved withdrawal key whose address (and tag or
// memo) equal the request's and whose method is on the request's network;
// among several, the first verified key by name.
func findWithdrawKey(keys []withdrawKey, req exgate.WithdrawalRequest) (withdrawKey, error) {
	var matches []withdrawKey
	sameAddress := false
	for _, k := range keys {
		if k.Address != req.Address {
			continue
		}
		sameAddress = true
		if firstNonEmpty(k.Tag, k.Memo) == req.Tag && methodNetwork(k.Method) == req.Network {
			matches = append(matches, k)
		}
	}
	slices.SortFunc(matches, func(a, b withdrawKey) int {
		if a.Verified != b.Verified {
			if a.Verified {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	what := req.Address
	if req.Tag != "" {
		what += " with tag " + req.Tag
	}
	switch {
	case len(matches) == 0 && sameAddress:
		return withdrawKey{}, exgate.Errorf(exgate.CodeWithdrawalRejected,
			"address %s is saved in the Kraken account for %s, but not for network %s with tag %q: add a withdrawal address for %s on network %s with exactly this address and tag in Kraken (Funding > Withdraw > Add address), confirm it by email, then retry",
			req.Address, req.Asset, req.Network, req.Tag, req.Asset, req.Network)
	case len(matches) == 0:
		return withdrawKey{}, exgate.Errorf(exgate.CodeWithdrawalRejected,
			"Kraken withdraws only to saved addresses and %s is not one for %s on network %s: add it as a withdrawal address for %s in Kraken (Funding > Withdraw > Add address), confirm it by email, then retry",
			what, req.Asset, req.Network, req.Asset)
	case !matches[0].Verified:
		return withdrawKey{}, exgate.Errorf(exgate.CodeWithdrawalRejected,
			"the Kraken withdrawal address %q (%s) is not confirmed yet: confirm it from Kraken's email, then retry", matches[0].Key, what)
	}
	return matches[0], nil
}

// withdrawInfo is the WithdrawInfo result.
type withdrawInfo struct {
	Method string       `json:"method"`
	Limit  rest.Decimal `json:"limit"`
	Amount rest.Decimal `json:"amount"`
	Fee    rest.Decimal `json:"fee"`
}

// Withdraw sends req.Amount to a withdrawal address saved in the Kraken
// account: Kraken withdraws to a key name, so the key whose address (and
// tag) equal req's is looked up with WithdrawAddresses. WithdrawInfo gives
// the fee; Kraken takes its fee out of the amount withdrawn, so the
// adapter withdraws Amount + fee with max_fee = fee, and the destination
// receives Amount. It is never retried.
func (e *Exchange) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	id, ok := m.assetID(req.Asset)
	if !ok {
		return exgate.Withdrawal{}, exgate.ParamError("asset", "Kraken does not know asset %s", req.Asset)
	}
	if dec, ok := m.decimalsByID[id]; ok && dec > 0 && !req.Amount.Equal(req.Amount.Truncate(dec)) {
		return exgate.Withdrawal{}, exgate.ParamError("amount", "Kraken takes %s amounts with at most %d decimals", req.Asset, dec)
	}
	var keys []withdrawKey
	if err := e.c.private(ctx, cred, "WithdrawAddresses", url.Values{"asset": {id}}, kindRead, "", &keys); err != nil {
		return exgate.Withdrawal{}, err
	}
	key, err := findWithdrawKey(keys, req)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	var info withdrawInfo
	form := url.Values{"asset": {id}, "key": {key.Key}, "amount": {req.Amount.String()}}
	if err := e.c.private(ctx, cred, "WithdrawInfo", form, kindRead, "", &info); err != nil {
		return exgate.Withdrawal{}, asWithdrawalRejection(err)
	}
	fee := info.Fee.Decimal
	gross := req.Amount.Add(fee)
	sentAt := e.now()
	e.sent.add(withdrawalAttempt{
		clientID: req.ClientWithdrawalID, assetID: id, key: key.Key, address: req.Address, tag: req.Tag,
		network: req.Network, amount: req.Amount, gross: gross, sentAt: sentAt,
	}, sentAt)
	var res struct {
		Refid string `json:"refid"`
	}
	form = url.Values{
		"asset":   {id},
		"key":     {key.Key},
		"amount":  {gross.String()},
		"address": {req.Address},
		"max_fee": {fee.String()},
	}
	if err := e.c.private(ctx, cred, "Withdraw", form, kindWithdraw, "", &res); err != nil {
		if exgate.ErrorCode(err) != exgate.CodeExchangeTimeout {
			e.sent.remove(req.ClientWithdrawalID)
		}
		return exgate.Withdrawal{}, err
	}
	if res.Refid == "" {
		return exgate.Withdrawal{}, &exgate.Error{Code: exgate.CodeExchangeTimeout, Detail: "Kraken accepted the withdrawal without a reference id; the outcome is unknown"}
	}
	e.sent.setRefid(req.ClientWithdrawalID, res.Refid)
	w := exgate.Withdrawal{
		ID:                 req.ClientWithdrawalID,
		Amount:             exgate.NewNumber(req.Amount),
		Fees:               exgate.NumberPtr(fee),
		TotalAmount:        exgate.NewNumber(gross),
		Asset:              req.Asset,
		Status:             exgate.TransferPending,
		ToAddress:          req.Address,
		Timestamp:          sentAt.UnixMilli(),
		Network:            req.Network,
		Tag:                req.Tag,
		Exchange:           Name,
		ClientWithdrawalID: req.ClientWithdrawalID,
		ExchangeID:         res.Refid,
	}
	if rows, err := e.fundingStatus(ctx, cred, "WithdrawStatus", id); err == nil {
		for _, r := range rows {
			if r.Refid == res.Refid {
				got := m.toWithdrawal(r, req.ClientWithdrawalID)
				w.Status, w.RawStatus, w.TxID, w.Timestamp = got.Status, got.RawStatus, got.TxID, got.Timestamp
				break
			}
		}
	} else {
		e.log.WarnContext(ctx, "kraken: withdrawal sent but not read back", "clientWithdrawalId", req.ClientWithdrawalID, "refid", res.Refid, "err", err)
	}
	return w, nil
}

// asWithdrawalRejection turns WithdrawInfo's refusals of the request
// (amount, key) into WITHDRAWAL_REJECTED; other errors pass through.
func asWithdrawalRejection(err error) error {
	xe, ok := errors.AsType[*exgate.Error](err)
	if ok && xe.Code == exgate.CodeInvalidParameter {
		return &exgate.Error{Code: exgate.CodeWithdrawalRejected, Detail: xe.Detail, Err: xe.Err}
	}
	return err
}

// toWithdrawal normalizes a WithdrawStatus row; Kraken's amount is what
// the destination receives and fee comes on top.
func (m *markets) toWithdrawal(r fundingRow, clientID string) exgate.Withdrawal {
	return exgate.Withdrawal{
		ID:                 clientID,
		Amount:             exgate.NewNumber(r.Amount.Decimal),
		Fees:               exgate.NumberPtr(r.Fee.Decimal),
		TotalAmount:        exgate.NewNumber(r.Amount.Add(r.Fee.Decimal)),
		Asset:              m.common(r.Asset),
		Status:             withdrawalStatus(r.Status, r.StatusProp),
		ToAddress:          r.Info,
		TxID:               r.Txid,
		Timestamp:          r.Time.Mul(decimal.NewFromInt(1000)).IntPart(),
		Network:            transferNetwork(r.Method, r.Network),
		Exchange:           Name,
		ClientWithdrawalID: clientID,
		ExchangeID:         r.Refid,
		RawStatus:          rawTransferStatus(r.Status, r.StatusProp),
	}
}

// matchSkew is how far before the send time a matching withdrawal row may
// be dated (clock skew between the gateway and Kraken).
const matchSkew = 2 * time.Minute

// unclaimedWindow is how recent an unclaimed withdrawal must be to make a
// lookup by an unknown client id ambiguous.
const unclaimedWindow = 24 * time.Hour

// QueryWithdrawal reads a withdrawal back from WithdrawStatus. Kraken has
// no client withdrawal id, so:
//   - with q.ExchangeID (Kraken's refid) the row with that refid is it;
//   - else, when this process sent the withdrawal, its refid, or failing
//     that (the answer was lost) the row matching its asset, key or
//     address, amount and time that no other known withdrawal claims;
//   - else (another instance or a restart) it cannot be told apart: the
//     answer is not found only when no recent withdrawal of the asset is
//     unclaimed, and EXCHANGE_ERROR otherwise.
func (e *Exchange) QueryWithdrawal(ctx context.Context, cred exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	assetID := ""
	if q.Asset != "" {
		id, ok := m.assetID(q.Asset)
		if !ok {
			return exgate.Withdrawal{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "Kraken does not know asset " + q.Asset, Err: exgate.ErrNotFound}
		}
		assetID = id
	}
	rec, known := e.sent.get(q.ClientWithdrawalID)
	if assetID == "" && known {
		assetID = rec.assetID
	}
	rows, err := e.fundingStatus(ctx, cred, "WithdrawStatus", assetID)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	notFound := func(detail string) error {
		return &exgate.Error{Code: exgate.CodeNotFound, Detail: detail, Err: exgate.ErrNotFound}
	}
	refid := q.ExchangeID
	if refid == "" && known {
		refid = rec.refid
	}
	found := func(r fundingRow) exgate.Withdrawal {
		w := m.toWithdrawal(r, q.ClientWithdrawalID)
		if known {
			w.Tag = rec.tag
			if w.Network == "" {
				w.Network = rec.network
			}
		}
		return w
	}
	if refid != "" {
		for _, r := range rows {
			if r.Refid == refid {
				return found(r), nil
			}
		}
		return exgate.Withdrawal{}, notFound("Kraken lists no withdrawal " + refid)
	}
	if known {
		if r, ok := e.sent.claimRow(rec, rows, m); ok {
			return found(r), nil
		}
		return exgate.Withdrawal{}, notFound(fmt.Sprintf("Kraken lists no %s withdrawal of %s to %s since %s", m.common(rec.assetID), rec.amount, rec.address, rec.sentAt.UTC().Format(time.RFC3339)))
	}
	claimed := e.sent.claimed()
	since := e.now().Add(-unclaimedWindow)
	for _, r := range rows {
		if _, taken := claimed[r.Refid]; taken {
			continue
		}
		if r.Time.IntPart() >= since.Unix() {
			return exgate.Withdrawal{}, exgate.Errorf(exgate.CodeExchangeError,
				"Kraken keeps no client withdrawal id and withdrawal %s was not sent by this gateway instance since its start: pass its Kraken refid as exchangeId to look it up", q.ClientWithdrawalID)
		}
	}
	return exgate.Withdrawal{}, notFound("Kraken lists no recent withdrawal that could be " + q.ClientWithdrawalID)
}

// withdrawalAttempt is a withdrawal this process sent, kept to find it
// again without Kraken's refid.
type withdrawalAttempt struct {
	clientID, assetID, key, address, tag, network string
	// amount is what the destination receives, gross what was withdrawn.
	amount, gross decimal.Decimal
	sentAt        time.Time
	refid         string
}

// sameDestination reports whether a WithdrawStatus row can be this
// attempt but for the amount: same asset, same key or destination address,
// dated no earlier than the send time less matchSkew.
func (a withdrawalAttempt) sameDestination(r fundingRow, m *markets) bool {
	if m.common(r.Asset) != m.common(a.assetID) {
		return false
	}
	if r.Key != a.key && r.Info != a.address {
		return false
	}
	return r.Time.IntPart() >= a.sentAt.Add(-matchSkew).Unix()
}

// Whether a WithdrawStatus row's amount is what the destination receives
// (net, the fee on top) or what was withdrawn (gross) is not established
// (docs/exchanges/kraken.md), so a row may match an attempt either way.
// Read as net, the row's amount is the amount asked for, or (when Kraken
// charged less than the fee it quoted) the row's amount plus its fee is the
// gross amount sent.
func (a withdrawalAttempt) netMatch(r fundingRow) bool {
	return r.Amount.Equal(a.amount) || r.Amount.Add(r.Fee.Decimal).Equal(a.gross)
}

func (a withdrawalAttempt) grossMatch(r fundingRow) bool {
	return r.Amount.Equal(a.gross)
}

// claimRow finds a's row among rows (newest first, as Kraken lists them)
// and records it as a's, atomically with every other claim, so that no row
// is given to two withdrawals. The oldest unclaimed row that matches a's
// amount read as net is taken first; failing that, the oldest that matches
// it read as gross and is not a net match of another withdrawal still
// looking for its row. Two withdrawals whose amounts differ by exactly the
// fee would otherwise take each other's rows.
func (l *withdrawalLog) claimRow(a withdrawalAttempt, rows []fundingRow, m *markets) (fundingRow, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	taken := make(map[string]bool, len(l.m))
	for _, b := range l.m {
		if b.refid != "" {
			taken[b.refid] = true
		}
	}
	netOfAnother := func(r fundingRow) bool {
		for id, b := range l.m {
			if id != a.clientID && b.refid == "" && b.sameDestination(r, m) && b.netMatch(r) {
				return true
			}
		}
		return false
	}
	for pass := range 2 {
		for i := len(rows) - 1; i >= 0; i-- {
			r := rows[i]
			if taken[r.Refid] || !a.sameDestination(r, m) {
				continue
			}
			if pass == 0 && !a.netMatch(r) || pass == 1 && (!a.grossMatch(r) || netOfAnother(r)) {
				continue
			}
			if cur, ok := l.m[a.clientID]; ok {
				cur.refid = r.Refid
			}
			return r, true
		}
	}
	return fundingRow{}, false
}

// attemptTTL is how long a sent withdrawal is remembered.
const attemptTTL = 7 * 24 * time.Hour

// withdrawalLog remembers the withdrawals this process sent.
type withdrawalLog struct {
	mu sync.Mutex
	m  map[string]*withdrawalAttempt
}

func (l *withdrawalLog) add(a withdrawalAttempt, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = make(map[string]*withdrawalAttempt)
	}
	for id, old := range l.m {
		if now.Sub(old.sentAt) > attemptTTL {
			delete(l.m, id)
		}
	}
	l.m[a.clientID] = &a
}

func (l *withdrawalLog) get(id string) (withdrawalAttempt, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.m[id]
	if !ok || id == "" {
		return withdrawalAttempt{}, false
	}
	return *a, true
}

func (l *withdrawalLog) setRefid(id, refid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a, ok := l.m[id]; ok {
		a.refid = refid
	}
}

func (l *withdrawalLog) remove(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, id)
}

// claimed returns the refids of the known withdrawals.
func (l *withdrawalLog) claimed() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]string, len(l.m))
	for id, a := range l.m {
		if a.refid != "" {
			out[a.refid] = id
		}
	}
	return out
}

// RecentWithdrawals reads WithdrawStatus (newest first), withdrawals made
// outside the gateway included, filtered by asset and normalized status.
// Kraken has no client withdrawal id: a withdrawal this process sent
// carries the gateway's id, any other Kraken's refid.
func (e *Exchange) RecentWithdrawals(ctx context.Context, cred exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error) {
	m, err := e.loadMarkets(ctx)
	if err != nil {
		return nil, err
	}
	assetID := ""
	if f.Asset != "" {
		id, ok := m.assetID(f.Asset)
		if !ok {
			return []exgate.Withdrawal{}, nil
		}
		assetID = id
	}
	rows, err := e.fundingStatus(ctx, cred, "WithdrawStatus", assetID)
	if err != nil {
		return nil, err
	}
	claimed := e.sent.claimed()
	out := make([]exgate.Withdrawal, 0, len(rows))
	for _, r := range rows {
		w := m.toWithdrawal(r, claimed[r.Refid])
		if w.ID == "" {
			w.ID = r.Refid
		}
		if (f.Asset != "" && w.Asset != f.Asset) || (f.Status != "" && w.Status != f.Status) {
			continue
		}
		out = append(out, w)
	}
	return out, nil
}
