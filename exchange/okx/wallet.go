package okx

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// OKX keeps an account's funds in two accounts (OKX API v5 docs, "Funding
// account" and "Trading account"): the trading account (18) that orders
// use, the gateway's spot wallet, and the funding account (6) where most
// deposits land and from which every withdrawal leaves, the gateway's
// funding wallet (docs/contract.md 2.10). The gateway never moves funds
// between them by itself.

// Balances returns the trading account's currencies with a non-zero
// available or frozen amount (GET /account/balance: availBal, frozenBal).
func (e *Exchange) Balances(ctx context.Context, cred exgate.Credential) ([]exgate.Balance, error) {
	return e.WalletBalances(ctx, cred, exgate.WalletSpot)
}

// WalletBalances returns one wallet's balances: the trading account for
// spot, the funding account (GET /asset/balances) for funding.
func (e *Exchange) WalletBalances(ctx context.Context, cred exgate.Credential, wallet exgate.WalletKind) ([]exgate.Balance, error) {
	var rows []balanceJSON
	var err error
	switch wallet {
	case exgate.WalletSpot:
		rows, err = rest.Fetch(ctx, e.c.do, request{ep: epBalance, cred: &cred}, parseTradingBalance)
	case exgate.WalletFunding:
		rows, err = rest.Fetch(ctx, e.c.do, request{ep: epAssetBalances, cred: &cred}, parseFundingBalances)
	default:
		return nil, exgate.ParamError("wallet", "wallet must be spot or funding, not %q", wallet)
	}
	if err != nil {
		return nil, err
	}
	byAsset := map[string]int{}
	out := make([]exgate.Balance, 0, len(rows))
	for _, r := range rows {
		if r.AvailBal.IsZero() && r.FrozenBal.IsZero() {
			continue
		}
		asset := exgate.NormalizeAsset(r.Ccy)
		if i, ok := byAsset[asset]; ok {
			out[i].Available = out[i].Available.Add(r.AvailBal.Decimal)
			out[i].Locked = out[i].Locked.Add(r.FrozenBal.Decimal)
			continue
		}
		byAsset[asset] = len(out)
		out = append(out, exgate.Balance{Asset: asset, Available: r.AvailBal.Decimal, Locked: r.FrozenBal.Decimal})
	}
	return out, nil
}

// historyLimit is OKX's largest page of deposits, withdrawals and bills.
const historyLimit = 100

// RecentDeposits returns the latest deposits (at most 100), newest first,
// from GET /asset/deposit-history, filtered by asset (sent to OKX) and
// status (applied here: OKX's state filter takes its own codes).
func (e *Exchange) RecentDeposits(ctx context.Context, cred exgate.Credential, f exgate.DepositFilter) ([]exgate.Deposit, error) {
	var ps rest.Params
	if f.Asset != "" {
		ps.Add("ccy", exgate.NormalizeAsset(f.Asset))
	}
	ps.Add("limit", strconv.Itoa(historyLimit))
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epDeposits, params: ps, cred: &cred}, parseDeposits)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Deposit, 0, len(rows))
	for _, r := range rows {
		d := exgate.Deposit{
			ID: string(r.DepID), Amount: exgate.NewNumber(r.Amt.Decimal), Asset: exgate.NormalizeAsset(r.Ccy),
			Status: transferStatus(depositStatuses, string(r.State)), Address: r.To, Network: networkOf(r.Chain),
			TxID: r.TxID, Timestamp: r.ms, RawStatus: string(r.State),
		}
		if addr, tag, ok := strings.Cut(d.Address, ":"); ok && tag != "" && !strings.Contains(tag, ":") {
			d.Address, d.Tag = addr, tag
		}
		if (f.Asset != "" && d.Asset != exgate.NormalizeAsset(f.Asset)) || (f.Status != "" && d.Status != f.Status) {
			continue
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(a, b exgate.Deposit) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	return out, nil
}

// currencyCache keeps GET /asset/currencies (a signed call) per account
// for ttl.
type currencyCache struct {
	c       *client
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]*currencyEntry
}

type currencyEntry struct {
	rows    []currencyJSON
	fetched time.Time
}

// chains returns the chains of asset for cred's account.
func (cc *currencyCache) chains(ctx context.Context, cred exgate.Credential, asset string) ([]currencyJSON, error) {
	key := rest.AccountKey(&cred) + "/" + asset
	cc.mu.Lock()
	ent := cc.entries[key]
	cc.mu.Unlock()
	if ent != nil && cc.c.Now().Sub(ent.fetched) < cc.ttl {
		return ent.rows, nil
	}
	var ps rest.Params
	ps.Add("ccy", asset)
	rows, err := rest.Fetch(ctx, cc.c.do, request{ep: epCurrencies, params: ps, cred: &cred}, parseCurrencies)
	if err != nil {
		return nil, err
	}
	rows = slices.DeleteFunc(rows, func(r currencyJSON) bool { return !strings.EqualFold(r.Ccy, asset) })
	cc.mu.Lock()
	cc.entries[key] = &currencyEntry{rows: rows, fetched: cc.c.Now()}
	cc.mu.Unlock()
	return rows, nil
}

// chain finds OKX's chain of asset on network (any alias of the network
// code); several matches prefer the main net.
func (e *Exchange) chain(ctx context.Context, cred exgate.Credential, asset, network string) (currencyJSON, error) {
	rows, err := e.currencies.chains(ctx, cred, asset)
	if err != nil {
		return currencyJSON{}, err
	}
	if len(rows) == 0 {
		return currencyJSON{}, exgate.ParamError("asset", "okx lists no currency %s", asset)
	}
	var match []currencyJSON
	var nets []string
	for _, r := range rows {
		if sameNetwork(r.Chain, network) {
			match = append(match, r)
		}
		nets = append(nets, networkOf(r.Chain))
	}
	if len(match) == 0 {
		return currencyJSON{}, exgate.ParamError("network", "okx has no %s chain on network %s (it has %s)", asset, rest.NetworkCode(network), strings.Join(nets, ", "))
	}
	if i := slices.IndexFunc(match, func(r currencyJSON) bool { return r.MainNet }); i > 0 {
		return match[i], nil
	}
	return match[0], nil
}

// DepositAddress returns the address of the asset on the network from
// GET /asset/deposit-address: the entry of the network's OKX chain, with
// its memo (tag, memo, pmtId or addrEx.comment) as the tag.
func (e *Exchange) DepositAddress(ctx context.Context, cred exgate.Credential, req exgate.DepositAddressRequest) (exgate.DepositAddress, error) {
	asset := exgate.NormalizeAsset(req.Asset)
	ch, err := e.chain(ctx, cred, asset, req.Network)
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	if !ch.CanDep {
		return exgate.DepositAddress{}, exgate.Errorf(exgate.CodeExchangeUnavailable, "okx has suspended %s deposits on %s", asset, ch.Chain)
	}
	var ps rest.Params
	ps.Add("ccy", asset)
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epDepositAddress, params: ps, cred: &cred}, parseAddresses)
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	for _, a := range rows {
		if !strings.EqualFold(a.Chain, ch.Chain) {
			continue
		}
		addr := strings.TrimSpace(a.Addr)
		if addr == "" {
			break
		}
		out := exgate.DepositAddress{Asset: asset, Address: addr, Network: networkOf(ch.Chain)}
		if tag := a.memo(); tag != "" {
			out.Tag = &tag
		}
		return out, nil
	}
	return exgate.DepositAddress{}, exgate.Errorf(exgate.CodeExchangeUnavailable, "okx has no %s deposit address on %s for this account yet; create one on OKX", asset, ch.Chain)
}

// withdrawBody is POST /asset/withdrawal. Field order is the order sent.
type withdrawBody struct {
	Ccy      string `json:"ccy"`
	Amt      string `json:"amt"`
	Dest     string `json:"dest"`
	ToAddr   string `json:"toAddr"`
	Chain    string `json:"chain"`
	ClientID string `json:"clientId"`
}

// Withdraw submits one on-chain withdrawal (dest 4) from the funding
// account with POST /asset/withdrawal, carrying clientId =
// clOrdIDOf(req.ClientWithdrawalID). OKX's amt is what the destination
// receives and its fee comes on top (OKX API v5 docs, "Withdrawal": "the
// withdrawal fee is not included in the withdrawal amount"), so amt is
// req.Amount and the funding account must hold amount + fee: when its
// available balance cannot cover that, the withdrawal is refused here
// with INSUFFICIENT_FUNDS saying so (the gateway moves no funds itself).
// A tag travels as toAddr "address:tag". It is never retried.
func (e *Exchange) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	if !clientIDRule.Pattern.MatchString(req.ClientWithdrawalID) {
		return exgate.Withdrawal{}, exgate.ParamError("clientWithdrawalId", "okx takes 1 to 36 characters of [A-Za-z0-9_-] as a client withdrawal id")
	}
	if !req.Amount.IsPositive() {
		return exgate.Withdrawal{}, exgate.ParamError("amount", "amount must be positive")
	}
	asset := exgate.NormalizeAsset(req.Asset)
	address, tag := strings.TrimSpace(req.Address), strings.TrimSpace(req.Tag)
	if address == "" {
		return exgate.Withdrawal{}, exgate.ParamError("address", "address is required")
	}
	ch, err := e.chain(ctx, cred, asset, req.Network)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	if !ch.CanWd {
		return exgate.Withdrawal{}, exgate.Errorf(exgate.CodeWithdrawalRejected, "okx has suspended %s withdrawals on %s", asset, ch.Chain)
	}
	if ch.NeedTag && tag == "" {
		return exgate.Withdrawal{}, exgate.ParamError("tag", "okx needs a tag (memo) for %s withdrawals on %s", asset, ch.Chain)
	}
	if prec := ch.withdrawPrecision(); prec >= 0 && !req.Amount.Equal(req.Amount.RoundDown(prec)) {
		return exgate.Withdrawal{}, exgate.ParamError("amount", "okx takes %s withdrawals on %s with at most %d decimals", asset, ch.Chain, prec)
	}
	if ch.MinWd.IsPositive() && req.Amount.LessThan(ch.MinWd.Decimal) {
		return exgate.Withdrawal{}, exgate.Errorf(exgate.CodeWithdrawalRejected, "okx's minimum %s withdrawal on %s is %s", asset, ch.Chain, ch.MinWd.Decimal)
	}
	if ch.MaxWd.IsPositive() && req.Amount.GreaterThan(ch.MaxWd.Decimal) {
		return exgate.Withdrawal{}, exgate.Errorf(exgate.CodeWithdrawalRejected, "okx's maximum %s withdrawal on %s is %s", asset, ch.Chain, ch.MaxWd.Decimal)
	}
	fee := ch.fee()
	if err := e.fundingCovers(ctx, cred, asset, req.Amount, fee); err != nil {
		return exgate.Withdrawal{}, err
	}
	toAddr := address
	if tag != "" {
		toAddr = address + ":" + tag
	}
	body, err := json.Marshal(withdrawBody{Ccy: asset, Amt: req.Amount.String(), Dest: "4", ToAddr: toAddr, Chain: ch.Chain,
		ClientID: clOrdIDOf(req.ClientWithdrawalID)})
	if err != nil {
		return exgate.Withdrawal{}, fmt.Errorf("okx: encoding withdrawal: %w", err)
	}
	data, err := e.c.do(ctx, request{ep: epWithdraw, body: body, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "okx withdrawal not made", "clientWithdrawalId", req.ClientWithdrawalID, "err", err)
		return exgate.Withdrawal{}, err
	}
	ack, err := parseWithdrawAck(data)
	if err != nil {
		e.log.ErrorContext(ctx, "okx withdrawal answer unreadable", "clientWithdrawalId", req.ClientWithdrawalID, "err", err)
		return exgate.Withdrawal{}, badAnswer(epWithdraw, err)
	}
	e.log.InfoContext(ctx, "okx withdrawal made", "clientWithdrawalId", req.ClientWithdrawalID, "wdId", ack.WdID)
	w, err := e.findWithdrawal(ctx, cred, asset, "", string(ack.WdID))
	if err != nil {
		e.log.WarnContext(ctx, "okx withdrawal not read back; answering from the request", "wdId", ack.WdID, "err", err)
		w = withdrawalJSON{Ccy: asset, Chain: ch.Chain, To: toAddr, Tag: tag, State: "0", WdID: ack.WdID,
			ms: e.c.serverNow().UnixMilli()}
		w.Amt = rest.Decimal{Decimal: req.Amount, Set: true}
	}
	if !w.Fee.Set {
		w.Fee = rest.Decimal{Decimal: fee, Set: true}
	}
	return withdrawalFromOKX(w, req.ClientWithdrawalID), nil
}

// fundingCovers refuses a withdrawal the funding account's available
// balance cannot cover (amount plus OKX's fee).
func (e *Exchange) fundingCovers(ctx context.Context, cred exgate.Credential, asset string, amount, fee decimal.Decimal) error {
	var ps rest.Params
	ps.Add("ccy", asset)
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epAssetBalances, params: ps, cred: &cred}, parseFundingBalances)
	if err != nil {
		return err
	}
	avail := decimal.Zero
	for _, r := range rows {
		if strings.EqualFold(r.Ccy, asset) {
			avail = avail.Add(r.AvailBal.Decimal)
		}
	}
	if need := amount.Add(fee); avail.LessThan(need) {
		return exgate.Errorf(exgate.CodeInsufficientFunds,
			"okx withdraws from the funding wallet, which holds %s %s available; the withdrawal needs %s (amount %s plus OKX's fee %s); move funds there first with POST /v1/wallet/transfer (from spot to funding)",
			avail, asset, need, amount, fee)
	}
	return nil
}

// findWithdrawal reads one withdrawal by wdId, or by clientId when wdID
// is empty. Not found: an error wrapping exgate.ErrNotFound.
func (e *Exchange) findWithdrawal(ctx context.Context, cred exgate.Credential, asset, clientID, wdID string) (withdrawalJSON, error) {
	var ps rest.Params
	if asset != "" {
		ps.Add("ccy", asset)
	}
	if wdID != "" {
		ps.Add("wdId", wdID)
	} else {
		ps.Add("clientId", clientID)
	}
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epWithdrawals, params: ps, cred: &cred}, parseWithdrawals)
	if err != nil {
		return withdrawalJSON{}, err
	}
	for _, w := range rows {
		if (wdID != "" && string(w.WdID) == wdID) || (wdID == "" && w.ClientID == clientID) {
			return w, nil
		}
	}
	name := "with client id " + clientID
	if wdID != "" {
		name = "with id " + wdID
	}
	return withdrawalJSON{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "okx has no withdrawal " + name,
		Err: fmt.Errorf("okx: withdrawal %s: %w", name, exgate.ErrNotFound)}
}

// QueryWithdrawal reads a withdrawal back by OKX's wdId when known, else
// by the clientId sent for the client withdrawal id.
func (e *Exchange) QueryWithdrawal(ctx context.Context, cred exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	if q.ClientWithdrawalID == "" && q.ExchangeID == "" {
		return exgate.Withdrawal{}, exgate.ParamError("clientWithdrawalId", "a withdrawal is looked up by its client withdrawal id")
	}
	w, err := e.findWithdrawal(ctx, cred, exgate.NormalizeAsset(q.Asset), clOrdIDOf(q.ClientWithdrawalID), q.ExchangeID)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	return withdrawalFromOKX(w, q.ClientWithdrawalID), nil
}

// RecentWithdrawals returns the latest withdrawals (at most 100), newest
// first, including those made outside the gateway, filtered by asset (sent
// to OKX) and status (applied here).
func (e *Exchange) RecentWithdrawals(ctx context.Context, cred exgate.Credential, f exgate.WithdrawalFilter) ([]exgate.Withdrawal, error) {
	var ps rest.Params
	if f.Asset != "" {
		ps.Add("ccy", exgate.NormalizeAsset(f.Asset))
	}
	ps.Add("limit", strconv.Itoa(historyLimit))
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epWithdrawals, params: ps, cred: &cred}, parseWithdrawals)
	if err != nil {
		return nil, err
	}
	out := make([]exgate.Withdrawal, 0, len(rows))
	for _, r := range rows {
		w := withdrawalFromOKX(r, "")
		if (f.Asset != "" && w.Asset != exgate.NormalizeAsset(f.Asset)) || (f.Status != "" && w.Status != f.Status) {
			continue
		}
		out = append(out, w)
	}
	slices.SortStableFunc(out, func(a, b exgate.Withdrawal) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	return out, nil
}

// withdrawalFromOKX maps one withdrawal record: amount is amt (what the
// destination receives), fees OKX's fee, totalAmount their sum (what left
// the funding account). id is the gateway's id when known, else the
// record's clientId or OKX's wdId.
func withdrawalFromOKX(w withdrawalJSON, id string) exgate.Withdrawal {
	client := id
	if client == "" {
		client = w.ClientID
	}
	if id == "" {
		id = client
	}
	if id == "" {
		id = string(w.WdID)
	}
	tag := cmp.Or(strings.TrimSpace(w.Tag), strings.TrimSpace(w.Memo), strings.TrimSpace(w.PmtID))
	to := w.To
	if addr, t, ok := strings.Cut(to, ":"); ok && (t == tag || tag == "") && t != "" && !strings.Contains(t, ":") {
		to, tag = addr, t
	}
	out := exgate.Withdrawal{
		ID: id, Amount: exgate.NewNumber(w.Amt.Decimal), TotalAmount: exgate.NewNumber(w.Amt.Decimal),
		Asset: exgate.NormalizeAsset(w.Ccy), Status: transferStatus(withdrawalStatuses, string(w.State)),
		ToAddress: to, TxID: w.TxID, Timestamp: w.ms, Network: networkOf(w.Chain), Tag: tag,
		Exchange: Name, ClientWithdrawalID: client, ExchangeID: string(w.WdID), RawStatus: string(w.State),
	}
	if w.Fee.Set && (w.FeeCcy == "" || strings.EqualFold(w.FeeCcy, w.Ccy)) {
		out.Fees = exgate.NumberPtr(w.Fee.Decimal)
		out.TotalAmount = exgate.NewNumber(w.Amt.Add(w.Fee.Decimal))
	}
	return out
}

// transferBody is POST /asset/transfer. Field order is the order sent.
type transferBody struct {
	Ccy      string `json:"ccy"`
	Amt      string `json:"amt"`
	From     string `json:"from"`
	To       string `json:"to"`
	Type     string `json:"type"`
	ClientID string `json:"clientId"`
}

// Transfer moves funds between the trading account (spot) and the funding
// account (funding) with POST /asset/transfer (type 0, within the
// account), carrying clientId = clOrdIDOf(req.ClientTransferID), then
// reads its state from GET /asset/transfer-state ("failure of the request
// does not mean the transfer has failed", OKX API v5 docs, "Funds
// transfer"). It is never retried.
func (e *Exchange) Transfer(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest) (exgate.Transfer, error) {
	if req.ClientTransferID != "" && !clientIDRule.Pattern.MatchString(req.ClientTransferID) {
		return exgate.Transfer{}, exgate.ParamError("clientTransferId", "okx takes 1 to 36 characters of [A-Za-z0-9_-] as a client transfer id")
	}
	if !req.Amount.IsPositive() {
		return exgate.Transfer{}, exgate.ParamError("amount", "amount must be positive")
	}
	for name, w := range map[string]exgate.WalletKind{"from": req.From, "to": req.To} {
		if w != exgate.WalletSpot && w != exgate.WalletFunding {
			return exgate.Transfer{}, exgate.ParamError(name, "okx's wallets are spot (the trading account) and funding, not %q", w)
		}
	}
	if req.From == req.To {
		return exgate.Transfer{}, exgate.ParamError("to", "from and to are the same wallet %s", req.To)
	}
	asset := exgate.NormalizeAsset(req.Asset)
	if chains, err := e.currencies.chains(ctx, cred, asset); err != nil {
		return exgate.Transfer{}, err
	} else if len(chains) == 0 {
		return exgate.Transfer{}, exgate.ParamError("asset", "okx lists no currency %s", asset)
	}
	body, err := json.Marshal(transferBody{Ccy: asset, Amt: req.Amount.String(), From: accountOf(req.From), To: accountOf(req.To),
		Type: "0", ClientID: clOrdIDOf(req.ClientTransferID)})
	if err != nil {
		return exgate.Transfer{}, fmt.Errorf("okx: encoding transfer: %w", err)
	}
	data, err := e.c.do(ctx, request{ep: epTransfer, body: body, cred: &cred, ccy: asset})
	if err != nil {
		e.log.WarnContext(ctx, "okx transfer not made", "clientTransferId", req.ClientTransferID, "err", err)
		return exgate.Transfer{}, err
	}
	acks, err := parseTransfers(data)
	if err != nil || len(acks) != 1 {
		e.log.ErrorContext(ctx, "okx transfer answer unreadable", "clientTransferId", req.ClientTransferID, "err", err)
		return exgate.Transfer{}, badAnswer(epTransfer, fmt.Errorf("transfer answer with %d items: %v", len(acks), err))
	}
	t := acks[0]
	t.State = "pending"
	if st, err := e.transferState(ctx, cred, string(t.TransID), ""); err == nil {
		t.State = st.State
	} else {
		e.log.WarnContext(ctx, "okx transfer state not read; answering pending", "transId", t.TransID, "err", err)
	}
	out := transferFromOKX(t, req.ClientTransferID, e.c.serverNow().UnixMilli())
	out.Asset, out.Amount, out.From, out.To = asset, exgate.NewNumber(req.Amount), req.From, req.To
	return out, nil
}

// transferState reads GET /asset/transfer-state by transId or clientId.
func (e *Exchange) transferState(ctx context.Context, cred exgate.Credential, transID, clientID string) (transferJSON, error) {
	var ps rest.Params
	if transID != "" {
		ps.Add("transId", transID)
	} else {
		ps.Add("clientId", clientID)
	}
	rows, err := rest.Fetch(ctx, e.c.do, request{ep: epTransferState, params: ps, cred: &cred}, parseTransfers)
	if err != nil {
		return transferJSON{}, err
	}
	for _, r := range rows {
		if (transID != "" && string(r.TransID) == transID) || (transID == "" && r.ClientID == clientID) {
			return r, nil
		}
	}
	name := "with client id " + clientID
	if transID != "" {
		name = "with id " + transID
	}
	return transferJSON{}, &exgate.Error{Code: exgate.CodeNotFound, Detail: "okx has no transfer " + name,
		Err: fmt.Errorf("okx: transfer %s: %w", name, exgate.ErrNotFound)}
}

// QueryTransfer reads a transfer back by OKX's transId when known, else by
// the clientId sent for the client transfer id. transfer-state carries no
// time: the transfer's timestamp is q.SentAfter when set, else now.
func (e *Exchange) QueryTransfer(ctx context.Context, cred exgate.Credential, q exgate.TransferQuery) (exgate.Transfer, error) {
	if q.ClientTransferID == "" && q.ExchangeID == "" {
		return exgate.Transfer{}, exgate.ParamError("clientTransferId", "a transfer is looked up by its client transfer id")
	}
	t, err := e.transferState(ctx, cred, q.ExchangeID, clOrdIDOf(q.ClientTransferID))
	if err != nil {
		return exgate.Transfer{}, err
	}
	at := e.c.serverNow().UnixMilli()
	if !q.SentAfter.IsZero() {
		at = q.SentAfter.UnixMilli()
	}
	return transferFromOKX(t, q.ClientTransferID, at), nil
}

// transferFromOKX maps a transfer; id is the gateway's id when known.
func transferFromOKX(t transferJSON, id string, at int64) exgate.Transfer {
	client := cmp.Or(id, t.ClientID)
	return exgate.Transfer{
		ID: cmp.Or(client, string(t.TransID)), ClientTransferID: client, Asset: exgate.NormalizeAsset(t.Ccy),
		Amount: exgate.NewNumber(t.Amt.Decimal), From: walletOf(t.From), To: walletOf(t.To),
		Status: fundsTransferState(t.State), Timestamp: at, Exchange: Name, ExchangeID: string(t.TransID),
	}
}

// maxTransferLookups bounds the transfer-state reads of one
// RecentTransfers (10 requests / s per user).
const maxTransferLookups = 20

// RecentTransfers returns the transfers between the trading and the
// funding account, newest first, from the funding account's bills (GET
// /asset/bills, types 130 and 131); at most f.Limit (default and cap 100).
// A bill is a completed transfer. A bill carries no transId, so the newest
// bills with a clientId (at most maxTransferLookups) are read back with
// GET /asset/transfer-state for it, and their exchangeId is the transId as
// Transfer answered it; the others' is the billId.
func (e *Exchange) RecentTransfers(ctx context.Context, cred exgate.Credential, f exgate.TransferFilter) ([]exgate.Transfer, error) {
	limit := rest.Limit(f.Limit, historyLimit, historyLimit)
	var out []exgate.Transfer
	for _, typ := range []string{billFromTrading, billToTrading} {
		var ps rest.Params
		if f.Asset != "" {
			ps.Add("ccy", exgate.NormalizeAsset(f.Asset))
		}
		ps.Add("type", typ)
		ps.Add("limit", strconv.Itoa(limit))
		rows, err := rest.Fetch(ctx, e.c.do, request{ep: epAssetBills, params: ps, cred: &cred}, parseBills)
		if err != nil {
			return nil, err
		}
		for _, b := range rows {
			if string(b.Type) != typ {
				continue
			}
			from, to := exgate.WalletSpot, exgate.WalletFunding
			if typ == billToTrading {
				from, to = to, from
			}
			out = append(out, exgate.Transfer{
				ID: cmp.Or(b.ClientID, string(b.BillID)), ClientTransferID: b.ClientID, Asset: exgate.NormalizeAsset(b.Ccy),
				Amount: exgate.NewNumber(b.BalChg.Abs()), From: from, To: to, Status: exgate.TransferCompleted,
				Timestamp: b.ms, Exchange: Name, ExchangeID: string(b.BillID),
			})
		}
	}
	slices.SortStableFunc(out, func(a, b exgate.Transfer) int {
		return cmp.Or(cmp.Compare(b.Timestamp, a.Timestamp), compareIDs(b.ExchangeID, a.ExchangeID))
	})
	if out == nil {
		out = []exgate.Transfer{}
	}
	out = out[:min(len(out), limit)]
	lookups := 0
	for i := range out {
		if out[i].ClientTransferID == "" || lookups >= maxTransferLookups {
			continue
		}
		lookups++
		st, err := e.transferState(ctx, cred, "", out[i].ClientTransferID)
		if err != nil {
			if exgate.ErrorCode(err) == exgate.CodeNotFound {
				continue
			}
			return nil, err
		}
		out[i].ExchangeID = string(st.TransID)
	}
	return out, nil
}
