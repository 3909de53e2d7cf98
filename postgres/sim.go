package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// EnsureSimAccount opens the simulated exchange's paper account of a
// credential with the initial balances, once: when the account exists it
// changes nothing. Returns an error wrapping exgate.ErrNotFound when the
// credential does not exist.
func (s *Store) EnsureSimAccount(ctx context.Context, credentialID int64, initial []exgate.BalanceChange) error {
	start, err := exgate.SumBalanceChanges(initial)
	if err != nil {
		return fmt.Errorf("postgres: ensure sim account %d: %w", credentialID, err)
	}
	for _, c := range initial {
		if start[c.Asset].IsNegative() {
			return fmt.Errorf("postgres: ensure sim account %d: negative initial %s balance", credentialID, c.Asset)
		}
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO sim_accounts (credential_id, created_at)
			SELECT id, $1::bigint FROM credentials WHERE id = $2 ON CONFLICT DO NOTHING`,
			unixNano(s.now()), credentialID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var exists bool
			err := tx.QueryRow(ctx,
				`SELECT EXISTS (SELECT 1 FROM credentials WHERE id = $1)`, credentialID).Scan(&exists)
			if err == nil && !exists {
				err = fmt.Errorf("credential: %w", exgate.ErrNotFound)
			}
			return err // nil: the account exists already
		}
		for _, c := range initial {
			amount, ok := start[c.Asset]
			if !ok {
				continue // duplicate asset, written already
			}
			delete(start, c.Asset)
			if _, err := tx.Exec(ctx,
				`INSERT INTO sim_balances (credential_id, asset, amount) VALUES ($1, $2, $3)`,
				credentialID, c.Asset, amount.String()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: ensure sim account %d: %w", credentialID, err)
	}
	return nil
}

// SimBalances returns the paper balances of a credential by asset, zero
// balances included. Returns an error wrapping exgate.ErrNotFound when the
// account has not been opened by EnsureSimAccount.
func (s *Store) SimBalances(ctx context.Context, credentialID int64) (map[string]decimal.Decimal, error) {
	rows, err := s.pool.Query(ctx, `SELECT b.asset, b.amount
		FROM sim_accounts a LEFT JOIN sim_balances b ON b.credential_id = a.credential_id
		WHERE a.credential_id = $1`, credentialID)
	if err != nil {
		return nil, fmt.Errorf("postgres: sim balances %d: %w", credentialID, err)
	}
	defer rows.Close()
	var out map[string]decimal.Decimal
	for rows.Next() {
		if out == nil {
			out = map[string]decimal.Decimal{}
		}
		var asset, amount *string
		if err := rows.Scan(&asset, &amount); err != nil {
			return nil, fmt.Errorf("postgres: sim balances %d: %w", credentialID, err)
		}
		if asset == nil || amount == nil {
			continue // an account without balances
		}
		d, err := decimal.NewFromString(*amount)
		if err != nil {
			return nil, fmt.Errorf("postgres: sim balances %d: %s: %w", credentialID, *asset, err)
		}
		out[*asset] = d
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: sim balances %d: %w", credentialID, err)
	}
	if out == nil {
		return nil, fmt.Errorf("postgres: sim balances %d: %w", credentialID, exgate.ErrNotFound)
	}
	return out, nil
}

// ApplySimOperation records op and applies all its balance changes in one
// transaction. Nothing changes when it fails: with an error wrapping
// exgate.ErrConflict when the credential already has an operation with
// op.ID, exgate.ErrInsufficientFunds when a balance would end negative, or
// exgate.ErrNotFound when the account has not been opened. A zero
// op.CreatedAt is set to now.
func (s *Store) ApplySimOperation(ctx context.Context, credentialID int64, op exgate.SimOperation) error {
	if op.ID == "" {
		return errors.New("postgres: apply sim operation: empty id")
	}
	delta, err := exgate.SumBalanceChanges(op.Changes)
	if err != nil {
		return fmt.Errorf("postgres: apply sim operation %s: %w", op.ID, err)
	}
	changes, err := json.Marshal(op.Changes)
	if err != nil {
		return fmt.Errorf("postgres: apply sim operation %s: %w", op.ID, err)
	}
	if op.CreatedAt.IsZero() {
		op.CreatedAt = s.now()
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// Locking the account row makes concurrent operations on one
		// account, from any instance, run one after the other.
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM sim_accounts WHERE credential_id = $1 FOR UPDATE`,
			credentialID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("sim account: %w", exgate.ErrNotFound)
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO sim_operations (credential_id, id, kind, changes, record, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			credentialID, op.ID, string(op.Kind), string(changes), nilIfEmpty(op.Record), unixNano(op.CreatedAt))
		if err != nil {
			return err
		}
		if err := conflictUnlessOne(tag); err != nil {
			return err
		}
		for _, c := range op.Changes {
			d, ok := delta[c.Asset]
			if !ok {
				continue // duplicate asset, applied already
			}
			delete(delta, c.Asset)
			var text string
			err := tx.QueryRow(ctx, `SELECT amount FROM sim_balances WHERE credential_id = $1 AND asset = $2`,
				credentialID, c.Asset).Scan(&text)
			balance := decimal.Zero
			switch {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				return err
			default:
				if balance, err = decimal.NewFromString(text); err != nil {
					return fmt.Errorf("stored %s balance: %w", c.Asset, err)
				}
			}
			next := balance.Add(d)
			if next.IsNegative() {
				return fmt.Errorf("%s balance %s cannot move by %s: %w", c.Asset, balance, d, exgate.ErrInsufficientFunds)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO sim_balances (credential_id, asset, amount) VALUES ($1, $2, $3)
				ON CONFLICT (credential_id, asset) DO UPDATE SET amount = EXCLUDED.amount`,
				credentialID, c.Asset, next.String()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: apply sim operation %s: %w", op.ID, err)
	}
	return nil
}

// SimOperation returns an operation applied by ApplySimOperation. Returns
// an error wrapping exgate.ErrNotFound when there is none.
func (s *Store) SimOperation(ctx context.Context, credentialID int64, id string) (exgate.SimOperation, error) {
	var (
		op            = exgate.SimOperation{ID: id}
		kind, changes string
		created       int64
	)
	err := s.pool.QueryRow(ctx, `SELECT kind, changes, record, created_at FROM sim_operations
		WHERE credential_id = $1 AND id = $2`, credentialID, id).Scan(&kind, &changes, &op.Record, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		err = exgate.ErrNotFound
	}
	if err != nil {
		return exgate.SimOperation{}, fmt.Errorf("postgres: sim operation %s: %w", id, err)
	}
	op.Kind = exgate.IntentKind(kind)
	if err := json.Unmarshal([]byte(changes), &op.Changes); err != nil {
		return exgate.SimOperation{}, fmt.Errorf("postgres: sim operation %s: stored changes: %w", id, err)
	}
	if len(op.Changes) == 0 {
		op.Changes = nil
	}
	op.Record = nilIfEmpty(op.Record)
	op.CreatedAt = fromUnixNano(created)
	return op, nil
}
