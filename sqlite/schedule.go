package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/exgate/exgate"
)

// DueIntents returns up to limit unfinished intents whose NextDue is at or
// before now, the longest overdue first (then in the order they were
// recorded); limit <= 0 means no limit. An intent that can never progress
// is pushed back by ScheduleIntent and so cannot hide the others.
func (s *Store) DueIntents(ctx context.Context, now time.Time, limit int) ([]exgate.Intent, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+intentColumns+` FROM intents
		WHERE state <> 'final' AND next_due <= ? ORDER BY next_due, seq LIMIT ?`, unixNano(now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: due intents: %w", err)
	}
	defer rows.Close()
	var out []exgate.Intent
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: due intents: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: due intents: %w", err)
	}
	return out, nil
}

// ScheduleIntent sets when the reconciler next looks at an intent and how
// many times it has looked, leaving the rest (UpdatedAt too) unchanged.
// Returns an error wrapping exgate.ErrNotFound when there is no such
// intent.
func (s *Store) ScheduleIntent(ctx context.Context, id string, next time.Time, attempts int) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE intents SET next_due = ?, attempts = ? WHERE id = ?`,
			unixNano(next), attempts, id)
		if err != nil {
			return err
		}
		return notFoundUnlessOne(res)
	})
	if err != nil {
		return fmt.Errorf("sqlite: schedule intent %s: %w", id, err)
	}
	return nil
}
