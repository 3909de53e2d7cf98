// Package postgres is exgate's shared store for running several gateway
// instances: client keys, exchange credentials, the order and withdrawal
// journal and the simulated exchange's paper ledger, in PostgreSQL
// (github.com/jackc/pgx/v5).
//
// Uniqueness races between instances are settled by unique indexes
// (INSERT ... ON CONFLICT DO NOTHING), and ledger updates lock the paper
// account's row, so that concurrent operations on one account run one after
// the other. Secrets are sealed with internal/secretbox under the master
// key.
//
// Package sqlite implements the same contract on the same schema;
// storetest holds both to it.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/internal/migration"
	"github.com/exgate/exgate/internal/secretbox"
)

// migrationLock is the pg_advisory_xact_lock key that serializes the
// migrations of instances starting together ("exgate" in ASCII).
const migrationLock int64 = 0x657867617465

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is the PostgreSQL store. It is safe for concurrent use.
type Store struct {
	// Now returns the current time, for the timestamps the store assigns.
	// It defaults to time.Now; set it before the store is used.
	Now func() time.Time

	pool *pgxpool.Pool
	box  *secretbox.Box
}

// Open connects to the database at url (postgres://...; a search_path
// parameter selects the schema), applies pending migrations and returns the
// store. masterKey is the 32-byte key secrets are sealed under.
func Open(ctx context.Context, url string, masterKey []byte) (*Store, error) {
	box, err := secretbox.New(masterKey)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The error may quote the URL, password included.
		return nil, errors.New("postgres: invalid database URL")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s := &Store{pool: pool, box: box}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s, nil
}

// Close closes every connection.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// inTx runs fn in a transaction and commits it when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// migrate applies the pending migrations in one transaction holding a
// transaction-level advisory lock: instances starting together take turns,
// and the later ones find the migrations applied.
func (s *Store) migrate(ctx context.Context) error {
	migrations, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("lock migrations: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    BIGINT NOT NULL PRIMARY KEY,
			name       TEXT   NOT NULL,
			applied_at BIGINT NOT NULL
		)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		for _, m := range migrations {
			if slices.Contains(versions, m.Version) {
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx,
				`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, s.now().UnixNano()); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
}

// unixNano is how the store writes a time: Unix nanoseconds.
func unixNano(t time.Time) int64 { return t.UnixNano() }

// fromUnixNano reads a time written by unixNano, in UTC.
func fromUnixNano(n int64) time.Time { return time.Unix(0, n).UTC() }

// nilIfEmpty returns nil for an empty byte slice, so that stored values
// read back the same whether they were written as nil or empty.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// conflictUnlessOne turns an INSERT ... ON CONFLICT DO NOTHING that
// inserted nothing into exgate.ErrConflict.
func conflictUnlessOne(tag pgconn.CommandTag) error {
	if tag.RowsAffected() == 0 {
		return exgate.ErrConflict
	}
	return nil
}

// notFoundUnlessOne turns an UPDATE or DELETE that matched nothing into
// exgate.ErrNotFound.
func notFoundUnlessOne(tag pgconn.CommandTag) error {
	if tag.RowsAffected() == 0 {
		return exgate.ErrNotFound
	}
	return nil
}
