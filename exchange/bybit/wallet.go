package bybit

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// Balances returns the spot wallet: the unified trading account's coins
// with a non-zero balance (GET /v5/account/wallet-balance
// accountType=UNIFIED, which lists only those). Available is walletBalance
// less locked (what open spot orders hold); availableToWithdraw is no
// longer filled for unified accounts. Source:
// https://bybit-exchange.github.io/docs/v5/account/wallet-balance.
func (e *Exchange) Balances(ctx context.Context, cred exgate.Credential) ([]exgate.Balance, error) {
	var ps rest.Params
	ps.Add("accountType", "UNIFIED")
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epWalletBalance, params: ps, cred: &cred}, parseWalletBalance)
	if err != nil {
		return nil, err
	}
	return unifiedBalances(rows), nil
}

// unifiedBalances maps the unified wallet's coins.
func unifiedBalances(rows []walletCoinJSON) []exgate.Balance {
	out := make([]exgate.Balance, 0, len(rows))
	for _, r := range rows {
		locked := decimal.Min(r.Locked.Decimal, r.WalletBalance.Decimal)
		out = appendBalance(out, exgate.NormalizeAsset(r.Coin), r.WalletBalance.Sub(locked), locked)
	}
	return out
}

// appendBalance adds a non-zero balance, summing an asset listed twice.
func appendBalance(out []exgate.Balance, asset string, avail, locked decimal.Decimal) []exgate.Balance {
	if avail.IsZero() && locked.IsZero() {
		return out
	}
	if i := slices.IndexFunc(out, func(b exgate.Balance) bool { return b.Asset == asset }); i >= 0 {
		out[i].Available = out[i].Available.Add(avail)
		out[i].Locked = out[i].Locked.Add(locked)
		return out
	}
	return append(out, exgate.Balance{Asset: asset, Available: avail, Locked: locked})
}

// WalletBalances returns one wallet: spot is Balances; funding is the
// funding account, GET /v5/asset/transfer/query-account-coins-balance
// accountType=FUND, with transferBalance available and the rest of
// walletBalance locked. Source:
// https://bybit-exchange.github.io/docs/v5/asset/balance/all-balance.
func (e *Exchange) WalletBalances(ctx context.Context, cred exgate.Credential, wallet exgate.WalletKind) ([]exgate.Balance, error) {
	if wallet != exgate.WalletFunding {
		return e.Balances(ctx, cred)
	}
	var ps rest.Params
	ps.Add("accountType", "FUND")
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epFundBalance, params: ps, cred: &cred}, parseFundBalance)
	if err != nil {
		return nil, err
	}
	return fundBalances(rows), nil
}

// fundBalances maps the funding wallet's coins.
func fundBalances(rows []fundCoinJSON) []exgate.Balance {
	out := make([]exgate.Balance, 0, len(rows))
	for _, r := range rows {
		avail := decimal.Min(r.TransferBalance.Decimal, r.WalletBalance.Decimal)
		out = appendBalance(out, exgate.NormalizeAsset(r.Coin), avail, r.WalletBalance.Sub(avail))
	}
	return out
}

// historyWindow is the span of one deposit or withdrawal history query:
// endTime - startTime must be under 30 days. Source:
// https://bybit-exchange.github.io/docs/v5/asset/deposit/deposit-record.
const historyWindow = 30*24*time.Hour - time.Minute

// RecentDeposits returns the on-chain deposits of the last 30 days (pages
// of 50, at most 500), newest first, filtered by asset (sent to Bybit) and
// status (applied here: Bybit has no status filter). Deposits land in the
// funding wallet unless the account's setting says otherwise
// (docs/exchanges/bybit.md).
func (e *Exchange) RecentDeposits(ctx context.Context, cred exgate.Credential, f exgate.DepositFilter) ([]exgate.Deposit, error) {
	now := e.c.serverNow()
	var rows []depositJSON
	cursor := ""
	for page := 0; page < maxPages; page++ {
		var ps rest.Params
		if f.Asset != "" {
			ps.Add("coin", exgate.NormalizeAsset(f.Asset))
		}
		ps.Add("startTime", strconv.FormatInt(now.Add(-historyWindow).UnixMilli(), 10))
		ps.Add("endTime", strconv.FormatInt(now.UnixMilli(), 10))
		ps.Add("limit", "50")
		if cursor != "" {
			ps.Add("cursor", cursor)
		}
		v, err := rest.Fetch(ctx, e.c.do, request{ep: epDeposits, params: ps, cred: &cred}, parseDeposits)
		if err != nil {
			return nil, err
		}
		rows = append(rows, v.items()...)
		if v.Cursor == "" || len(v.items()) == 0 {
			break
		}
		cursor = v.Cursor
	}
	out := make([]exgate.Deposit, 0, len(rows))
	for _, r := range rows {
		d := normalizeDeposit(r)
		if (f.Asset != "" && d.Asset != exgate.NormalizeAsset(f.Asset)) || (f.Status != "" && d.Status != f.Status) {
			continue
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(a, b exgate.Deposit) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	return out, nil
}

// normalizeDeposit maps one deposit record. Bybit's records carry no
// creation time, only successAt, which is the timestamp (as ccxt reads
// it).
func normalizeDeposit(r depositJSON) exgate.Deposit {
	ts, _ := r.SuccessAt.millis()
	return exgate.Deposit{
		ID: string(r.ID), Amount: exgate.NewNumber(r.Amount.Decimal), Asset: exgate.NormalizeAsset(r.Coin),
		Status: statusOf(depositStatuses, string(r.Status)), Address: r.ToAddress, Tag: r.Tag,
		Network: networkOf(r.Chain), TxID: r.TxID, Timestamp: ts, RawStatus: string(r.Status),
	}
}

// DepositAddress returns the address of the asset on the network from
// GET /v5/asset/deposit/query-address coin= chainType=<Bybit's chain>;
// tagDeposit (the memo) is the tag when the chain has one.
func (e *Exchange) DepositAddress(ctx context.Context, cred exgate.Credential, req exgate.DepositAddressRequest) (exgate.DepositAddress, error) {
	asset := exgate.NormalizeAsset(req.Asset)
	ch, err := e.chain(ctx, cred, asset, req.Network)
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	if strings.TrimSpace(string(ch.ChainDeposit)) == "0" {
		return exgate.DepositAddress{}, exgate.Errorf(exgate.CodeExchangeUnavailable, "bybit has suspended %s deposits on %s", asset, ch.Chain)
	}
	var ps rest.Params
	ps.Add("coin", asset)
	ps.Add("chainType", ch.Chain)
	a, err := rest.Fetch(ctx, e.c.do, request{ep: epDepositAddr, params: ps, cred: &cred}, parseAddress)
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	for _, c := range a.Chains {
		if !strings.EqualFold(c.Chain, ch.Chain) {
			continue
		}
		addr := strings.TrimSpace(c.AddressDeposit)
		if addr == "" {
			return exgate.DepositAddress{}, exgate.Errorf(exgate.CodeExchangeUnavailable, "bybit has no %s deposit address on %s yet; try again later", asset, ch.Chain)
		}
		out := exgate.DepositAddress{Asset: asset, Address: addr, Network: networkOf(ch.Chain)}
		if tag := strings.TrimSpace(c.TagDeposit); tag != "" {
			out.Tag = &tag
		}
		return out, nil
	}
	return exgate.DepositAddress{}, exgate.ParamError("network", "bybit has no %s deposit address on %s", asset, networkOf(ch.Chain))
}

// coinCache keeps the chains of each coin (GET /v5/asset/coin/query-info,
// signed, 5 requests a second), refreshed when older than ttl.
type coinCache struct {
	c     *client
	ttl   time.Duration
	group singleflight.Group

	mu      sync.Mutex
	entries map[string]*coinEntry
}

type coinEntry struct {
	chains  []chainJSON
	fetched time.Time
}

// get returns the chains of asset (nil when Bybit has no such coin).
func (cc *coinCache) get(ctx context.Context, cred exgate.Credential, asset string) ([]chainJSON, error) {
	cc.mu.Lock()
	ent := cc.entries[asset]
	cc.mu.Unlock()
	if ent != nil && cc.c.Now().Sub(ent.fetched) <= cc.ttl {
		return ent.chains, nil
	}
	ch := cc.group.DoChan(asset, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		var ps rest.Params
		ps.Add("coin", asset)
		coins, err := rest.Fetch(ctx, cc.c.do, request{ep: epCoinInfo, params: ps, cred: &cred}, parseCoinInfo)
		if err != nil {
			return nil, err
		}
		chains := coins[asset]
		cc.mu.Lock()
		cc.entries[asset] = &coinEntry{chains: chains, fetched: cc.c.Now()}
		cc.mu.Unlock()
		return chains, nil
	})
	chains, err := rest.Await[[]chainJSON](ctx, ch, "bybit chains of "+asset)
	if err != nil && ent != nil {
		cc.c.Log.WarnContext(ctx, "bybit chains not refreshed; using the cached list", "asset", asset, "err", err)
		return ent.chains, nil
	}
	return chains, err
}

// chain finds Bybit's chain of asset for a network code. An unknown asset
// or network is INVALID_PARAMETER naming the networks Bybit has.
func (e *Exchange) chain(ctx context.Context, cred exgate.Credential, asset, network string) (chainJSON, error) {
	if strings.TrimSpace(network) == "" {
		return chainJSON{}, exgate.ParamError("network", "network is required")
	}
	chains, err := e.coins.get(ctx, cred, asset)
	if err != nil {
		return chainJSON{}, err
	}
	if len(chains) == 0 {
		return chainJSON{}, exgate.ParamError("asset", "bybit has no asset %s", asset)
	}
	want := chainOf(network)
	names := make([]string, 0, len(chains))
	for _, c := range chains {
		if strings.EqualFold(c.Chain, want) {
			return c, nil
		}
		names = append(names, networkOf(c.Chain))
	}
	return chainJSON{}, exgate.ParamError("network", "bybit has no %s network for %s (it has %s)", exgate.NormalizeAsset(network), asset, strings.Join(names, ", "))
}

// requestIDPattern is Bybit's withdrawal requestId: 1 to 32 letters and
// digits, globally unique, the idempotency key. Source:
// https://bybit-exchange.github.io/docs/v5/asset/withdraw/withdraw
// (requestId).
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)

// requestID is the requestId of a client withdrawal id: the id itself when
// Bybit takes it, else the first 32 hex digits of its SHA-256, a
// deterministic encoding (docs/contract.md 2.4).
func requestID(clientID string) string {
	if requestIDPattern.MatchString(clientID) {
		return clientID
	}
	sum := sha256.Sum256([]byte(clientID))
	return hex.EncodeToString(sum[:16])
}

// withdrawBody is POST /v5/asset/withdraw/create. Field order is the
// order sent and signed.
type withdrawBody struct {
	Coin        string `json:"coin"`
	Chain       string `json:"chain"`
	Address     string `json:"address"`
	Tag         string `json:"tag,omitempty"`
	Amount      string `json:"amount"`
	Timestamp   int64  `json:"timestamp"`
	ForceChain  int    `json:"forceChain"`
	AccountType string `json:"accountType"`
	FeeType     int    `json:"feeType"`
	RequestID   string `json:"requestId"`
}

// Withdraw submits one withdrawal with POST /v5/asset/withdraw/create from
// the funding wallet (accountType FUND: the gateway never moves funds by
// itself, docs/contract.md 2.10), on-chain (forceChain 1), with requestId
// derived from req.ClientWithdrawalID (Bybit's idempotency key) and
// feeType 0: amount is what the destination receives and Bybit charges its
// fee on top, which is what amount means on every exchange of the gateway
// (exgate.WithdrawalRequest). The fee is read from the chain's
// withdrawFee and withdrawPercentageFee (feeType 0: amount/(1-p)*p +
// withdrawFee). An address not in the account's address book is refused
// by Bybit: WITHDRAWAL_REJECTED saying so. Never retried.
func (e *Exchange) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	if !clientIDRule.Pattern.MatchString(req.ClientWithdrawalID) {
		return exgate.Withdrawal{}, exgate.ParamError("clientWithdrawalId", "a withdrawal needs a client withdrawal id of 1 to 36 characters of [A-Za-z0-9_-]")
	}
	if !req.Amount.IsPositive() {
		return exgate.Withdrawal{}, exgate.ParamError("amount", "amount must be positive")
	}
	asset := exgate.NormalizeAsset(req.Asset)
	address := strings.TrimSpace(req.Address)
	if address == "" {
		return exgate.Withdrawal{}, exgate.ParamError("address", "address is required")
	}
	ch, err := e.chain(ctx, cred, asset, req.Network)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	if strings.TrimSpace(string(ch.ChainWithdraw)) == "0" || !ch.WithdrawFee.Set {
		return exgate.Withdrawal{}, exgate.Errorf(exgate.CodeWithdrawalRejected, "bybit does not take %s withdrawals on %s now", asset, ch.Chain)
	}
	if n, err := strconv.Atoi(strings.TrimSpace(string(ch.MinAccuracy))); err == nil && n >= 0 && n <= 18 && !req.Amount.Equal(req.Amount.RoundDown(int32(n))) {
		return exgate.Withdrawal{}, exgate.ParamError("amount", "bybit takes %s withdrawals on %s with at most %d decimals", asset, ch.Chain, n)
	}
	if ch.WithdrawMin.IsPositive() && req.Amount.LessThan(ch.WithdrawMin.Decimal) {
		return exgate.Withdrawal{}, exgate.Errorf(exgate.CodeWithdrawalRejected, "bybit's minimum %s withdrawal on %s is %s", asset, ch.Chain, ch.WithdrawMin.Decimal)
	}
	fee := withdrawFee(req.Amount, ch)
	rid := requestID(req.ClientWithdrawalID)
	e.sent.put(rid, sentWithdrawal{asset: asset, chain: ch.Chain, address: address, tag: strings.TrimSpace(req.Tag), amount: req.Amount, sent: e.c.serverNow()})
	body, err := json.Marshal(withdrawBody{
		Coin: asset, Chain: ch.Chain, Address: address, Tag: strings.TrimSpace(req.Tag), Amount: req.Amount.String(),
		Timestamp: e.c.serverNow().UnixMilli(), ForceChain: 1, AccountType: "FUND", FeeType: 0, RequestID: rid,
	})
	if err != nil {
		return exgate.Withdrawal{}, fmt.Errorf("bybit: encoding withdrawal: %w", err)
	}
	result, err := e.c.do(ctx, request{ep: epWithdraw, body: body, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "bybit withdrawal not made", "clientWithdrawalId", req.ClientWithdrawalID, "err", err)
		return exgate.Withdrawal{}, err
	}
	id, err := parseWithdrawAck(result)
	if err != nil {
		e.log.ErrorContext(ctx, "bybit withdrawal answer unreadable", "clientWithdrawalId", req.ClientWithdrawalID, "err", err)
		return exgate.Withdrawal{}, badAnswer(epWithdraw, err)
	}
	e.sent.claim(rid, id)
	e.log.InfoContext(ctx, "bybit withdrawal made", "clientWithdrawalId", req.ClientWithdrawalID, "id", id)
	if w, err := e.findWithdrawal(ctx, cred, asset, id); err == nil {
		return e.normalizeWithdrawal(w, req.ClientWithdrawalID), nil
	}
	now := e.c.Now().UnixMilli()
	return exgate.Withdrawal{
		ID: req.ClientWithdrawalID, Amount: exgate.NewNumber(req.Amount), Fees: exgate.NumberPtr(fee),
		TotalAmount: exgate.NewNumber(req.Amount.Add(fee)), Asset: asset, Status: exgate.TransferPending,
		ToAddress: address, Timestamp: now, Network: networkOf(ch.Chain), Tag: strings.TrimSpace(req.Tag),
		Exchange: Name, ClientWithdrawalID: req.ClientWithdrawalID, ExchangeID: id, RawStatus: "SecurityCheck",
	}, nil
}

// withdrawFee is Bybit's fee for amount to arrive (feeType 0):
// amount/(1-p)*p + withdrawFee, p the chain's withdrawPercentageFee.
// Source: https://bybit-exchange.github.io/docs/v5/asset/withdraw/withdraw
// (feeType).
func withdrawFee(amount decimal.Decimal, ch chainJSON) decimal.Decimal {
	fee := ch.WithdrawFee.Decimal
	if p := ch.WithdrawPercentageFee.Decimal; p.IsPositive() && p.LessThan(decimal.NewFromInt(1)) {
		fee = fee.Add(amount.DivRound(decimal.NewFromInt(1).Sub(p), 18).Mul(p))
	}
	return fee
}

// findWithdrawal reads one withdrawal record by Bybit's id.
func (e *Exchange) findWithdrawal(ctx context.Context, cred exgate.Credential, asset, id string) (withdrawalJSON, error) {
	var ps rest.Params
	ps.Add("withdrawID", id)
	ps.Add("withdrawType", "2")
	v, err := rest.Fetch(ctx, e.c.do, request{ep: epWithdrawals, params: ps, cred: &cred}, parseWithdrawals)
	if err != nil {
		return withdrawalJSON{}, err
	}
	for _, w := range v.items() {
		if string(w.WithdrawID) == id && (asset == "" || strings.EqualFold(w.Coin, asset)) {
			return w, nil
		}
	}
	return withdrawalJSON{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "bybit has no withdrawal with id " + id,
		Err: fmt.Errorf("bybit: withdrawal %s: %w", id, exgate.ErrNotFound)}
}

// sentWithdrawal is a withdrawal this process sent: what it asked for
// and, once Bybit answered, the withdrawId.
type sentWithdrawal struct {
	asset, chain, address, tag string
	amount                     decimal.Decimal
	sent                       time.Time
	id                         string
}

// sentWithdrawals are the withdrawals this process sent, by requestId.
type sentWithdrawals struct {
	mu sync.Mutex
	m  map[string]*sentWithdrawal
}

func (s *sentWithdrawals) put(rid string, w sentWithdrawal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*sentWithdrawal{}
	}
	s.m[rid] = &w
}

// get returns a copy of the withdrawal sent under rid.
func (s *sentWithdrawals) get(rid string) (sentWithdrawal, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.m[rid]
	if !ok {
		return sentWithdrawal{}, false
	}
	return *w, true
}

// claim records Bybit's id of the withdrawal sent under rid.
func (s *sentWithdrawals) claim(rid, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.m[rid]; ok {
		w.id = id
	}
}

// claimed is the set of Bybit ids known to belong to a sent withdrawal.
func (s *sentWithdrawals) claimed() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, w := range s.m {
		if w.id != "" {
			out[w.id] = true
		}
	}
	return out
}

// matchSkew is how far before the send time a matching withdrawal record
// may be dated (clock skew); unclaimedWindow how recent a withdrawal the
// gateway cannot account for must be to make a lookup ambiguous.
const (
	matchSkew       = 2 * time.Minute
	unclaimedWindow = 24 * time.Hour
)

// QueryWithdrawal reads a withdrawal back. Bybit finds a withdrawal by its
// withdrawId, but its records do not carry the requestId the adapter sent,
// so by the client id alone:
//   - when this process sent the withdrawal, by the withdrawId Bybit
//     answered, or, the answer lost, by the record matching its coin,
//     chain, address, tag and amount, dated after it was sent and claimed
//     by no other withdrawal this process knows;
//   - else (another instance, or a restart) it cannot be told apart: the
//     answer is not found (an error wrapping exgate.ErrNotFound) only when
//     the asset has no recent withdrawal the process cannot account for,
//     and EXCHANGE_UNAVAILABLE otherwise, so that the journal keeps it
//     unsettled rather than call a withdrawal that was made failed
//     (docs/exchanges/bybit.md).
func (e *Exchange) QueryWithdrawal(ctx context.Context, cred exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	if q.ClientWithdrawalID == "" && q.ExchangeID == "" {
		return exgate.Withdrawal{}, exgate.ParamError("clientWithdrawalId", "a withdrawal is looked up by its client withdrawal id")
	}
	rid := requestID(q.ClientWithdrawalID)
	sent, mine := e.sent.get(rid)
	id := q.ExchangeID
	if id == "" && mine {
		id = sent.id
	}
	if id != "" {
		w, err := e.findWithdrawal(ctx, cred, q.Asset, id)
		if err != nil {
			return exgate.Withdrawal{}, err
		}
		return e.normalizeWithdrawal(w, q.ClientWithdrawalID), nil
	}
	asset := q.Asset
	if mine {
		asset = sent.asset
	}
	rows, err := e.withdrawalRecords(ctx, cred, asset)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	claimed := e.sent.claimed()
	notFound := &exgate.Error{Code: exgate.CodeNotFound, Detail: "bybit has no withdrawal with client id " + q.ClientWithdrawalID,
		Err: fmt.Errorf("bybit: withdrawal %s: %w", q.ClientWithdrawalID, exgate.ErrNotFound)}
	if mine {
		// Oldest first: the first unclaimed match is the earliest one.
		for i := len(rows) - 1; i >= 0; i-- {
			w := rows[i]
			created, _ := w.CreateTime.millis()
			if claimed[string(w.WithdrawID)] || created < sent.sent.Add(-matchSkew).UnixMilli() ||
				!strings.EqualFold(w.Chain, sent.chain) || w.ToAddress != sent.address || w.Tag != sent.tag || !w.Amount.Equal(sent.amount) {
				continue
			}
			e.sent.claim(rid, string(w.WithdrawID))
			e.log.InfoContext(ctx, "bybit withdrawal found by its details", "clientWithdrawalId", q.ClientWithdrawalID, "id", w.WithdrawID)
			return e.normalizeWithdrawal(w, q.ClientWithdrawalID), nil
		}
		return exgate.Withdrawal{}, notFound
	}
	since := e.c.serverNow().Add(-unclaimedWindow).UnixMilli()
	for _, w := range rows {
		if created, _ := w.CreateTime.millis(); created >= since && !claimed[string(w.WithdrawID)] {
			return exgate.Withdrawal{}, exgate.Errorf(exgate.CodeExchangeUnavailable,
				"bybit cannot look a withdrawal up by its client id (requestId %s) from this gateway process; the account has recent %s withdrawals it did not send, such as %s: check the account's withdrawal records",
				rid, exgate.NormalizeAsset(asset), w.WithdrawID)
		}
	}
	return exgate.Withdrawal{}, notFound
}

// withdrawalRecords reads the withdrawals of the last 30 days (on-chain
// and internal, pages of 50, at most 500), of one asset when it is set.
func (e *Exchange) withdrawalRecords(ctx context.Context, cred exgate.Credential, asset string) ([]withdrawalJSON, error) {
	now := e.c.serverNow()
	var rows []withdrawalJSON
	cursor := ""
	for page := 0; page < maxPages; page++ {
		var ps rest.Params
		if asset != "" {
			ps.Add("coin", exgate.NormalizeAsset(asset))
		}
		ps.Add("withdrawType", "2")
		ps.Add("startTime", strconv.FormatInt(now.Add(-historyWindow).UnixMilli(), 10))
		ps.Add("endTime", strconv.FormatInt(now.Add(time.Minute).UnixMilli(), 10))
		ps.Add("limit", "50")
		if cursor != "" {
			ps.Add("cursor", cursor)
		}
		v, err := rest.Fetch(ctx, e.c.do, request{ep: epWithdrawals, params: ps, cred: &cred}, parseWithdrawals)
		if err != nil {
			return nil, err
		}
		rows = append(rows, v.items()...)
		if v.Cursor == "" || len(v.items()) == 0 {
			break
		}
		cursor = v.Cursor
	}
	return rows, nil
}

// normalizeWithdrawal maps a withdrawal record: amount is what arrives
// (the adapter sends feeType 0) and withdrawFee Bybit's fee; both are
// reported as Bybit gives them and the total is their sum.
func (e *Exchange) normalizeWithdrawal(w withdrawalJSON, id string) exgate.Withdrawal {
	ts, _ := w.CreateTime.millis()
	clientID := id
	if id == "" {
		id = string(w.WithdrawID)
	}
	out := exgate.Withdrawal{
		ID: id, Amount: exgate.NewNumber(w.Amount.Decimal), TotalAmount: exgate.NewNumber(w.Amount.Decimal),
		Asset: exgate.NormalizeAsset(w.Coin), Status: statusOf(withdrawalStatuses, w.Status),
		ToAddress: w.ToAddress, TxID: w.TxID, Timestamp: ts, Network: networkOf(w.Chain), Tag: w.Tag,
		Exchange: Name, ClientWithdrawalID: clientID, ExchangeID: string(w.WithdrawID), RawStatus: w.Status,
	}
	if w.WithdrawFee.Set {
		out.Fees = exgate.NumberPtr(w.WithdrawFee.Decimal)
		out.TotalAmount = exgate.NewNumber(w.Amount.Add(w.WithdrawFee.Decimal))
	}
	return out
}

// RecentWithdrawals returns the withdrawals of the last 30 days, newest
// first, from GET /v5/asset/withdraw/query-record (withdrawType 2:
// on-chain and internal), including those made outside the gateway, with
// Bybit's id: its records do not carry the requestId. The asset filter is
// sent to Bybit; the status filter is applied here.
func (e *Exchange) RecentWithdrawals(ctx context.Context, cred exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error) {
	rows, err := e.withdrawalRecords(ctx, cred, f.Asset)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Withdrawal, 0, len(rows))
	for _, r := range rows {
		w := e.normalizeWithdrawal(r, "")
		if (f.Asset != "" && w.Asset != exgate.NormalizeAsset(f.Asset)) || (f.Status != "" && w.Status != f.Status) {
			continue
		}
		out = append(out, w)
	}
	slices.SortStableFunc(out, func(a, b exgate.Withdrawal) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	return out, nil
}

// transferID is the transferId of a client transfer id: Bybit takes a
// UUID ("Please manually generate a UUID",
// https://bybit-exchange.github.io/docs/v5/asset/transfer/create-inter-transfer),
// so the adapter derives a version-5-style UUID from the SHA-256 of the
// client's id: the same id always gives the same transferId, which is
// what makes a transfer idempotent at Bybit (a used transferId is refused
// with 131214).
func transferID(clientID string) string {
	sum := sha256.Sum256([]byte("exgate-transfer:" + clientID))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// transferBody is POST /v5/asset/transfer/inter-transfer.
type transferBody struct {
	TransferID      string `json:"transferId"`
	Coin            string `json:"coin"`
	Amount          string `json:"amount"`
	FromAccountType string `json:"fromAccountType"`
	ToAccountType   string `json:"toAccountType"`
}

// Transfer moves funds between the unified trading account (spot) and the
// funding account (funding) with POST /v5/asset/transfer/inter-transfer,
// transferId derived from req.ClientTransferID; never retried. A transferId
// Bybit already knows (131214 "TransferId exist": the same client id sent
// before) is answered with that transfer as Bybit records it, never a
// second move.
func (e *Exchange) Transfer(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest) (exgate.Transfer, error) {
	if !clientIDRule.Pattern.MatchString(req.ClientTransferID) {
		return exgate.Transfer{}, exgate.ParamError("clientTransferId", "a transfer needs a client transfer id of 1 to 36 characters of [A-Za-z0-9_-]")
	}
	from, ok1 := accountTypes[req.From]
	to, ok2 := accountTypes[req.To]
	switch {
	case !ok1:
		return exgate.Transfer{}, exgate.ParamError("from", "from must be spot or funding")
	case !ok2:
		return exgate.Transfer{}, exgate.ParamError("to", "to must be spot or funding")
	case from == to:
		return exgate.Transfer{}, exgate.ParamError("to", "a transfer goes from one wallet to the other")
	case !req.Amount.IsPositive():
		return exgate.Transfer{}, exgate.ParamError("amount", "amount must be positive")
	}
	asset := exgate.NormalizeAsset(req.Asset)
	// A coin Bybit does not have is refused here, naming the asset (Bybit's
	// own answer would be a bare 131203); when the coin list cannot be read
	// the transfer goes to Bybit, which checks it too.
	if chains, err := e.coins.get(ctx, cred, asset); err == nil && chains == nil {
		return exgate.Transfer{}, exgate.ParamError("asset", "bybit has no asset %s", asset)
	}
	tid := transferID(req.ClientTransferID)
	body, err := json.Marshal(transferBody{TransferID: tid, Coin: asset, Amount: req.Amount.String(), FromAccountType: from, ToAccountType: to})
	if err != nil {
		return exgate.Transfer{}, fmt.Errorf("bybit: encoding transfer: %w", err)
	}
	sent := e.c.serverNow()
	result, err := e.c.do(ctx, request{ep: epTransfer, body: body, cred: &cred})
	if err != nil {
		if ae, ok := errors.AsType[*apiError](err); ok && ae.code == codeTransferIDExists {
			e.log.InfoContext(ctx, "bybit knows the transferId already; reading it back", "clientTransferId", req.ClientTransferID, "transferId", tid)
			return e.QueryTransfer(ctx, cred, exgate.TransferQuery{ClientTransferID: req.ClientTransferID, Asset: asset, SentAfter: sent.Add(-6 * 24 * time.Hour)})
		}
		e.log.WarnContext(ctx, "bybit transfer not made", "clientTransferId", req.ClientTransferID, "err", err)
		return exgate.Transfer{}, err
	}
	ack, err := parseTransferAck(result)
	if err != nil {
		return exgate.Transfer{}, badAnswer(epTransfer, err)
	}
	e.log.InfoContext(ctx, "bybit transfer made", "clientTransferId", req.ClientTransferID, "transferId", ack.TransferID, "status", ack.Status)
	return exgate.Transfer{
		ID: req.ClientTransferID, ClientTransferID: req.ClientTransferID, Asset: asset, Amount: exgate.NewNumber(req.Amount),
		From: req.From, To: req.To, Status: statusOf(transferStatuses, ack.Status), Timestamp: e.c.Now().UnixMilli(),
		Exchange: Name, ExchangeID: ack.TransferID,
	}, nil
}

// transferWindow is the span of one transfer-list query: at most 7 days.
// Source: https://bybit-exchange.github.io/docs/v5/asset/transfer/inter-transfer-list.
const transferWindow = 7*24*time.Hour - time.Minute

// QueryTransfer reads a transfer back by its transferId (derived from the
// client id, or Bybit's own in q.ExchangeID) with
// GET /v5/asset/transfer/query-inter-transfer-list, over a window of at
// most 7 days that covers q.SentAfter (the list's limit, which may apply
// to a lookup by id too). Not found: an error wrapping exgate.ErrNotFound.
func (e *Exchange) QueryTransfer(ctx context.Context, cred exgate.Credential, q exgate.TransferQuery) (exgate.Transfer, error) {
	tid := q.ExchangeID
	if tid == "" {
		if q.ClientTransferID == "" {
			return exgate.Transfer{}, exgate.ParamError("clientTransferId", "a transfer is looked up by its client transfer id")
		}
		tid = transferID(q.ClientTransferID)
	}
	now := e.c.serverNow()
	start := now.Add(-transferWindow)
	if !q.SentAfter.IsZero() && q.SentAfter.After(start) && q.SentAfter.Before(now) {
		start = q.SentAfter.Add(-time.Minute)
	}
	end := start.Add(transferWindow)
	var ps rest.Params
	ps.Add("transferId", tid)
	ps.Add("startTime", strconv.FormatInt(start.UnixMilli(), 10))
	ps.Add("endTime", strconv.FormatInt(end.UnixMilli(), 10))
	v, err := rest.Fetch(ctx, e.c.do, request{ep: epTransfers, params: ps, cred: &cred}, parseTransfers)
	if err != nil {
		return exgate.Transfer{}, err
	}
	for _, t := range v.items() {
		if t.TransferID == tid {
			return normalizeTransfer(t, q.ClientTransferID), nil
		}
	}
	return exgate.Transfer{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "bybit has no transfer with transferId " + tid,
		Err: fmt.Errorf("bybit: transfer %s: %w", tid, exgate.ErrNotFound)}
}

// normalizeTransfer maps a transfer record; id is the client's id when
// known, else Bybit's transferId.
func normalizeTransfer(t transferJSON, id string) exgate.Transfer {
	ts, _ := t.Timestamp.millis()
	if id == "" {
		id = t.TransferID
	}
	return exgate.Transfer{
		ID: id, ClientTransferID: id, Asset: exgate.NormalizeAsset(t.Coin), Amount: exgate.NewNumber(t.Amount.Decimal),
		From: walletOf(t.FromAccountType), To: walletOf(t.ToAccountType), Status: statusOf(transferStatuses, t.Status),
		Timestamp: ts, Exchange: Name, ExchangeID: t.TransferID,
	}
}

// RecentTransfers returns the transfers of the last 7 days between the
// unified and the funding account, newest first (sorted here: Bybit does
// not document the list's order), at most f.Limit (default 100, pages of
// 50). Transfers made outside the gateway carry Bybit's transferId as
// their id.
func (e *Exchange) RecentTransfers(ctx context.Context, cred exgate.Credential, f exgate.TransferFilter) ([]exgate.Transfer, error) {
	limit := limitOf(f.Limit)
	now := e.c.serverNow()
	var rows []transferJSON
	cursor := ""
	for page := 0; page < maxPages && len(rows) < limit; page++ {
		var ps rest.Params
		if f.Asset != "" {
			ps.Add("coin", exgate.NormalizeAsset(f.Asset))
		}
		ps.Add("startTime", strconv.FormatInt(now.Add(-transferWindow).UnixMilli(), 10))
		ps.Add("endTime", strconv.FormatInt(now.UnixMilli(), 10))
		ps.Add("limit", "50")
		if cursor != "" {
			ps.Add("cursor", cursor)
		}
		v, err := rest.Fetch(ctx, e.c.do, request{ep: epTransfers, params: ps, cred: &cred}, parseTransfers)
		if err != nil {
			return nil, err
		}
		rows = append(rows, v.items()...)
		if v.Cursor == "" || len(v.items()) == 0 {
			break
		}
		cursor = v.Cursor
	}
	out := make([]exgate.Transfer, 0, len(rows))
	for _, t := range rows {
		if (t.FromAccountType != "UNIFIED" && t.FromAccountType != "FUND") || (t.ToAccountType != "UNIFIED" && t.ToAccountType != "FUND") {
			continue // another account type (earn, a classic account)
		}
		out = append(out, normalizeTransfer(t, ""))
	}
	slices.SortStableFunc(out, func(a, b exgate.Transfer) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	return out[:min(len(out), limit)], nil
}
