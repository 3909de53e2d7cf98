// Package sqlite is exgate's embedded store: exgate.Store in one SQLite
// file (modernc.org/sqlite, pure Go, no cgo).
//
// The store itself is internal/sqlstore, which package postgres opens too;
// this package holds how the file is opened. The file
// is opened in WAL mode with foreign keys on and synchronous=FULL: a
// commit returns once it is on disk. All writes go through a
// single connection and start with BEGIN IMMEDIATE, so writers in this
// process queue instead of failing with SQLITE_BUSY, and writers in other
// processes (admin commands) wait up to the busy timeout; a write
// transaction holds the whole file, so no row needs locking. Reads use a
// separate pool of read-only connections.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/exgate/exgate/internal/sqlstore"
)

// busyTimeout is how long a write waits for another process's write lock.
const busyTimeout = 10 * time.Second

// dialect is what SQLite does differently from PostgreSQL.
var dialect = sqlstore.Dialect{
	Name: "sqlite",
	// Exactly INTEGER PRIMARY KEY: the rowid; AUTOINCREMENT: never reused.
	Types: sqlstore.Types{Int: "INTEGER", Bytes: "BLOB", Serial: "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT"},
	// One writer, every commit synced: concurrent orders share commits.
	GroupCommit: true,
	// modernc.org/sqlite parses a statement each time it runs unless it
	// is kept prepared.
	CacheStatements: true,
}

// Store is the SQLite store. It is safe for concurrent use.
type Store struct {
	*sqlstore.Store
}

// Open opens (creating it if needed) the SQLite database file at path,
// applies pending migrations and returns the store. masterKey is the
// 32-byte key secrets are sealed under.
func Open(ctx context.Context, path string, masterKey []byte) (*Store, error) {
	if path == "" || path == ":memory:" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: invalid database path %q", path)
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
	write, read, err := openPools(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	core, err := sqlstore.New(dialect, write, read, masterKey)
	if err != nil {
		_ = errors.Join(write.Close(), read.Close())
		return nil, err
	}
	// The read connections are opened when first used: after the
	// migrations have switched the file to WAL mode.
	err = migrateWhenFree(ctx, func() error { return core.Migrate(ctx) })
	if err == nil {
		err = read.PingContext(ctx)
	}
	if err != nil {
		_ = core.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	return &Store{Store: core}, nil
}

// openPools opens the single write connection and the read-only pool on
// the file at path.
func openPools(path string) (write, read *sql.DB, err error) {
	params := url.Values{}
	params.Add("_pragma", "busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")")
	params.Add("_pragma", "foreign_keys(1)")
	params.Add("_pragma", "journal_mode(WAL)")
	// Every commit is synced to disk before it returns: an order is sent
	// to the exchange only once its intent is durable, and no speed is
	// bought with that (NORMAL would leave the last commits to a power
	// loss; docs/PERFORMANCE.md).
	params.Add("_pragma", "synchronous(FULL)")
	params.Set("_txlock", "immediate")
	write, err = sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		return nil, nil, err
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	params.Add("_pragma", "query_only(1)")
	params.Del("_txlock")
	read, err = sql.Open("sqlite", path+"?"+params.Encode())
	if err != nil {
		_ = write.Close()
		return nil, nil, err
	}
	return write, read, nil
}

// migrateWhenFree runs migrate, trying again for up to busyTimeout while
// the file is busy. Processes that open a new file at the same moment
// (serve and an admin command) race to switch it to WAL mode, and SQLite
// answers that race with SQLITE_BUSY at once, without its busy handler.
func migrateWhenFree(ctx context.Context, migrate func() error) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := migrate()
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
