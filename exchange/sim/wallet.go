package sim

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// The simulated deposit history: one deposit every depositPeriod, at a
// hash-chosen moment of the first half of its slot (slots are shifted per
// credential), kept for depositWindow. A deposit is pending (CONFIRMING)
// until it is pendingAge old, then credited, or failed one time in
// failedOneIn. So every account always has pending and completed entries,
// and a pending deposit completes as the clock moves on. The history is
// for display: it does not move the paper balances.
const (
	depositPeriod = 90 * time.Minute
	depositWindow = 14 * 24 * time.Hour
	pendingAge    = 3 * time.Hour
	failedOneIn   = 40
)

// Balances returns the paper balances of the credential, opening the
// account with the starting balances on first use.
func (e *Exchange) Balances(ctx context.Context, cred exgate.Credential) ([]exgate.Balance, error) {
	var bals map[string]decimal.Decimal
	err := e.withAccount(ctx, cred, func() error {
		var err error
		bals, err = e.ledger.SimBalances(ctx, cred.ID)
		return err
	})
	if err != nil {
		if _, ok := errors.AsType[*exgate.Error](err); ok {
			return nil, err
		}
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the balances", Err: err}
	}
	locked, err := e.locked(ctx, cred)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the open orders", Err: err}
	}
	out := make([]exgate.Balance, 0, len(bals))
	for asset, amount := range bals {
		if amount.IsZero() && !locked[asset].IsPositive() {
			continue
		}
		out = append(out, exgate.Balance{Asset: asset, Available: amount, Locked: locked[asset]})
	}
	slices.SortFunc(out, func(a, b exgate.Balance) int { return strings.Compare(a.Asset, b.Asset) })
	return out, nil
}

// addressSeed is the 32-byte seed of a credential's address on a network.
func (e *Exchange) addressSeed(cred exgate.Credential, asset, network string) [32]byte {
	return sha256.Sum256(fmt.Appendf(nil, "sim/address/%d/%d/%s/%s", e.seed, cred.ID, asset, network))
}

// depositAddress is the credential's address for asset on n.
func (e *Exchange) depositAddress(cred exgate.Credential, asset string, n *network) exgate.DepositAddress {
	seed := e.addressSeed(cred, asset, n.Code)
	a := exgate.DepositAddress{Asset: asset, Network: n.Code, Address: newAddress(n.Format, seed)}
	if n.Format == formatRipple {
		tag := newTag(hash(e.seed, uint64(cred.ID), hashString("tag/"+asset+"/"+n.Code)))
		a.Tag = &tag
	}
	return a
}

// DepositAddress returns the credential's address for the asset on the
// network: the same on every call, in the network's format, with a
// destination tag on XRP.
func (e *Exchange) DepositAddress(ctx context.Context, cred exgate.Credential, req exgate.DepositAddressRequest) (exgate.DepositAddress, error) {
	_, n, err := e.network(req.Asset, req.Network)
	if err != nil {
		return exgate.DepositAddress{}, err
	}
	return e.depositAddress(cred, req.Asset, n), nil
}

// txID writes a transaction id in the style of the network.
func txID(f addressFormat, parts ...string) string {
	sum := sha512.Sum512([]byte(strings.Join(parts, "/")))
	switch f {
	case formatEthereum:
		return "0x" + hex.EncodeToString(sum[:32])
	case formatSolana:
		return base58Encode(bitcoinAlphabet, sum[:])
	case formatRipple:
		return strings.ToUpper(hex.EncodeToString(sum[:32]))
	}
	return hex.EncodeToString(sum[:32])
}

// RecentDeposits returns the credential's simulated deposits of the last
// 14 days, newest first, filtered by asset and status.
func (e *Exchange) RecentDeposits(ctx context.Context, cred exgate.Credential, f exgate.DepositFilter) ([]exgate.Deposit, error) {
	now := e.now()
	nowSec := floorDiv(now.UnixMilli(), 1000)
	period := int64(depositPeriod / time.Second)
	offset := int64(hash(e.seed, uint64(cred.ID), hashString("deposits")) % uint64(period))
	var weights int
	for _, a := range assetTable {
		weights += a.DepositWeight
	}
	var out []exgate.Deposit
	addresses := map[*network]exgate.DepositAddress{}
	oldest := nowSec - int64(depositWindow/time.Second)
	for j := floorDiv(nowSec-offset, period); offset+j*period >= oldest; j-- {
		h := hash(e.seed, uint64(cred.ID), hashString("deposit"), uint64(j))
		at := offset + j*period + int64(mix(h)%uint64(period/2))
		if at > nowSec || at < oldest {
			continue
		}
		pick := int(mix(h+1) % uint64(weights))
		var a *asset
		for i := range assetTable {
			if pick < assetTable[i].DepositWeight {
				a = &assetTable[i]
				break
			}
			pick -= assetTable[i].DepositWeight
		}
		n := &a.Networks[mix(h+2)%uint64(len(a.Networks))]
		raw := rawCredited
		switch {
		case nowSec-at < int64(pendingAge/time.Second):
			raw = rawConfirming
		case mix(h+3)%failedOneIn == 0:
			raw = rawFailed
		}
		status := transferStatus[raw]
		if (f.Asset != "" && f.Asset != a.Code) || (f.Status != "" && f.Status != status) {
			continue
		}
		addr, ok := addresses[n]
		if !ok {
			addr = e.depositAddress(cred, a.Code, n)
			addresses[n] = addr
		}
		amount := a.DepositMin + int64(mix(h+4)%uint64(a.DepositMax-a.DepositMin+1))
		id := strconv.FormatUint(h>>1, 10)
		d := exgate.Deposit{
			ID:        id,
			Amount:    exgate.NewNumber(decimal.New(amount, -a.Precision)),
			Asset:     a.Code,
			Status:    status,
			Address:   addr.Address,
			Network:   n.Code,
			TxID:      txID(n.Format, "deposit", strconv.FormatUint(e.seed, 10), strconv.FormatInt(cred.ID, 10), id),
			Timestamp: min(at*1000+int64(mix(h+5)%1000), now.UnixMilli()),
			RawStatus: raw,
		}
		if addr.Tag != nil {
			d.Tag = *addr.Tag
		}
		out = append(out, d)
	}
	if out == nil {
		out = []exgate.Deposit{}
	}
	return out, nil
}

// CheckWithdrawal refuses a withdrawal whose parameters are malformed: an
// unknown asset or network, an address not of the network's format, a
// missing or needless tag, an amount that is not positive or has too many
// decimals (exgate.WithdrawalChecker). The journal asks before it records
// the withdrawal; Withdraw checks the same.
func (e *Exchange) CheckWithdrawal(_ context.Context, _ exgate.Credential, req exgate.WithdrawalRequest) error {
	_, _, err := e.checkWithdrawal(req)
	return err
}

func (e *Exchange) checkWithdrawal(req exgate.WithdrawalRequest) (*asset, *network, error) {
	a, n, err := e.network(req.Asset, req.Network)
	if err != nil {
		return a, n, err
	}
	if err := validAddress(n.Format, req.Address); err != nil {
		return a, n, exgate.ParamError("address", "%q is not a %s address on the %s network: %v", req.Address, req.Asset, n.Code, err)
	}
	switch {
	case n.Format == formatRipple && req.Tag == "":
		return a, n, exgate.ParamError("tag", "withdrawals on the %s network need a destination tag", n.Code)
	case n.Format == formatRipple:
		if err := validTag(req.Tag); err != nil {
			return a, n, exgate.ParamError("tag", "destination tag %q: %v", req.Tag, err)
		}
	case req.Tag != "":
		return a, n, exgate.ParamError("tag", "the %s network has no tag or memo", n.Code)
	}
	switch {
	case !req.Amount.IsPositive():
		return a, n, exgate.ParamError("amount", "amount must be positive, not %s", req.Amount)
	case !req.Amount.Equal(req.Amount.RoundDown(a.Precision)):
		return a, n, exgate.ParamError("amount", "%s amounts have at most %d decimals, not %s", a.Code, a.Precision, req.Amount)
	}
	return a, n, nil
}

// Withdraw checks the address and tag for the network, then debits amount
// plus the network's fee atomically. The withdrawal completes at once.
func (e *Exchange) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
	a, n, err := e.checkWithdrawal(req)
	if err != nil {
		return exgate.Withdrawal{}, err
	}
	minimum := decimal.RequireFromString(n.MinWithdrawal)
	switch {
	case req.ClientWithdrawalID == "":
		return exgate.Withdrawal{}, exgate.ParamError("clientWithdrawalId", "sim needs a client withdrawal id")
	case req.Amount.LessThan(minimum):
		return exgate.Withdrawal{}, exgate.Errorf(exgate.CodeWithdrawalRejected,
			"the minimum withdrawal of %s on the %s network is %s, not %s", a.Code, n.Code, minimum, req.Amount)
	}
	now := e.now()
	fee := decimal.RequireFromString(n.Fee)
	total := req.Amount.Add(fee)
	w := exgate.Withdrawal{
		ID:                 req.ClientWithdrawalID,
		Amount:             exgate.NewNumber(req.Amount),
		Fees:               exgate.NumberPtr(fee),
		TotalAmount:        exgate.NewNumber(total),
		Asset:              a.Code,
		Status:             transferStatus[rawCompleted],
		ToAddress:          req.Address,
		TxID:               txID(n.Format, "withdrawal", strconv.FormatUint(e.seed, 10), strconv.FormatInt(cred.ID, 10), req.ClientWithdrawalID),
		Timestamp:          now.UnixMilli(),
		Network:            n.Code,
		Tag:                req.Tag,
		Exchange:           Name,
		ClientWithdrawalID: req.ClientWithdrawalID,
		ExchangeID:         e.exchangeID(cred, req.ClientWithdrawalID),
		RawStatus:          rawCompleted,
	}
	record, err := json.Marshal(w)
	if err != nil {
		return exgate.Withdrawal{}, fmt.Errorf("sim: encode withdrawal %s: %w", req.ClientWithdrawalID, err)
	}
	op := exgate.SimOperation{
		ID:        req.ClientWithdrawalID,
		Kind:      exgate.IntentWithdrawal,
		Changes:   []exgate.BalanceChange{{Asset: a.Code, Delta: total.Neg()}},
		Record:    record,
		CreatedAt: now,
	}
	err = e.withAccount(ctx, cred, func() error {
		if err := e.checkFunds(ctx, cred, a.Code, total, fmt.Sprintf("the withdrawal (amount %s + fee %s)", req.Amount, fee)); err != nil {
			return err
		}
		return e.ledger.ApplySimOperation(ctx, cred.ID, op)
	})
	if err != nil {
		return exgate.Withdrawal{}, e.applyError("withdrawal", req.ClientWithdrawalID, err)
	}
	return w, nil
}

// QueryWithdrawal reads a withdrawal back by its client withdrawal id.
func (e *Exchange) QueryWithdrawal(ctx context.Context, cred exgate.Credential, q exgate.WithdrawalQuery) (exgate.Withdrawal, error) {
	var w exgate.Withdrawal
	if err := e.readRecord(ctx, cred, q.ClientWithdrawalID, exgate.IntentWithdrawal, &w); err != nil {
		return exgate.Withdrawal{}, err
	}
	if (q.Asset != "" && q.Asset != w.Asset) || (q.ExchangeID != "" && q.ExchangeID != w.ExchangeID) {
		return exgate.Withdrawal{}, fmt.Errorf("sim: withdrawal %s of %s: %w", q.ClientWithdrawalID, q.Asset, exgate.ErrNotFound)
	}
	return w, nil
}
