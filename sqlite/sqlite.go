// Package sqlite is exgate's embedded store: client keys, exchange
// credentials, the order and withdrawal journal and the simulated
// exchange's paper ledger, in one SQLite file (modernc.org/sqlite, pure
// Go, no cgo).
//
// The file is opened in WAL mode with foreign keys on. All writes go
// through a single connection and start with BEGIN IMMEDIATE, so writers in
// this process queue instead of failing with SQLITE_BUSY, and writers in
// other processes (admin commands) wait up to the busy timeout. Reads use a
// separate pool of read-only connections. Secrets are sealed with
// internal/secretbox under the master key.
//
// Package postgres implements the same contract; storetest holds both to it.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/exgate/exgate/internal/migration"
	"github.com/exgate/exgate/internal/secretbox"
)

// busyTimeout is how long a write waits for another process's write lock.
const busyTimeout = 10 * time.Second

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is the SQLite store. It is safe for concurrent use.
type Store struct {
	// Now returns the current time, for the timestamps the store assigns.
	// It defaults to time.Now; set it before the store is used.
	Now func() time.Time

	write *sql.DB // one connection: every write transaction
	read  *sql.DB // read-only connections
	box   *secretbox.Box
}

// Open opens (creating it if needed) the SQLite database file at path,
// applies pending migrations and returns the store. masterKey is the
// 32-byte key secrets are sealed under.
func Open(ctx context.Context, path string, masterKey []byte) (*Store, error) {
	if path == "" || path == ":memory:" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: invalid database path %q", path)
	}
	box, err := secretbox.New(masterKey)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}

	// The file holds sealed secrets and the journal: create it private.
	// SQLite gives its -wal and -shm files the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}

	params := url.Values{}
	params.Add("_pragma", "busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")")
	params.Add("_pragma", "foreign_keys(1)")
	params.Add("_pragma", "journal_mode(WAL)")
	params.Set("_txlock", "immediate")
	write, err := sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	s := &Store{write: write, box: box}
	if err := s.migrateWhenFree(ctx); err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}

	params.Add("_pragma", "query_only(1)")
	params.Del("_txlock")
	read, err := sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		_ = write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := read.PingContext(ctx); err != nil {
		_ = write.Close()
		_ = read.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	s.read = read
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.read.Close(), s.write.Close())
}

// Ping checks that the database can be read and written.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.read.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	if err := s.write.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE on the single write
// connection) and commits it when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// migrateWhenFree runs migrate, trying again for up to busyTimeout while
// the file is busy. Processes that open a new file at the same moment
// (serve and an admin command) race to switch it to WAL mode, and SQLite
// answers that race with SQLITE_BUSY at once, without its busy handler.
func (s *Store) migrateWhenFree(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := s.migrate(ctx)
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (in any of its
// extended forms).
func isBusy(err error) bool {
	e, ok := errors.AsType[*sqlite.Error](err)
	return ok && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// migrate applies the pending migrations in one write transaction, which
// holds SQLite's write lock: a second process opening the file at the same
// time waits and then finds them applied.
func (s *Store) migrate(ctx context.Context) error {
	migrations, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at INTEGER NOT NULL
		)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		applied := map[int64]bool{}
		rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				_ = rows.Close()
				return fmt.Errorf("read schema_migrations: %w", err)
			}
			applied[v] = true
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		for _, m := range migrations {
			if applied[m.Version] {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
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

// nilIfEmpty returns nil for an empty byte slice, so that stored blobs read
// back the same whether they were written as nil or empty.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
