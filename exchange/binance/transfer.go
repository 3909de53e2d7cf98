package binance

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// Binance keeps an account's funds in a spot wallet (orders, and
// withdrawals by default) and a funding wallet (docs/contract.md 2.10);
// the user universal transfer moves funds between the two (MAIN_FUNDING,
// FUNDING_MAIN). It takes no client id, so a transfer whose answer was
// lost is found again in the transfer history by type, asset, amount and
// time: the journal never has two transfers of one asset and amount of an
// exchange key in flight at once, so that the match is the transfer sent.

var _ exgate.WalletTransfers = (*Exchange)(nil)

// transferLookback is how far before the gateway recorded a transfer its
// record is looked for in Binance's history: Binance refuses a request
// stamped more than a second ahead of its clock (rest-api.md, "Timing
// security"), so the adapter's estimate of Binance's clock is at most that
// far ahead, and the transfer cannot be stamped earlier than this.
const transferLookback = time.Second

// transferPageSize is the largest page of the transfer history.
// Source: developers.binance.com/docs/wallet/asset/query-user-universal-transfer
// ("size: default 10, max 100").
const transferPageSize = 100

// transferPages bounds the pages one history read takes (100 transfers
// each); the records the gateway looks for are minutes old.
const transferPages = 5

// WalletBalances returns the balances of one wallet: spot as Balances
// does, funding from POST /sapi/v1/asset/get-funding-asset (free is
// available; locked, freeze and withdrawing are locked).
func (e *Exchange) WalletBalances(ctx context.Context, cred exgate.Credential, wallet exgate.WalletKind) ([]exgate.Balance, error) {
	switch wallet {
	case exgate.WalletSpot:
		return e.Balances(ctx, cred)
	case exgate.WalletFunding:
		return rest.Fetch(ctx, e.c.do, request{ep: epFundingAssets, cred: &cred}, parseFundingAssets)
	}
	return nil, exgate.ParamError("wallet", "wallet must be spot or funding, not %q", wallet)
}

// parseFundingAssets reads the funding wallet answer, dropping zero
// balances, sorted by asset.
func parseFundingAssets(body []byte) ([]exgate.Balance, error) {
	var rows []struct {
		Asset       string       `json:"asset"`
		Free        rest.Decimal `json:"free"`
		Locked      rest.Decimal `json:"locked"`
		Freeze      rest.Decimal `json:"freeze"`
		Withdrawing rest.Decimal `json:"withdrawing"`
	}
	if err := json.Unmarshal(body, &rows); err != nil {
		return nil, fmt.Errorf("funding wallet answer: %w", err)
	}
	out := make([]exgate.Balance, 0, len(rows))
	for _, r := range rows {
		if r.Asset == "" || r.Free.IsNegative() || r.Locked.IsNegative() || r.Freeze.IsNegative() || r.Withdrawing.IsNegative() {
			return nil, fmt.Errorf("funding wallet answer: bad balance %q", r.Asset)
		}
		locked := r.Locked.Add(r.Freeze.Decimal).Add(r.Withdrawing.Decimal)
		if r.Free.IsZero() && locked.IsZero() {
			continue
		}
		out = append(out, exgate.Balance{Asset: exgate.NormalizeAsset(r.Asset), Available: r.Free.Decimal, Locked: locked})
	}
	slices.SortFunc(out, func(a, b exgate.Balance) int { return strings.Compare(a.Asset, b.Asset) })
	return out, nil
}

// transferType is Binance's type of a transfer between the two wallets.
func transferType(from, to exgate.WalletKind) (string, error) {
	if t, ok := transferTypes[[2]exgate.WalletKind{from, to}]; ok {
		return t, nil
	}
	return "", exgate.ParamError("to", "binance transfers between spot and funding, not from %q to %q", from, to)
}

// Transfer sends one POST /sapi/v1/asset/transfer (never retried) after
// checking the asset against Binance's coin list, and reads the transfer
// back from the history by the tranId it answers. Binance takes no client
// id: req.ClientTransferID is the record's id only.
func (e *Exchange) Transfer(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest) (exgate.Transfer, error) {
	if err := exgate.CheckTransfer(req); err != nil {
		return exgate.Transfer{}, err
	}
	typ, err := transferType(req.From, req.To)
	if err != nil {
		return exgate.Transfer{}, err
	}
	asset := exgate.NormalizeAsset(req.Asset)
	set, err := e.coins.get(ctx, cred)
	if err != nil {
		return exgate.Transfer{}, err
	}
	if _, ok := set.byCoin[asset]; !ok {
		return exgate.Transfer{}, exgate.ParamError("asset", "binance has no asset %s", asset)
	}
	if req.Amount.Exponent() < -8 && !req.Amount.Equal(req.Amount.Truncate(8)) {
		return exgate.Transfer{}, exgate.ParamError("amount", "binance transfers amounts of at most 8 decimals, not %s", req.Amount)
	}
	sent := e.c.serverNow()
	var p rest.Params
	p.Add("type", typ)
	p.Add("asset", asset)
	p.Add("amount", req.Amount.String())
	body, err := e.c.do(ctx, request{ep: epTransfer, params: p, cred: &cred})
	if err != nil {
		e.log.WarnContext(ctx, "binance transfer not submitted", "clientTransferId", req.ClientTransferID, "err", err)
		return exgate.Transfer{}, err
	}
	var answer struct {
		TranID json.RawMessage `json:"tranId"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return exgate.Transfer{}, badAnswer(epTransfer, err)
	}
	id, err := idString(answer.TranID)
	if err != nil {
		return exgate.Transfer{}, badAnswer(epTransfer, err)
	}
	e.log.InfoContext(ctx, "binance transfer submitted", "clientTransferId", req.ClientTransferID, "tranId", id)
	out := exgate.Transfer{
		ID: req.ClientTransferID, ClientTransferID: req.ClientTransferID, Asset: asset,
		Amount: exgate.NewNumber(req.Amount), From: req.From, To: req.To, Status: exgate.TransferPending,
		Timestamp: sent.UnixMilli(), Exchange: Name, ExchangeID: id,
	}
	rec, err := e.findTransfer(ctx, cred, typ, sent.Add(-transferLookback), func(t exgate.Transfer) bool { return t.ExchangeID == id })
	if err != nil {
		// Accepted; the record is not readable yet. The gateway reads
		// it again with QueryTransfer by its tranId.
		e.log.WarnContext(ctx, "binance transfer record not read back", "clientTransferId", req.ClientTransferID, "tranId", id, "err", err)
		return out, nil
	}
	rec.ID, rec.ClientTransferID = req.ClientTransferID, req.ClientTransferID
	return rec, nil
}

// QueryTransfer finds a transfer in GET /sapi/v1/asset/transfer: by its
// tranId when q.ExchangeID is known, else the latest transfer of q.Asset
// and q.Amount between q.From and q.To stamped no earlier than q.SentAfter
// (less transferLookback). None is an error wrapping exgate.ErrNotFound.
func (e *Exchange) QueryTransfer(ctx context.Context, cred exgate.Credential, q exgate.TransferQuery) (exgate.Transfer, error) {
	typ, err := transferType(q.From, q.To)
	if err != nil {
		return exgate.Transfer{}, err
	}
	var since time.Time
	if !q.SentAfter.IsZero() {
		since = q.SentAfter.Add(time.Duration(e.c.offset.Load()) * time.Millisecond).Add(-transferLookback)
	}
	asset := exgate.NormalizeAsset(q.Asset)
	match := func(t exgate.Transfer) bool {
		if q.ExchangeID != "" {
			return t.ExchangeID == q.ExchangeID
		}
		return t.Asset == asset && t.Amount.Equal(q.Amount)
	}
	t, err := e.findTransfer(ctx, cred, typ, since, match)
	if err != nil {
		return exgate.Transfer{}, err
	}
	if q.ClientTransferID != "" {
		t.ID, t.ClientTransferID = q.ClientTransferID, q.ClientTransferID
	}
	return t, nil
}

// findTransfer returns the latest transfer of type typ stamped at or
// after since (the last 7 days when since is zero) for which match is
// true, or an error wrapping exgate.ErrNotFound.
func (e *Exchange) findTransfer(ctx context.Context, cred exgate.Credential, typ string, since time.Time, match func(exgate.Transfer) bool) (exgate.Transfer, error) {
	ts, err := e.transferHistory(ctx, cred, typ, since)
	if err != nil {
		return exgate.Transfer{}, err
	}
	var found *exgate.Transfer
	for i := range ts {
		t := &ts[i]
		if (since.IsZero() || t.Timestamp >= since.UnixMilli()) && match(*t) && (found == nil || t.Timestamp > found.Timestamp) {
			found = t
		}
	}
	if found == nil {
		return exgate.Transfer{}, &exgate.Error{Code: exgate.CodeNotFound,
			Detail: fmt.Sprintf("binance has no such %s transfer in its history", typ), Err: exgate.ErrNotFound}
	}
	return *found, nil
}

// transferHistory reads the transfers of one type stamped at or after
// since (Binance's default, the last 7 days, when since is zero), up to
// transferPages pages.
func (e *Exchange) transferHistory(ctx context.Context, cred exgate.Credential, typ string, since time.Time) ([]exgate.Transfer, error) {
	var out []exgate.Transfer
	for page := 1; page <= transferPages; page++ {
		var p rest.Params
		p.Add("type", typ)
		if !since.IsZero() {
			p.Add("startTime", strconv.FormatInt(since.UnixMilli(), 10))
		}
		p.Add("current", strconv.Itoa(page))
		p.Add("size", strconv.Itoa(transferPageSize))
		h, err := rest.Fetch(ctx, e.c.do, request{ep: epTransferHist, params: p, cred: &cred}, parseTransfers)
		if err != nil {
			return nil, err
		}
		out = append(out, h.rows...)
		if len(h.rows) < transferPageSize || len(out) >= h.total {
			break
		}
	}
	return out, nil
}

// transferPage is one page of the transfer history.
type transferPage struct {
	total int
	rows  []exgate.Transfer
}

// parseTransfers reads a transfer history answer. Binance leaves rows
// out when there are none.
func parseTransfers(body []byte) (transferPage, error) {
	var h struct {
		Total int `json:"total"`
		Rows  []struct {
			Asset     string          `json:"asset"`
			Amount    rest.Decimal    `json:"amount"`
			Type      string          `json:"type"`
			Status    string          `json:"status"`
			TranID    json.RawMessage `json:"tranId"`
			Timestamp int64           `json:"timestamp"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return transferPage{}, fmt.Errorf("transfer history answer: %w", err)
	}
	out := transferPage{total: h.Total, rows: make([]exgate.Transfer, 0, len(h.Rows))}
	for _, r := range h.Rows {
		id, err := idString(r.TranID)
		if err != nil || r.Asset == "" || !r.Amount.Set || r.Amount.IsNegative() {
			return transferPage{}, fmt.Errorf("transfer history answer: bad record %q", rest.Truncate(r.TranID))
		}
		var from, to exgate.WalletKind
		for k, t := range transferTypes {
			if t == r.Type {
				from, to = k[0], k[1]
			}
		}
		if from == "" {
			return transferPage{}, fmt.Errorf("transfer history answer: type %q", rest.Truncate([]byte(r.Type)))
		}
		status, ok := transferStatuses[r.Status]
		if !ok {
			status = exgate.TransferPending
		}
		out.rows = append(out.rows, exgate.Transfer{
			ID: id, Asset: exgate.NormalizeAsset(r.Asset), Amount: exgate.NewNumber(r.Amount.Decimal),
			From: from, To: to, Status: status, Timestamp: r.Timestamp,
			Exchange: Name, ExchangeID: id,
		})
	}
	return out, nil
}

// RecentTransfers reads the history of both types (Binance's default
// window: the last 7 days), newest first. Binance keeps no client id, so
// each record's id is Binance's tranId.
func (e *Exchange) RecentTransfers(ctx context.Context, cred exgate.Credential, f exgate.TransferFilter) ([]exgate.Transfer, error) {
	var out []exgate.Transfer
	for _, typ := range []string{transferTypes[[2]exgate.WalletKind{exgate.WalletSpot, exgate.WalletFunding}], transferTypes[[2]exgate.WalletKind{exgate.WalletFunding, exgate.WalletSpot}]} {
		ts, err := e.transferHistory(ctx, cred, typ, time.Time{})
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if f.Asset == "" || t.Asset == exgate.NormalizeAsset(f.Asset) {
				out = append(out, t)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b exgate.Transfer) int {
		return cmp.Or(cmp.Compare(b.Timestamp, a.Timestamp), strings.Compare(b.ExchangeID, a.ExchangeID))
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	if out == nil {
		out = []exgate.Transfer{}
	}
	return out, nil
}
