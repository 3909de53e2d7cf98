package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/exgate/exgate"
)

// openOrClose lists op as open or closes the operation it names, in the
// transaction that applies it.
func (s *Store) openOrClose(ctx context.Context, tx *sql.Tx, credentialID int64, op exgate.SimOperation) error {
	if op.Closes != "" {
		err := execOne(ctx, tx, exgate.ErrConflict,
			`DELETE FROM sim_open_operations WHERE credential_id = $1 AND id = $2`, credentialID, op.Closes)
		if err != nil {
			return fmt.Errorf("close %s: %w", op.Closes, err)
		}
	}
	if op.Open {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sim_open_operations (credential_id, id, created_at)
			VALUES ($1, $2, $3)`, credentialID, op.ID, unixNano(op.CreatedAt)); err != nil {
			return err
		}
	}
	return nil
}

// simOperationColumns are the columns scanSimOperation reads, of the
// sim_operations table aliased o.
const simOperationColumns = `o.id, o.kind, o.changes, o.record, o.created_at`

func scanSimOperation(rows *sql.Rows) (exgate.SimOperation, error) {
	var (
		op            exgate.SimOperation
		kind, changes string
		created       int64
	)
	if err := rows.Scan(&op.ID, &kind, &changes, &op.Record, &created); err != nil {
		return op, err
	}
	op.Kind = exgate.IntentKind(kind)
	if err := json.Unmarshal([]byte(changes), &op.Changes); err != nil {
		return op, fmt.Errorf("operation %s: stored changes: %w", op.ID, err)
	}
	if len(op.Changes) == 0 {
		op.Changes = nil
	}
	op.Record = nilIfEmpty(op.Record)
	op.CreatedAt = fromUnixNano(created)
	return op, nil
}

// SimOperations implements exgate.Store.
func (s *Store) SimOperations(ctx context.Context, credentialID int64, kind exgate.IntentKind, limit int) ([]exgate.SimOperation, error) {
	what := fmt.Sprintf("sim operations %d %s", credentialID, kind)
	rows, err := s.read.QueryContext(ctx, `SELECT `+simOperationColumns+` FROM sim_operations o
		WHERE o.credential_id = $1 AND o.kind = $2
		ORDER BY o.created_at DESC, o.id DESC`+limitClause(limit), credentialID, string(kind))
	if err != nil {
		return nil, s.fail(what, err)
	}
	out, err := collect(rows, scanSimOperation)
	if err != nil {
		return nil, s.fail(what, err)
	}
	return out, nil
}

// SimOpenOperations implements exgate.Store.
func (s *Store) SimOpenOperations(ctx context.Context, credentialID int64) ([]exgate.SimOperation, error) {
	what := fmt.Sprintf("sim open operations %d", credentialID)
	rows, err := s.read.QueryContext(ctx, `SELECT `+simOperationColumns+`
		FROM sim_open_operations p JOIN sim_operations o ON o.credential_id = p.credential_id AND o.id = p.id
		WHERE p.credential_id = $1
		ORDER BY o.created_at DESC, o.id DESC`, credentialID)
	if err != nil {
		return nil, s.fail(what, err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.SimOperation, error) {
		op, err := scanSimOperation(rows)
		op.Open = true
		return op, err
	})
	if err != nil {
		return nil, s.fail(what, err)
	}
	return out, nil
}

// PaperCredentialsResting implements exgate.Store: the paper keys of an
// exchange that have a resting order, for the paper exchange's watcher.
// Their secrets are not read: a paper key has none.
func (s *Store) PaperCredentialsResting(ctx context.Context, exchange string) ([]exgate.Credential, error) {
	what := "paper keys with resting orders on " + exchange
	rows, err := s.read.QueryContext(ctx, `SELECT c.id, c.client_api_key, c.name, c.paper_balances
		FROM credentials c
		WHERE c.paper AND c.exchange = $1
		  AND EXISTS (SELECT 1 FROM sim_open_operations p WHERE p.credential_id = c.id)
		ORDER BY c.id`, exchange)
	if err != nil {
		return nil, s.fail(what, err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.Credential, error) {
		c := exgate.Credential{Exchange: exchange, Paper: true}
		var balances string
		if err := rows.Scan(&c.ID, &c.ClientAPIKey, &c.Name, &balances); err != nil {
			return c, err
		}
		var err error
		c.PaperBalances, err = exgate.ParsePaperBalances(balances)
		return c, err
	})
	if err != nil {
		return nil, s.fail(what, err)
	}
	return out, nil
}
