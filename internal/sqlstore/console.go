package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/exgate/exgate"
)

// CreateConsoleLogin implements exgate.Store.
func (s *Store) CreateConsoleLogin(ctx context.Context, tokenHash string, expires time.Time) error {
	if tokenHash == "" {
		return s.fail("create console login", errors.New("empty token hash"))
	}
	now := unixNano(s.now())
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// Expired links and sessions are of no use to anyone: swept here,
		// on the rare path, so that the tables stay small.
		if _, err := tx.ExecContext(ctx, `DELETE FROM console_logins WHERE expires_at <= $1`, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE expires_at <= $1`, now); err != nil {
			return err
		}
		return execOne(ctx, tx, exgate.ErrConflict, `INSERT INTO console_logins (token_hash, created_at, expires_at)
			VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, tokenHash, now, unixNano(expires))
	})
	if err != nil {
		return s.fail("create console login", err)
	}
	return nil
}

// UseConsoleLogin implements exgate.Store.
func (s *Store) UseConsoleLogin(ctx context.Context, tokenHash string, now time.Time) error {
	err := s.exec(ctx, exgate.ErrNotFound, `UPDATE console_logins SET used_at = $1
		WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1`, unixNano(now), tokenHash)
	if err != nil {
		return s.fail("use console login", err)
	}
	return nil
}

// CreateConsoleSession implements exgate.Store.
func (s *Store) CreateConsoleSession(ctx context.Context, cs exgate.ConsoleSession) error {
	if cs.IDHash == "" {
		return s.fail("create console session", errors.New("empty id hash"))
	}
	if cs.CreatedAt.IsZero() {
		cs.CreatedAt = s.now()
	}
	err := s.exec(ctx, exgate.ErrConflict, `INSERT INTO console_sessions (id_hash, created_at, expires_at)
		VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, cs.IDHash, unixNano(cs.CreatedAt), unixNano(cs.ExpiresAt))
	if err != nil {
		return s.fail("create console session", err)
	}
	return nil
}

// ConsoleSession implements exgate.Store.
func (s *Store) ConsoleSession(ctx context.Context, idHash string, now time.Time) (exgate.ConsoleSession, error) {
	var created, expires int64
	err := s.read.QueryRowContext(ctx, `SELECT created_at, expires_at FROM console_sessions
		WHERE id_hash = $1 AND expires_at > $2`, idHash, unixNano(now)).Scan(&created, &expires)
	if err != nil {
		return exgate.ConsoleSession{}, s.fail("console session", noRow(err))
	}
	return exgate.ConsoleSession{IDHash: idHash, CreatedAt: fromUnixNano(created), ExpiresAt: fromUnixNano(expires)}, nil
}

// ExtendConsoleSession implements exgate.Store.
func (s *Store) ExtendConsoleSession(ctx context.Context, idHash string, expires time.Time) error {
	err := s.exec(ctx, exgate.ErrNotFound, `UPDATE console_sessions SET expires_at = $1 WHERE id_hash = $2`,
		unixNano(expires), idHash)
	if err != nil {
		return s.fail("extend console session", err)
	}
	return nil
}

// DeleteConsoleSession implements exgate.Store.
func (s *Store) DeleteConsoleSession(ctx context.Context, idHash string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE id_hash = $1`, idHash)
		return err
	})
	if err != nil {
		return s.fail("delete console session", err)
	}
	return nil
}

// RecentIntents implements exgate.Store.
func (s *Store) RecentIntents(ctx context.Context, credentialID int64, kind exgate.IntentKind, limit int) ([]exgate.Intent, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+intentColumns+` FROM intents
		WHERE credential_id = $1 AND kind = $2 ORDER BY created_at DESC, seq DESC`+limitClause(limit),
		credentialID, string(kind))
	if err != nil {
		return nil, s.fail("recent intents", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.Intent, error) { return scanIntent(rows) })
	if err != nil {
		return nil, s.fail("recent intents", err)
	}
	return out, nil
}
