package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Balances are stored as exact decimal text, never as floating point.

// EnsureSimAccount implements exgate.Store.
func (s *Store) EnsureSimAccount(ctx context.Context, credentialID int64, initial []exgate.BalanceChange) error {
	what := fmt.Sprintf("ensure sim account %d", credentialID)
	start, err := exgate.SumBalanceChanges(initial)
	if err != nil {
		return s.fail(what, err)
	}
	for k, amount := range start {
		if amount.IsNegative() {
			return s.fail(what, fmt.Errorf("negative initial %s %s balance", k.Wallet, k.Asset))
		}
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		err := execOne(ctx, tx, exgate.ErrConflict, `INSERT INTO sim_accounts (credential_id, created_at)
			SELECT id, CAST($1 AS BIGINT) FROM credentials WHERE id = $2 ON CONFLICT DO NOTHING`,
			unixNano(s.now()), credentialID)
		if errors.Is(err, exgate.ErrConflict) {
			// No row: the account exists already, or the credential does not.
			var exists bool
			err := tx.QueryRowContext(ctx,
				`SELECT EXISTS (SELECT 1 FROM credentials WHERE id = $1)`, credentialID).Scan(&exists)
			if err == nil && !exists {
				err = fmt.Errorf("credential: %w", exgate.ErrNotFound)
			}
			return err // nil: the account exists already
		}
		if err != nil {
			return err
		}
		for _, c := range initial {
			k := exgate.WalletAsset{Wallet: cmp.Or(c.Wallet, exgate.WalletSpot), Asset: c.Asset}
			amount, ok := start[k]
			if !ok {
				continue // duplicate asset, written already
			}
			delete(start, k)
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO sim_balances (credential_id, wallet, asset, amount) VALUES ($1, $2, $3, $4)`,
				credentialID, string(k.Wallet), k.Asset, amount.String()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.fail(what, err)
	}
	return nil
}

// SimBalances implements exgate.Store.
func (s *Store) SimBalances(ctx context.Context, credentialID int64) (map[string]decimal.Decimal, error) {
	return s.SimWalletBalances(ctx, credentialID, exgate.WalletSpot)
}

// SimWalletBalances implements exgate.Store.
func (s *Store) SimWalletBalances(ctx context.Context, credentialID int64, wallet exgate.WalletKind) (map[string]decimal.Decimal, error) {
	what := fmt.Sprintf("sim %s balances %d", wallet, credentialID)
	rows, err := s.read.QueryContext(ctx, `SELECT b.asset, b.amount
		FROM sim_accounts a LEFT JOIN sim_balances b ON b.credential_id = a.credential_id AND b.wallet = $2
		WHERE a.credential_id = $1`, credentialID, string(wallet))
	if err != nil {
		return nil, s.fail(what, err)
	}
	// An account without balances is one row of NULLs; no account, no row.
	type balance struct {
		asset, amount *string
	}
	found, err := collect(rows, func(rows *sql.Rows) (b balance, err error) {
		return b, rows.Scan(&b.asset, &b.amount)
	})
	if err != nil {
		return nil, s.fail(what, err)
	}
	if len(found) == 0 {
		return nil, s.fail(what, exgate.ErrNotFound)
	}
	out := make(map[string]decimal.Decimal, len(found))
	for _, b := range found {
		if b.asset == nil || b.amount == nil {
			continue
		}
		d, err := decimal.NewFromString(*b.amount)
		if err != nil {
			return nil, s.fail(what, fmt.Errorf("%s: %w", *b.asset, err))
		}
		out[*b.asset] = d
	}
	return out, nil
}

// ApplySimOperation implements exgate.Store. It reads the account's row
// locking it (Dialect.LockRow), so that concurrent operations on one
// account, from any instance, run one after the other.
func (s *Store) ApplySimOperation(ctx context.Context, credentialID int64, op exgate.SimOperation) error {
	if op.ID == "" {
		return s.fail("apply sim operation", errors.New("empty id"))
	}
	what := "apply sim operation " + op.ID
	delta, err := exgate.SumBalanceChanges(op.Changes)
	if err != nil {
		return s.fail(what, err)
	}
	changes, err := json.Marshal(op.Changes)
	if err != nil {
		return s.fail(what, err)
	}
	if op.CreatedAt.IsZero() {
		op.CreatedAt = s.now()
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM sim_accounts WHERE credential_id = $1`+s.d.LockRow,
			credentialID).Scan(&one)
		if err != nil {
			return fmt.Errorf("sim account: %w", noRow(err))
		}
		if err := execOne(ctx, tx, exgate.ErrConflict, `INSERT INTO sim_operations
			(credential_id, id, kind, changes, record, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			credentialID, op.ID, string(op.Kind), string(changes), nilIfEmpty(op.Record), unixNano(op.CreatedAt),
		); err != nil {
			return err
		}
		if err := s.openOrClose(ctx, tx, credentialID, op); err != nil {
			return err
		}
		for _, c := range op.Changes {
			k := exgate.WalletAsset{Wallet: cmp.Or(c.Wallet, exgate.WalletSpot), Asset: c.Asset}
			d, ok := delta[k]
			if !ok {
				continue // duplicate asset, applied already
			}
			delete(delta, k)
			if err := moveBalance(ctx, tx, credentialID, k, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.fail(what, err)
	}
	return nil
}

// moveBalance adds d to a balance in tx, refusing to make it negative.
func moveBalance(ctx context.Context, tx *sql.Tx, credentialID int64, k exgate.WalletAsset, d decimal.Decimal) error {
	asset := k.Asset
	var text string
	err := tx.QueryRowContext(ctx, `SELECT amount FROM sim_balances WHERE credential_id = $1 AND wallet = $2 AND asset = $3`,
		credentialID, string(k.Wallet), asset).Scan(&text)
	balance := decimal.Zero
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		if balance, err = decimal.NewFromString(text); err != nil {
			return fmt.Errorf("stored %s balance: %w", asset, err)
		}
	}
	next := balance.Add(d)
	if next.IsNegative() {
		return fmt.Errorf("%s %s balance %s cannot move by %s: %w", k.Wallet, asset, balance, d, exgate.ErrInsufficientFunds)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sim_balances (credential_id, wallet, asset, amount) VALUES ($1, $2, $3, $4)
		ON CONFLICT (credential_id, wallet, asset) DO UPDATE SET amount = excluded.amount`,
		credentialID, string(k.Wallet), asset, next.String())
	return err
}

// SimOperation implements exgate.Store.
func (s *Store) SimOperation(ctx context.Context, credentialID int64, id string) (exgate.SimOperation, error) {
	var (
		op            = exgate.SimOperation{ID: id}
		kind, changes string
		created       int64
	)
	err := s.read.QueryRowContext(ctx, `SELECT kind, changes, record, created_at FROM sim_operations
		WHERE credential_id = $1 AND id = $2`, credentialID, id).Scan(&kind, &changes, &op.Record, &created)
	if err != nil {
		return exgate.SimOperation{}, s.fail("sim operation "+id, noRow(err))
	}
	op.Kind = exgate.IntentKind(kind)
	if err := json.Unmarshal([]byte(changes), &op.Changes); err != nil {
		return exgate.SimOperation{}, s.fail("sim operation "+id+": stored changes", err)
	}
	if len(op.Changes) == 0 {
		op.Changes = nil
	}
	op.Record = nilIfEmpty(op.Record)
	op.CreatedAt = fromUnixNano(created)
	return op, nil
}
