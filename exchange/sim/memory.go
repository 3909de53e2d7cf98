package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// MemoryLedger is a Ledger kept in memory, for tests and for callers
// without a store. It follows the stores' contract exactly (see Ledger).
// It is safe for concurrent use.
type MemoryLedger struct {
	// Now stamps operations applied without a CreatedAt; nil means
	// time.Now.
	Now func() time.Time

	mu       sync.Mutex
	accounts map[int64]*memoryAccount
}

type memoryAccount struct {
	balances map[exgate.WalletAsset]decimal.Decimal
	ops      map[string]exgate.SimOperation
	// order lists the ids of ops as they were applied; open holds the
	// open ones.
	order []string
	open  map[string]bool
}

var _ Ledger = (*MemoryLedger)(nil)

// NewMemoryLedger returns an empty in-memory ledger.
func NewMemoryLedger() *MemoryLedger {
	return &MemoryLedger{accounts: map[int64]*memoryAccount{}}
}

// EnsureSimAccount opens the account with the initial balances, once: when
// it exists already nothing changes.
func (l *MemoryLedger) EnsureSimAccount(ctx context.Context, credentialID int64, initial []exgate.BalanceChange) error {
	start, err := exgate.SumBalanceChanges(initial)
	if err != nil {
		return fmt.Errorf("sim ledger: ensure account %d: %w", credentialID, err)
	}
	for k, amount := range start {
		if amount.IsNegative() {
			return fmt.Errorf("sim ledger: ensure account %d: negative initial %s %s balance", credentialID, k.Wallet, k.Asset)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.accounts[credentialID]; ok {
		return nil
	}
	l.accounts[credentialID] = &memoryAccount{balances: start, ops: map[string]exgate.SimOperation{}, open: map[string]bool{}}
	return nil
}

// SimBalances returns a copy of the account's spot balances. Returns an
// error wrapping exgate.ErrNotFound when the account is not open.
func (l *MemoryLedger) SimBalances(ctx context.Context, credentialID int64) (map[string]decimal.Decimal, error) {
	return l.SimWalletBalances(ctx, credentialID, exgate.WalletSpot)
}

// SimWalletBalances returns a copy of the account's balances in one
// wallet. Returns an error wrapping exgate.ErrNotFound when the account
// is not open.
func (l *MemoryLedger) SimWalletBalances(ctx context.Context, credentialID int64, wallet exgate.WalletKind) (map[string]decimal.Decimal, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	acct, ok := l.accounts[credentialID]
	if !ok {
		return nil, fmt.Errorf("sim ledger: balances of %d: %w", credentialID, exgate.ErrNotFound)
	}
	out := map[string]decimal.Decimal{}
	for k, amount := range acct.balances {
		if k.Wallet == wallet {
			out[k.Asset] = amount
		}
	}
	return out, nil
}

// ApplySimOperation records op and applies its changes, all or nothing:
// exgate.ErrNotFound when the account is not open, exgate.ErrConflict when
// op.ID is taken, exgate.ErrInsufficientFunds when a balance would go
// negative.
func (l *MemoryLedger) ApplySimOperation(ctx context.Context, credentialID int64, op exgate.SimOperation) error {
	if op.ID == "" {
		return errors.New("sim ledger: apply operation: empty id")
	}
	delta, err := exgate.SumBalanceChanges(op.Changes)
	if err != nil {
		return fmt.Errorf("sim ledger: apply operation %s: %w", op.ID, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	acct, ok := l.accounts[credentialID]
	if !ok {
		return fmt.Errorf("sim ledger: apply operation %s: account %d: %w", op.ID, credentialID, exgate.ErrNotFound)
	}
	if _, ok := acct.ops[op.ID]; ok {
		return fmt.Errorf("sim ledger: apply operation %s: %w", op.ID, exgate.ErrConflict)
	}
	if op.Closes != "" && !acct.open[op.Closes] {
		return fmt.Errorf("sim ledger: apply operation %s: %s is not open: %w", op.ID, op.Closes, exgate.ErrConflict)
	}
	next := make(map[exgate.WalletAsset]decimal.Decimal, len(delta))
	for k, d := range delta {
		n := acct.balances[k].Add(d)
		if n.IsNegative() {
			return fmt.Errorf("sim ledger: apply operation %s: %s %s balance %s cannot move by %s: %w",
				op.ID, k.Wallet, k.Asset, acct.balances[k], d, exgate.ErrInsufficientFunds)
		}
		next[k] = n
	}
	maps.Copy(acct.balances, next)
	if op.CreatedAt.IsZero() {
		now := time.Now
		if l.Now != nil {
			now = l.Now
		}
		op.CreatedAt = now()
	}
	if op.Closes != "" {
		delete(acct.open, op.Closes)
	}
	if op.Open {
		acct.open[op.ID] = true
	}
	op.Open, op.Closes = false, ""
	acct.ops[op.ID] = cloneOperation(op)
	acct.order = append(acct.order, op.ID)
	return nil
}

// SimOperations returns up to limit operations of a kind, newest first.
func (l *MemoryLedger) SimOperations(ctx context.Context, credentialID int64, kind exgate.IntentKind, limit int) ([]exgate.SimOperation, error) {
	return l.list(credentialID, limit, func(acct *memoryAccount, op exgate.SimOperation) bool { return op.Kind == kind })
}

// SimOpenOperations returns the open operations, newest first.
func (l *MemoryLedger) SimOpenOperations(ctx context.Context, credentialID int64) ([]exgate.SimOperation, error) {
	ops, err := l.list(credentialID, 0, func(acct *memoryAccount, op exgate.SimOperation) bool { return acct.open[op.ID] })
	for i := range ops {
		ops[i].Open = true
	}
	return ops, err
}

// list returns the account's operations that keep accepts, newest first
// by CreatedAt and then by id, as the stores order them.
func (l *MemoryLedger) list(credentialID int64, limit int, keep func(*memoryAccount, exgate.SimOperation) bool) ([]exgate.SimOperation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	acct, ok := l.accounts[credentialID]
	if !ok {
		return nil, nil
	}
	var out []exgate.SimOperation
	for _, id := range acct.order {
		if op := acct.ops[id]; keep(acct, op) {
			out = append(out, cloneOperation(op))
		}
	}
	slices.SortStableFunc(out, func(a, b exgate.SimOperation) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// SimOperation returns a copy of an applied operation. Returns an error
// wrapping exgate.ErrNotFound when there is none.
func (l *MemoryLedger) SimOperation(ctx context.Context, credentialID int64, id string) (exgate.SimOperation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if acct, ok := l.accounts[credentialID]; ok {
		if op, ok := acct.ops[id]; ok {
			return cloneOperation(op), nil
		}
	}
	return exgate.SimOperation{}, fmt.Errorf("sim ledger: operation %s of %d: %w", id, credentialID, exgate.ErrNotFound)
}

func cloneOperation(op exgate.SimOperation) exgate.SimOperation {
	op.Changes = slices.Clone(op.Changes)
	op.Record = slices.Clone(op.Record)
	return op
}
