// Package postgres is exgate's shared store for running several gateway
// instances: exgate.Store in PostgreSQL (github.com/jackc/pgx/v5, through
// database/sql).
//
// The store itself is internal/sqlstore, which package sqlite opens too;
// this package holds how PostgreSQL is opened and what it does
// differently.
// Uniqueness races between instances are settled by unique indexes
// (INSERT ... ON CONFLICT DO NOTHING), ledger updates lock the paper
// account's row (SELECT ... FOR UPDATE), so that concurrent operations on
// one account run one after the other, and instances starting together
// take turns to migrate under an advisory lock.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/exgate/exgate/internal/sqlstore"
)

// migrationLock is the pg_advisory_xact_lock key that serializes the
// migrations of instances starting together ("exgate" in ASCII).
const migrationLock int64 = 0x657867617465

// dialect is what PostgreSQL does differently from SQLite.
var dialect = sqlstore.Dialect{
	Name: "postgres",
	Types: sqlstore.Types{Int: "BIGINT", Bytes: "BYTEA",
		Serial: "BIGINT NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY"},
	LockMigrations: fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, migrationLock),
	LockRow:        ` FOR UPDATE`,
	// Every commit waits for its WAL flush (synchronous_commit stays on):
	// concurrent intents share one commit, outcomes and audit records join
	// it.
	JournalGroupCommit: true,
}

// Store is the PostgreSQL store. It is safe for concurrent use.
type Store struct {
	*sqlstore.Store
}

// Open connects to the database at url (postgres://...; a search_path
// parameter selects the schema; pool_max_conns and the other pgxpool
// parameters size the pool), applies pending migrations and returns the
// store. masterKey is the 32-byte key secrets are sealed under.
func Open(ctx context.Context, url string, masterKey []byte) (*Store, error) {
	cfg, err := poolConfig(url)
	if err != nil {
		return nil, err
	}
	// database/sql keeps the pool, sized as pgxpool would size it.
	db := stdlib.OpenDB(*cfg.ConnConfig)
	db.SetMaxOpenConns(int(cfg.MaxConns))
	db.SetMaxIdleConns(int(cfg.MaxConns))
	db.SetConnMaxLifetime(cfg.MaxConnLifetime)
	db.SetConnMaxIdleTime(cfg.MaxConnIdleTime)
	core, err := sqlstore.New(dialect, db, db, masterKey)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := core.Migrate(ctx); err != nil {
		_ = core.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &Store{Store: core}, nil
}

// poolConfig parses url. Whatever the URL or the server's default says,
// the store's sessions commit with synchronous_commit on: a commit
// returns once its WAL is flushed to disk, so that an order is sent to the
// exchange only once its intent is durable (off would lose the last
// commits to a server crash; docs/PERFORMANCE.md).
func poolConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The error may quote the URL, password included.
		return nil, errors.New("postgres: invalid database URL")
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	return cfg, nil
}
