// Package sqlstore is the one implementation of exgate.Store, on
// database/sql, that package sqlite and package postgres open on their own
// databases. What is not SQL lives here once: sealing secrets under the
// master key and binding each to its row, decoding rows into domain
// records, and turning rows affected and missing rows into exgate's error
// values. The statements and the schema (migrations/*.sql) are written
// once too, in the SQL both databases speak ($n parameters, INSERT ... ON
// CONFLICT, RETURNING); what differs between them is a Dialect, which the
// backend passes in with its connections.
package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/internal/migration"
	"github.com/exgate/exgate/internal/secretbox"
)

// Dialect is what one database does differently from the other.
type Dialect struct {
	// Name starts every error message: "sqlite", "postgres".
	Name string
	// Types spells the column types the schema names by placeholder.
	Types Types
	// LockMigrations, when not empty, is run first in the transaction that
	// migrates, so that instances starting together take turns.
	LockMigrations string
	// LockRow ends a SELECT that must lock the row it reads until the
	// transaction ends (" FOR UPDATE"); empty where a write transaction
	// locks the whole database anyway.
	LockRow string
	// GroupCommit runs concurrent write transactions as one, each in a
	// savepoint, with one commit (groupcommit.go): for a database with a
	// single writer whose every commit is synced to disk (SQLite).
	GroupCommit bool
	// JournalGroupCommit runs the journal's writes (intents, their
	// outcomes, the audit records) of concurrent callers as one
	// transaction without savepoints, each a single statement, with one
	// commit: for a database with concurrent writers where each commit
	// costs a flush of its log and each statement a round trip
	// (PostgreSQL). GroupCommit covers the journal already.
	JournalGroupCommit bool
	// CacheStatements keeps the store's frequent statements prepared,
	// for a driver that keeps none itself (stmts.go).
	CacheStatements bool
}

// Types are the column types the schema (migrations/*.sql) names by
// placeholder.
type Types struct {
	Int    string // {{int}}: a 64-bit integer
	Bytes  string // {{bytes}}: a byte string
	Serial string // {{serial}}: a whole column definition, an integer primary key the database assigns and never reuses
}

// schema is the store's versioned schema, in placeholders for the column
// types (Dialect.Types).
//
//go:embed migrations/*.sql
var schema embed.FS

// migrationsTable records the migrations applied, in placeholders too.
const migrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    {{int}} NOT NULL PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at {{int}} NOT NULL
)`

// typed replaces the type placeholders of query with d's types. A
// placeholder of another name, or a type d leaves empty, is an error.
func (d Dialect) typed(query string) (string, error) {
	t := d.Types
	out := strings.NewReplacer("{{int}}", t.Int, "{{bytes}}", t.Bytes, "{{serial}}", t.Serial).Replace(query)
	if strings.Contains(out, "{{") || t.Int == "" || t.Bytes == "" || t.Serial == "" {
		return "", fmt.Errorf("%s: no type for a placeholder in %.40q", d.Name, query)
	}
	return out, nil
}

// Store is exgate.Store on a SQL database. It is safe for concurrent use.
type Store struct {
	// Now returns the current time, for the timestamps the store assigns.
	// It defaults to time.Now; set it before the store is used.
	Now func() time.Time

	d     Dialect
	write *sql.DB // write transactions
	read  *sql.DB // reads outside transactions; may be write
	box   *secretbox.Box
	// group, when set, batches the write transactions (Dialect.GroupCommit).
	group *groupCommit
	// journal, when set, batches the journal's writes: group, or one of
	// their own (Dialect.JournalGroupCommit).
	journal *groupCommit
	// after batches the writes nobody waits on (journalLater): journal
	// on SQLite, where they share the intents' commits; a group of their
	// own on PostgreSQL, where each statement is a round trip that an
	// intent in the same batch would wait for.
	after *groupCommit
	// reserved holds the intents this store recorded with a risk
	// reservation, until their outcome: their settlement locks the key's
	// risk row, and on PostgreSQL it must not run in after's transaction
	// while journal's holds that row (the two would wait for each other).
	reserved sync.Map
	// figures holds each client key's risk_keys row (keyFigures) as this
	// store last read or wrote it: a reservation writes the row on the
	// condition that it still holds that, in one statement (risk.go).
	figures sync.Map
	// stmts, when set, keeps statements prepared (Dialect.CacheStatements).
	stmts *stmtCache
}

var _ exgate.Store = (*Store)(nil)

// New returns a store on write (every transaction) and read (every other
// query; the same pool or read-only connections to the same database),
// with secrets sealed under the 32-byte masterKey. It does not touch the
// database; call Migrate before using it. The store closes both pools when it is closed.
func New(d Dialect, write, read *sql.DB, masterKey []byte) (*Store, error) {
	box, err := secretbox.New(masterKey)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	s := &Store{d: d, write: write, read: read, box: box}
	if d.CacheStatements {
		s.stmts = &stmtCache{}
	}
	switch {
	case d.GroupCommit:
		s.group = newGroupCommit(write, true)
		s.group.stmts = s.stmts
		s.journal, s.after = s.group, s.group
	case d.JournalGroupCommit:
		s.journal = newGroupCommit(write, false)
		s.after = newGroupCommit(write, false)
	}
	return s, nil
}

// Close closes the database connections.
func (s *Store) Close() error {
	s.stmts.close()
	if s.read == s.write {
		return s.write.Close()
	}
	return errors.Join(s.read.Close(), s.write.Close())
}

// Ping checks that the database can be read and written.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.read.PingContext(ctx); err != nil {
		return s.fail("ping", err)
	}
	if err := s.write.PingContext(ctx); err != nil {
		return s.fail("ping", err)
	}
	return nil
}

// Migrate applies the migrations of the schema not applied yet, in one
// write transaction, recording each in schema_migrations.
func (s *Store) Migrate(ctx context.Context) error {
	migrations, err := migration.Load(schema, "migrations")
	if err != nil {
		return err
	}
	table, err := s.d.typed(migrationsTable)
	if err != nil {
		return err
	}
	for i, m := range migrations {
		if migrations[i].SQL, err = s.d.typed(m.SQL); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if s.d.LockMigrations != "" {
			if _, err := tx.ExecContext(ctx, s.d.LockMigrations); err != nil {
				return fmt.Errorf("lock migrations: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, table); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		applied, err := collect(rows, func(rows *sql.Rows) (v int64, err error) { return v, rows.Scan(&v) })
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		for _, m := range migrations {
			if slices.Contains(applied, m.Version) {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.ExecContext(ctx,
				`INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, s.now().UnixNano()); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
	if err == nil && s.stmts != nil {
		s.stmts.prepareWrites(ctx, s.write)
	}
	return err
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// fail wraps err with the dialect's name and what failed.
func (s *Store) fail(what string, err error) error {
	return fmt.Errorf("%s: %s: %w", s.d.Name, what, err)
}

// inTx runs fn in a write transaction and commits it when fn returns nil;
// nothing fn did is kept when it returns an error. With group commit the
// transaction may be shared with other callers' (groupcommit.go).
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.group != nil {
		return s.group.do(ctx, fn)
	}
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

// journalTx runs fn, one statement of the journal (see
// Dialect.JournalGroupCommit), in a write transaction that may be shared
// with other callers'.
func (s *Store) journalTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.journal != nil {
		return s.journal.do(ctx, fn)
	}
	return s.inTx(ctx, fn)
}

// journalLater is journalTx for a write nobody waits on: it joins the
// next transaction anyone commits, or is committed alone after a few
// milliseconds (groupcommit.go).
func (s *Store) journalLater(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.after != nil {
		return s.after.later(ctx, fn)
	}
	return s.inTx(ctx, fn)
}

// journalLaterWithIntents is journalLater in the intents' own batches
// (journal), where the outcome of an intent with a risk reservation
// settles it.
func (s *Store) journalLaterWithIntents(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.journal != nil {
		return s.journal.later(ctx, fn)
	}
	return s.journalLater(ctx, fn)
}

// exec runs a statement in a write transaction of its own and maps no
// row affected to none: exgate.ErrConflict for an INSERT ... ON CONFLICT
// DO NOTHING that inserted nothing, exgate.ErrNotFound for an UPDATE or
// DELETE that matched nothing.
func (s *Store) exec(ctx context.Context, none error, query string, args ...any) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		return execOne(ctx, tx, none, query, args...)
	})
}

// execStmt is execOne with the statement prepared when it is kept
// (stmts.go).
func (s *Store) execStmt(ctx context.Context, tx *sql.Tx, none error, query string, args ...any) error {
	res, err := s.txExec(ctx, tx, query, args...)
	if err != nil {
		return err
	}
	return rowsOrNone(res, none)
}

// execOne runs a statement in tx and returns none when it affected no row.
func execOne(ctx context.Context, tx *sql.Tx, none error, query string, args ...any) error {
	// Run to its end, as txExec's statements (stmts.go).
	res, err := tx.ExecContext(context.WithoutCancel(ctx), query, args...)
	if err != nil {
		return err
	}
	return rowsOrNone(res, none)
}

// rowsOrNone returns none when res affected no row.
func rowsOrNone(res sql.Result, none error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return none
	}
	return nil
}

// noRow turns sql.ErrNoRows into exgate.ErrNotFound.
func noRow(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return exgate.ErrNotFound
	}
	return err
}

// collect reads every row of rows with scan, and closes rows.
func collect[T any](rows *sql.Rows, scan func(*sql.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// unixNano is how the store writes a time: Unix nanoseconds.
func unixNano(t time.Time) int64 { return t.UnixNano() }

// fromUnixNano reads a time written by unixNano, in UTC.
func fromUnixNano(n int64) time.Time { return time.Unix(0, n).UTC() }

// optionalTime writes a time that may be zero: NULL for the zero time.
func optionalTime(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := unixNano(t)
	return &n
}

// fromOptional reads a time written by optionalTime.
func fromOptional(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return fromUnixNano(*n)
}

// nilIfEmpty returns nil for an empty byte slice, so that stored values
// read back the same whether they were written as nil or empty.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// limitClause is the LIMIT of a query returning up to limit rows, none
// when limit <= 0. The number is formatted, not bound: the databases
// disagree on how to bind "no limit".
func limitClause(limit int) string {
	if limit <= 0 {
		return ""
	}
	return " LIMIT " + strconv.Itoa(limit)
}
