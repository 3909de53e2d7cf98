// Package storetest is the conformance suite every exgate.Store passes:
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

	"github.com/exgate/exgate"
)

// Harness is what the suite needs beyond exgate.Store. The value open returns
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
	Reopen(t *testing.T, masterKey []byte) exgate.Store
	// SetNow sets the clock the store reads; it is called before the
	// store is used.
	SetNow(now func() time.Time)
}

// Run runs the suite. open returns a new, empty store (that also implements
// Harness) and closes it when the test ends.
func Run(t *testing.T, open func(t *testing.T) exgate.Store) {
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
		{"IntentAnswerMigration", s.testIntentAnswerMigration},
		{"ConcurrentClientRef", s.testConcurrentClientRef},
		{"SimLedger", s.testSimLedger},
		{"SimExactDecimals", s.testSimExactDecimals},
		{"ConcurrentSimSpending", s.testConcurrentSimSpending},
		{"AllowedIPs", s.testAllowedIPs},
		{"AllowedAddresses", s.testAllowedAddresses},
		{"Audit", s.testAudit},
		{"MasterKeyCheck", s.testMasterKeyCheck},
		{"MasterKeyCheckEmptyStore", s.testMasterKeyCheckEmptyStore},
		{"SimOpenOperations", s.testSimOpenOperations},
		{"PaperCredentials", s.testPaperCredentials},
		{"ConsoleLogins", s.testConsoleLogins},
		{"ConsoleSessions", s.testConsoleSessions},
		{"RecentIntents", s.testRecentIntents},
		{"Instances", s.testInstances},
		{"SimWallets", s.testSimWallets},
		{"ExclusiveIntents", s.testExclusiveIntents},
		{"RiskLimits", s.testRiskLimits},
		{"RiskHalts", s.testRiskHalts},
		{"RiskReservations", s.testRiskReservations},
		{"RiskSettlementHint", s.testRiskSettlementHint},
		{"RiskFiguresOfTwoStores", s.testRiskFiguresOfTwoStores},
		{"ConcurrentRiskReservations", s.testConcurrentRiskReservations},
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
	open func(t *testing.T) exgate.Store
}

// env is one test's store, harness and clock.
type env struct {
	exgate.Store
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
func (e env) reopen(t *testing.T) exgate.Store {
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
