package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/exgate/exgate"
)

const instanceColumns = `id, host, pid, single, shared_state, started_at, heartbeat_at`

// StartInstance implements exgate.Store.
func (s *Store) StartInstance(ctx context.Context, in exgate.Instance, liveAfter time.Time) ([]exgate.Instance, error) {
	now := s.now()
	in.HeartbeatAt = fromUnixNano(unixNano(now))
	if in.StartedAt.IsZero() {
		in.StartedAt = in.HeartbeatAt
	}
	var live []exgate.Instance
	conflict := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT id FROM instance_lock WHERE id = 1`+s.d.LockRow).Scan(&one); err != nil {
			return fmt.Errorf("instance lock: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM gateway_instances WHERE heartbeat_at <= $1`, unixNano(liveAfter)); err != nil {
			return err
		}
		var err error
		if live, err = queryInstances(ctx, tx, `SELECT `+instanceColumns+` FROM gateway_instances
			WHERE id <> $1 ORDER BY started_at, id`, in.ID); err != nil {
			return err
		}
		for _, o := range live {
			if in.Single || o.Single {
				conflict = true
			}
		}
		if conflict {
			return nil
		}
		return upsertInstance(ctx, tx, in)
	})
	if err != nil {
		return nil, s.fail("start instance "+in.ID, err)
	}
	if conflict {
		return live, s.fail("start instance "+in.ID, fmt.Errorf("%d other instance(s) live: %w", len(live), exgate.ErrConflict))
	}
	return live, nil
}

// BeatInstance implements exgate.Store.
func (s *Store) BeatInstance(ctx context.Context, in exgate.Instance) error {
	in.HeartbeatAt = s.now()
	if in.StartedAt.IsZero() {
		in.StartedAt = in.HeartbeatAt
	}
	if err := s.inTx(ctx, func(tx *sql.Tx) error { return upsertInstance(ctx, tx, in) }); err != nil {
		return s.fail("heartbeat of instance "+in.ID, err)
	}
	return nil
}

// StopInstance implements exgate.Store.
func (s *Store) StopInstance(ctx context.Context, id string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM gateway_instances WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return s.fail("stop instance "+id, err)
	}
	return nil
}

// LiveInstances implements exgate.Store.
func (s *Store) LiveInstances(ctx context.Context, liveAfter time.Time) ([]exgate.Instance, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, s.fail("live instances", err)
	}
	defer func() { _ = tx.Rollback() }()
	out, err := queryInstances(ctx, tx, `SELECT `+instanceColumns+` FROM gateway_instances
		WHERE heartbeat_at > $1 ORDER BY started_at, id`, unixNano(liveAfter))
	if err != nil {
		return nil, s.fail("live instances", err)
	}
	return out, nil
}

func upsertInstance(ctx context.Context, tx *sql.Tx, in exgate.Instance) error {
	single := 0
	if in.Single {
		single = 1
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO gateway_instances (`+instanceColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
		in.ID, in.Host, in.PID, single, in.SharedState, unixNano(in.StartedAt), unixNano(in.HeartbeatAt))
	return err
}

func queryInstances(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]exgate.Instance, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []exgate.Instance
	for rows.Next() {
		var in exgate.Instance
		var pid, single, started, beat int64
		if err := rows.Scan(&in.ID, &in.Host, &pid, &single, &in.SharedState, &started, &beat); err != nil {
			return nil, err
		}
		in.PID, in.Single = int(pid), single != 0
		in.StartedAt, in.HeartbeatAt = fromUnixNano(started), fromUnixNano(beat)
		out = append(out, in)
	}
	return out, rows.Err()
}
