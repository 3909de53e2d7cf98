package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/exgate/exgate"
)

// testConsoleLogins: a login link works once, only before it expires, and
// once only even when two instances race for it (docs/contract.md 2.7).
func (s suite) testConsoleLogins(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	now := startTime()
	if err := e.CreateConsoleLogin(ctx, "h1", now.Add(10*time.Minute)); err != nil {
		t.Fatalf("CreateConsoleLogin: %v", err)
	}
	if err := e.CreateConsoleLogin(ctx, "h1", now.Add(10*time.Minute)); !errors.Is(err, exgate.ErrConflict) {
		t.Fatalf("CreateConsoleLogin of an existing hash = %v, want ErrConflict", err)
	}
	if err := e.CreateConsoleLogin(ctx, "h2", now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		hash string
		at   time.Time
		ok   bool
	}{
		{"unknown", "nope", now, false},
		{"expired", "h2", now.Add(10 * time.Minute), false},
		{"first use", "h1", now.Add(time.Minute), true},
		{"second use", "h1", now.Add(2 * time.Minute), false},
	}
	for _, tc := range tests {
		err := e.UseConsoleLogin(ctx, tc.hash, tc.at)
		if tc.ok && err != nil {
			t.Errorf("%s: UseConsoleLogin = %v, want nil", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, exgate.ErrNotFound) {
			t.Errorf("%s: UseConsoleLogin = %v, want ErrNotFound", tc.name, err)
		}
	}

	// Of several instances racing for one link, exactly one gets it.
	if err := e.CreateConsoleLogin(ctx, "race", now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	stores := []exgate.Store{e.Store, e.reopen(t), e.reopen(t), e.reopen(t)}
	var wg sync.WaitGroup
	errs := make([]error, len(stores))
	for i, st := range stores {
		wg.Go(func() { errs[i] = st.UseConsoleLogin(ctx, "race", now) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, exgate.ErrNotFound):
			t.Errorf("racing UseConsoleLogin = %v, want nil or ErrNotFound", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d instances used one login link, want exactly 1", won)
	}

	// Creating a link sweeps expired ones: the expired h2 is gone.
	e.clock.Advance(time.Hour)
	if err := e.CreateConsoleLogin(ctx, "h3", e.clock.Now().Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if rows := e.rawQuery(t, "SELECT token_hash FROM console_logins ORDER BY token_hash"); len(rows) != 1 || rows[0][0] != "h3" {
		t.Fatalf("console_logins after the sweep = %q, want only h3", rows)
	}
}

// testConsoleSessions: a session is found until it expires, can be
// extended and ends at logout.
func (s suite) testConsoleSessions(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	now := startTime()
	want := exgate.ConsoleSession{IDHash: "s1", CreatedAt: now.Truncate(time.Microsecond), ExpiresAt: now.Add(time.Hour)}
	if err := e.CreateConsoleSession(ctx, want); err != nil {
		t.Fatalf("CreateConsoleSession: %v", err)
	}
	if err := e.CreateConsoleSession(ctx, want); !errors.Is(err, exgate.ErrConflict) {
		t.Fatalf("CreateConsoleSession twice = %v, want ErrConflict", err)
	}
	got, err := e.reopen(t).ConsoleSession(ctx, "s1", now)
	if err != nil || got != want {
		t.Fatalf("ConsoleSession from another instance = %+v, %v; want %+v", got, err, want)
	}
	if _, err := e.ConsoleSession(ctx, "s1", now.Add(time.Hour)); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("ConsoleSession at its expiry = %v, want ErrNotFound", err)
	}
	if err := e.ExtendConsoleSession(ctx, "s1", now.Add(2*time.Hour)); err != nil {
		t.Fatalf("ExtendConsoleSession: %v", err)
	}
	if _, err := e.ConsoleSession(ctx, "s1", now.Add(time.Hour)); err != nil {
		t.Fatalf("ConsoleSession after extending = %v", err)
	}
	if err := e.ExtendConsoleSession(ctx, "nope", now); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("ExtendConsoleSession of no session = %v, want ErrNotFound", err)
	}
	if err := e.DeleteConsoleSession(ctx, "s1"); err != nil {
		t.Fatalf("DeleteConsoleSession: %v", err)
	}
	if err := e.DeleteConsoleSession(ctx, "s1"); err != nil {
		t.Fatalf("DeleteConsoleSession again: %v", err)
	}
	if _, err := e.ConsoleSession(ctx, "s1", now); !errors.Is(err, exgate.ErrNotFound) {
		t.Fatalf("ConsoleSession after logout = %v, want ErrNotFound", err)
	}
}

// testRecentIntents: an exchange key's intents of one kind, newest first.
func (s suite) testRecentIntents(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	base := startTime()
	mk := func(id string, kind exgate.IntentKind, cred int64, at time.Duration) exgate.Intent {
		in := intent(id, "alice", "")
		in.Kind, in.CredentialID, in.CreatedAt = kind, cred, base.Add(at)
		return in
	}
	for _, in := range []exgate.Intent{
		mk("o1", exgate.IntentOrder, 1, 0),
		mk("o2", exgate.IntentOrder, 1, time.Second),
		mk("o3", exgate.IntentOrder, 2, 2*time.Second),
		mk("w1", exgate.IntentWithdrawal, 1, 3*time.Second),
		mk("o4", exgate.IntentOrder, 1, 4*time.Second),
	} {
		if err := e.CreateIntent(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		cred  int64
		kind  exgate.IntentKind
		limit int
		want  []string
	}{
		{1, exgate.IntentOrder, 0, []string{"o4", "o2", "o1"}},
		{1, exgate.IntentOrder, 2, []string{"o4", "o2"}},
		{1, exgate.IntentWithdrawal, 0, []string{"w1"}},
		{2, exgate.IntentOrder, 0, []string{"o3"}},
		{3, exgate.IntentOrder, 0, nil},
	}
	for _, tc := range tests {
		got, err := e.RecentIntents(ctx, tc.cred, tc.kind, tc.limit)
		if err != nil {
			t.Fatalf("RecentIntents(%d, %s, %d): %v", tc.cred, tc.kind, tc.limit, err)
		}
		var ids []string
		for _, in := range got {
			ids = append(ids, in.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("RecentIntents(%d, %s, %d) = %v, want %v", tc.cred, tc.kind, tc.limit, ids, tc.want)
		}
	}
}
