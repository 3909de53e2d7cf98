package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/exgate/exgate"
)

// DueIntents returns up to limit unfinished intents whose NextDue is at or
// before now, the longest overdue first (then in the order they were
// recorded); limit <= 0 means no limit. An intent that can never progress
// is pushed back by ScheduleIntent and so cannot hide the others.
func (s *Store) DueIntents(ctx context.Context, now time.Time, limit int) ([]exgate.Intent, error) {
	var max *int // NULL: no limit
	if limit > 0 {
		max = &limit
	}
	rows, err := s.pool.Query(ctx, `SELECT `+intentColumns+` FROM intents
		WHERE state <> 'final' AND next_due <= $1 ORDER BY next_due, seq LIMIT $2`, unixNano(now), max)
	if err != nil {
		return nil, fmt.Errorf("postgres: due intents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (exgate.Intent, error) {
		return scanIntent(row)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: due intents: %w", err)
	}
	return out, nil
}

// ScheduleIntent sets when the reconciler next looks at an intent and how
// many times it has looked, leaving the rest (UpdatedAt too) unchanged.
// Returns an error wrapping exgate.ErrNotFound when there is no such
// intent.
func (s *Store) ScheduleIntent(ctx context.Context, id string, next time.Time, attempts int) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE intents SET next_due = $1, attempts = $2 WHERE id = $3`,
			unixNano(next), attempts, id)
		if err != nil {
			return err
		}
		return notFoundUnlessOne(tag)
	})
	if err != nil {
		return fmt.Errorf("postgres: schedule intent %s: %w", id, err)
	}
	return nil
}
