package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// The simulated exchange keeps two wallets per credential, spot and
// funding (docs/contract.md 2.10); a new account holds everything in spot.
// Orders and withdrawals use spot. A transfer moves an amount from one to
// the other atomically in the ledger and completes at once.

var _ exgate.WalletTransfers = (*Exchange)(nil)

// WalletBalances returns the balances of one wallet; spot answers as
// Balances does (with what open orders hold as locked), funding holds
// nothing locked.
func (e *Exchange) WalletBalances(ctx context.Context, cred exgate.Credential, wallet exgate.WalletKind) ([]exgate.Balance, error) {
	switch wallet {
	case exgate.WalletSpot:
		return e.Balances(ctx, cred)
	case exgate.WalletFunding:
	default:
		return nil, exgate.ParamError("wallet", "wallet must be spot or funding, not %q", wallet)
	}
	var bals map[string]decimal.Decimal
	err := e.withAccount(ctx, cred, func() error {
		var err error
		bals, err = e.ledger.SimWalletBalances(ctx, cred.ID, wallet)
		return err
	})
	if err != nil {
		if _, ok := errors.AsType[*exgate.Error](err); ok {
			return nil, err
		}
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the balances", Err: err}
	}
	out := make([]exgate.Balance, 0, len(bals))
	for asset, amount := range bals {
		if amount.IsZero() {
			continue
		}
		out = append(out, exgate.Balance{Asset: asset, Available: amount})
	}
	slices.SortFunc(out, func(a, b exgate.Balance) int { return strings.Compare(a.Asset, b.Asset) })
	return out, nil
}

var _ exgate.TransferChecker = (*Exchange)(nil)

// CheckTransferRequest refuses, without touching the ledger, a transfer
// Transfer would refuse for its input: exgate.CheckTransfer's rules, an
// asset sim does not list, an amount finer than the asset's precision.
func (e *Exchange) CheckTransferRequest(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest) error {
	if err := exgate.CheckTransfer(req); err != nil {
		return err
	}
	a, ok := e.assets[req.Asset]
	switch {
	case !ok:
		return exgate.ParamError("asset", "%s is not an asset of sim (%s)", req.Asset, e.assetList())
	case !req.Amount.Equal(req.Amount.RoundDown(a.Precision)):
		return exgate.ParamError("amount", "%s amounts have at most %d decimals, not %s", a.Code, a.Precision, req.Amount)
	}
	return nil
}

// Transfer moves req.Amount of req.Asset from req.From to req.To, under
// req.ClientTransferID: INVALID_PARAMETER for an unknown asset or an
// amount finer than the asset's precision, INSUFFICIENT_FUNDS (naming
// amount) when the wallet holds less, TRANSFER_REJECTED when the id was
// used already.
func (e *Exchange) Transfer(ctx context.Context, cred exgate.Credential, req exgate.TransferRequest) (exgate.Transfer, error) {
	if err := e.CheckTransferRequest(ctx, cred, req); err != nil {
		return exgate.Transfer{}, err
	}
	a := e.assets[req.Asset]
	if req.ClientTransferID == "" {
		return exgate.Transfer{}, exgate.ParamError("clientTransferId", "sim needs a client transfer id")
	}
	now := e.now()
	t := exgate.Transfer{
		ID:               req.ClientTransferID,
		ClientTransferID: req.ClientTransferID,
		Asset:            a.Code,
		Amount:           exgate.NewNumber(req.Amount),
		From:             req.From,
		To:               req.To,
		Status:           exgate.TransferCompleted,
		Timestamp:        now.UnixMilli(),
		Exchange:         Name,
		ExchangeID:       e.exchangeID(cred, req.ClientTransferID),
	}
	record, err := json.Marshal(t)
	if err != nil {
		return exgate.Transfer{}, fmt.Errorf("sim: encode transfer %s: %w", req.ClientTransferID, err)
	}
	op := exgate.SimOperation{
		ID:   req.ClientTransferID,
		Kind: exgate.IntentTransfer,
		Changes: []exgate.BalanceChange{
			{Asset: a.Code, Delta: req.Amount.Neg(), Wallet: req.From},
			{Asset: a.Code, Delta: req.Amount, Wallet: req.To},
		},
		Record:    record,
		CreatedAt: now,
	}
	err = e.withAccount(ctx, cred, func() error {
		bals, err := e.ledger.SimWalletBalances(ctx, cred.ID, req.From)
		if err != nil {
			return err
		}
		if have := bals[a.Code]; have.LessThan(req.Amount) {
			return &exgate.Error{Code: exgate.CodeInsufficientFunds, Param: "amount",
				Detail: fmt.Sprintf("the %s wallet holds %s %s available, less than the %s to transfer", req.From, have, a.Code, req.Amount)}
		}
		return e.ledger.ApplySimOperation(ctx, cred.ID, op)
	})
	if err != nil {
		if errors.Is(err, exgate.ErrInsufficientFunds) {
			// An order took the funds between the check and the move.
			return exgate.Transfer{}, &exgate.Error{Code: exgate.CodeInsufficientFunds, Param: "amount",
				Detail: fmt.Sprintf("the %s wallet holds less %s than the %s to transfer", req.From, a.Code, req.Amount), Err: err}
		}
		return exgate.Transfer{}, e.applyError("transfer", req.ClientTransferID, err)
	}
	return t, nil
}

// QueryTransfer reads a transfer back by its client transfer id.
func (e *Exchange) QueryTransfer(ctx context.Context, cred exgate.Credential, q exgate.TransferQuery) (exgate.Transfer, error) {
	var t exgate.Transfer
	if err := e.readRecord(ctx, cred, q.ClientTransferID, exgate.IntentTransfer, &t); err != nil {
		return exgate.Transfer{}, err
	}
	if (q.Asset != "" && q.Asset != t.Asset) || (q.ExchangeID != "" && q.ExchangeID != t.ExchangeID) {
		return exgate.Transfer{}, fmt.Errorf("sim: transfer %s of %s: %w", q.ClientTransferID, q.Asset, exgate.ErrNotFound)
	}
	return t, nil
}

// RecentTransfers returns the transfers made on the sim, newest first.
func (e *Exchange) RecentTransfers(ctx context.Context, cred exgate.Credential, f exgate.TransferFilter) ([]exgate.Transfer, error) {
	ops, err := e.ledger.SimOperations(ctx, cred.ID, exgate.IntentTransfer, 0)
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeError, Detail: "sim could not read the transfers", Err: err}
	}
	out := []exgate.Transfer{}
	for _, op := range ops {
		var t exgate.Transfer
		if err := json.Unmarshal(op.Record, &t); err != nil {
			return nil, fmt.Errorf("sim: transfer %s: %w", op.ID, err)
		}
		if f.Asset != "" && t.Asset != f.Asset {
			continue
		}
		out = append(out, t)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, nil
}
