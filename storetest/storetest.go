// Package storetest is the conformance suite every exgate store passes:
// package sqlite and package postgres run the same Run from their tests, so
// that both backends behave identically, down to their error values.
//
// Besides the store itself the suite needs to look underneath it: to read
// raw rows (secrets must not be there in clear), to tamper with them
// (a sealed secret moved to another row must not open), to open a second
// instance on the same database (migrations run twice, two instances race)
// and to set the store's clock. A backend's test wraps its store in a type
// that implements Harness for that.
package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Store is the contract of an exgate store.
type Store interface {
	Close() error
	Ping(ctx context.Context) error

	// CreateClientKey returns an error wrapping exgate.ErrConflict when
	// the API key exists.
	CreateClientKey(ctx context.Context, k exgate.ClientKey) error
	// ClientKey returns revoked keys too, with the secret; an error
	// wrapping exgate.ErrNotFound when there is none.
	ClientKey(ctx context.Context, apiKey string) (exgate.ClientKey, error)
	// ListClientKeys returns the keys without secrets.
	ListClientKeys(ctx context.Context) ([]exgate.ClientKey, error)
	// RevokeClientKey returns an error wrapping exgate.ErrNotFound when
	// there is no such key.
	RevokeClientKey(ctx context.Context, apiKey string) error

	// AddCredential assigns ID and CreatedAt; an error wrapping
	// exgate.ErrConflict for a duplicate name and exgate.ErrNotFound when
	// the client key is unknown or revoked.
	AddCredential(ctx context.Context, c exgate.Credential) (exgate.Credential, error)
	// Credential returns the credential with its secrets; an error
	// wrapping exgate.ErrNotFound when there is none.
	Credential(ctx context.Context, apiKey, name string) (exgate.Credential, error)
	// ListCredentials returns the credentials without secrets.
	ListCredentials(ctx context.Context, apiKey string) ([]exgate.Credential, error)
	// RemoveCredential returns an error wrapping exgate.ErrNotFound when
	// there is no such credential.
	RemoveCredential(ctx context.Context, apiKey, name string) error

	// CreateIntent returns an error wrapping exgate.ErrConflict for a
	// duplicate ID or (client key, kind, non-empty client ref).
	CreateIntent(ctx context.Context, in exgate.Intent) error
	// Intent returns an error wrapping exgate.ErrNotFound when there is
	// none.
	Intent(ctx context.Context, id string) (exgate.Intent, error)
	// IntentByClientRef returns an error wrapping exgate.ErrNotFound when
	// there is none.
	IntentByClientRef(ctx context.Context, apiKey string, kind exgate.IntentKind, ref string) (exgate.Intent, error)
	// UpdateIntent returns an error wrapping exgate.ErrNotFound when there
	// is no such intent.
	UpdateIntent(ctx context.Context, id string, state exgate.IntentState, status int, response []byte) error
	// UnfinishedIntents returns intents that are not final, oldest first.
	UnfinishedIntents(ctx context.Context, limit int) ([]exgate.Intent, error)
	// DueIntents returns unfinished intents whose NextDue is at or before
	// now, the longest overdue first; limit <= 0 means no limit.
	DueIntents(ctx context.Context, now time.Time, limit int) ([]exgate.Intent, error)
	// ScheduleIntent sets an intent's NextDue and Attempts only; an error
	// wrapping exgate.ErrNotFound when there is no such intent.
	ScheduleIntent(ctx context.Context, id string, next time.Time, attempts int) error

	// EnsureSimAccount returns an error wrapping exgate.ErrNotFound when
	// the credential does not exist.
	EnsureSimAccount(ctx context.Context, credentialID int64, initial []exgate.BalanceChange) error
	// SimBalances returns an error wrapping exgate.ErrNotFound when the
	// account was never opened.
	SimBalances(ctx context.Context, credentialID int64) (map[string]decimal.Decimal, error)
	// ApplySimOperation returns an error wrapping exgate.ErrConflict,
	// exgate.ErrInsufficientFunds or exgate.ErrNotFound, changing nothing.
	ApplySimOperation(ctx context.Context, credentialID int64, op exgate.SimOperation) error
	// SimOperation returns an error wrapping exgate.ErrNotFound when there
	// is none.
	SimOperation(ctx context.Context, credentialID int64, id string) (exgate.SimOperation, error)
}

// Harness is what the suite needs beyond Store. The value open returns
// must implement it.
type Harness interface {
	// RawQuery runs a query directly on the store's database and returns
	// every value of every row as text (byte values unchanged).
	RawQuery(ctx context.Context, query string) ([][]string, error)
	// RawExec runs a statement directly on the store's database.
	RawExec(ctx context.Context, query string) error
	// Reopen opens a second store on the same database, as another
	// instance would, under masterKey (the first store's key when nil). It
	// closes it when the test ends.
	Reopen(t *testing.T, masterKey []byte) Store
	// SetNow sets the clock the store reads; it is called before the
	// store is used.
	SetNow(now func() time.Time)
}

// Run runs the suite. open returns a new, empty store (that also implements
// Harness) and closes it when the test ends.
func Run(t *testing.T, open func(t *testing.T) Store) {
	s := suite{open: open}
	tests := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"Ping", s.testPing},
		{"Migrations", s.testMigrations},
		{"ClientKeys", s.testClientKeys},
		{"Credentials", s.testCredentials},
		{"SecretsAtRest", s.testSecretsAtRest},
		{"Intents", s.testIntents},
		{"UnfinishedIntents", s.testUnfinishedIntents},
		{"DueIntents", s.testDueIntents},
		{"ConcurrentClientRef", s.testConcurrentClientRef},
		{"SimLedger", s.testSimLedger},
		{"SimExactDecimals", s.testSimExactDecimals},
		{"ConcurrentSimSpending", s.testConcurrentSimSpending},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t)
		})
	}
}

// suite holds what every test needs.
type suite struct {
	open func(t *testing.T) Store
}

// env is one test's store, harness and clock.
type env struct {
	Store
	h     Harness
	clock *clock
}

// startTime is the fake clock's first reading: a time with nanoseconds,
// so that truncation shows.
func startTime() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.UTC) }

// newEnv opens a store with a fake clock.
func (s suite) newEnv(t *testing.T) env {
	t.Helper()
	st := s.open(t)
	h, ok := st.(Harness)
	if !ok {
		t.Fatalf("store %T does not implement storetest.Harness", st)
	}
	c := &clock{now: startTime()}
	h.SetNow(c.Now)
	return env{Store: st, h: h, clock: c}
}

// reopen opens a second instance on e's database with the same clock.
func (e env) reopen(t *testing.T) Store {
	t.Helper()
	st := e.h.Reopen(t, nil)
	if h, ok := st.(Harness); ok {
		h.SetNow(e.clock.Now)
	}
	return st
}

func (e env) rawQuery(t *testing.T, query string) [][]string {
	t.Helper()
	rows, err := e.h.RawQuery(t.Context(), query)
	if err != nil {
		t.Fatalf("raw query %q: %v", query, err)
	}
	return rows
}

func (e env) rawExec(t *testing.T, query string) {
	t.Helper()
	if err := e.h.RawExec(t.Context(), query); err != nil {
		t.Fatalf("raw exec %q: %v", query, err)
	}
}

// clock is a fake clock that moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

func (s suite) testPing(t *testing.T) {
	e := s.newEnv(t)
	if err := e.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func (s suite) testMigrations(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	want := e.rawQuery(t, "SELECT version, name FROM schema_migrations ORDER BY version")
	if len(want) == 0 {
		t.Fatal("schema_migrations is empty after Open")
	}
	if err := e.CreateClientKey(ctx, exgate.ClientKey{APIKey: "k1", Secret: "s1"}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		second := e.reopen(t)
		if err := second.Ping(ctx); err != nil {
			t.Fatalf("reopen %d: Ping: %v", i, err)
		}
		k, err := second.ClientKey(ctx, "k1")
		if err != nil || k.Secret != "s1" {
			t.Fatalf("reopen %d: ClientKey = %+v, %v; want the key written before", i, k, err)
		}
	}
	got := e.rawQuery(t, "SELECT version, name FROM schema_migrations ORDER BY version")
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("schema_migrations after reopening = %q, want %q", got, want)
	}
}
