package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/exgate/exgate"
)

// intent returns a filled-in order intent.
func intent(id, apiKey, ref string) exgate.Intent {
	return exgate.Intent{
		ID:             id,
		Kind:           exgate.IntentOrder,
		ClientAPIKey:   apiKey,
		CredentialID:   42,
		CredentialName: "main",
		Exchange:       "binance",
		ClientRef:      ref,
		Fingerprint:    "fp-" + id,
		Request:        []byte(`{"symbol":"BTCUSDT","side":"BUY","quantity":"0.001"}`),
		State:          exgate.IntentSubmitting,
	}
}

func (s suite) testIntents(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	created := time.Date(2029, 12, 31, 23, 59, 59, 999999999, time.UTC)

	full := intent("o1", "alice", "my-1")
	full.Answer = exgate.AnswerRecord
	full.Response = []byte(`{"id":"o1"}`)
	full.CreatedAt = created
	full.UpdatedAt = created.Add(time.Second)
	full.NextDue = created.Add(15 * time.Second)
	full.Attempts = 3
	defaulted := intent("o2", "alice", "")
	defaulted.Request = nil
	withdrawal := intent("w1", "alice", "my-1")
	withdrawal.Kind = exgate.IntentWithdrawal
	otherClient := intent("o3", "bob", "my-1")
	noRef := intent("o4", "alice", "")

	t.Run("create and read", func(t *testing.T) {
		for _, in := range []exgate.Intent{full, defaulted, withdrawal, otherClient, noRef} {
			if err := e.CreateIntent(ctx, in); err != nil {
				t.Fatalf("CreateIntent(%s): %v", in.ID, err)
			}
		}
		wantDefaulted := defaulted
		wantDefaulted.CreatedAt, wantDefaulted.UpdatedAt, wantDefaulted.NextDue = startTime(), startTime(), startTime()
		tests := []struct {
			id   string
			want exgate.Intent
		}{
			{"o1", full},
			{"o2", wantDefaulted},
		}
		for _, tc := range tests {
			got, err := e.Intent(ctx, tc.id)
			if err != nil {
				t.Fatalf("Intent(%s): %v", tc.id, err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("Intent(%s) (-got +want):\n%s", tc.id, diff)
			}
		}
	})

	t.Run("by client ref", func(t *testing.T) {
		tests := []struct {
			name    string
			apiKey  string
			kind    exgate.IntentKind
			ref     string
			wantID  string
			wantErr error
		}{
			{"order", "alice", exgate.IntentOrder, "my-1", "o1", nil},
			{"withdrawal", "alice", exgate.IntentWithdrawal, "my-1", "w1", nil},
			{"other client", "bob", exgate.IntentOrder, "my-1", "o3", nil},
			{"unknown ref", "alice", exgate.IntentOrder, "my-2", "", exgate.ErrNotFound},
			{"unknown client", "carol", exgate.IntentOrder, "my-1", "", exgate.ErrNotFound},
			{"empty ref", "alice", exgate.IntentOrder, "", "", exgate.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got, err := e.IntentByClientRef(ctx, tc.apiKey, tc.kind, tc.ref)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("error = %v, want %v", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("IntentByClientRef: %v", err)
				}
				if got.ID != tc.wantID {
					t.Fatalf("IntentByClientRef = %s, want %s", got.ID, tc.wantID)
				}
			})
		}
		got, err := e.IntentByClientRef(ctx, "alice", exgate.IntentOrder, "my-1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, full); diff != "" {
			t.Errorf("IntentByClientRef (-got +want):\n%s", diff)
		}
	})

	t.Run("errors", func(t *testing.T) {
		sameID := intent("o1", "bob", "")
		sameRef := intent("o9", "alice", "my-1")
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"duplicate id", e.CreateIntent(ctx, sameID), exgate.ErrConflict},
			{"duplicate client ref", e.CreateIntent(ctx, sameRef), exgate.ErrConflict},
			{"read unknown", second(e.Intent(ctx, "nope")), exgate.ErrNotFound},
			{"update unknown", e.UpdateIntent(ctx, "nope", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord}), exgate.ErrNotFound},
			{"outcome of unknown", e.RecordOutcome(ctx, "nope", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord}), exgate.ErrNotFound},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if !errors.Is(tc.err, tc.want) {
					t.Fatalf("error = %v, want %v", tc.err, tc.want)
				}
			})
		}
		if _, err := e.Intent(ctx, "o9"); !errors.Is(err, exgate.ErrNotFound) {
			t.Fatalf("intent refused for its client ref was stored: %v", err)
		}
		got, err := e.Intent(ctx, "o1")
		if err != nil || got.ClientAPIKey != "alice" {
			t.Fatalf("after duplicate create: Intent = %+v, %v; want the first", got, err)
		}
	})

	t.Run("update", func(t *testing.T) {
		due := startTime().Add(time.Hour)
		tests := []struct {
			name    string
			outcome exgate.IntentOutcome
			later   bool // RecordOutcome rather than UpdateIntent
			wantDue time.Time
		}{
			{"unknown", exgate.IntentOutcome{State: exgate.IntentUnknown, Answer: exgate.AnswerPending, Response: []byte(`{"status":"PENDING"}`)}, false, startTime()},
			{"accepted, due later", exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord, Response: []byte(`{"status":"NEW"}`), NextDue: due}, false, due},
			{"recorded later", exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord, Response: []byte(`{"status":"PARTIALLY_FILLED"}`)}, true, due},
			{"recorded later, due", exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord, Response: []byte(`{"status":"PARTIALLY_FILLED"}`), NextDue: due.Add(time.Hour)}, true, due.Add(time.Hour)},
			{"final error", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerError, Response: []byte(`{"code":"ORDER_REJECTED"}`)}, false, due.Add(time.Hour)},
			{"final", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord, Response: []byte(`{"status":"FILLED"}`)}, true, due.Add(time.Hour)},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				now := e.clock.Advance(time.Second)
				update := e.UpdateIntent
				if tc.later {
					update = e.RecordOutcome
				}
				if err := update(ctx, "o2", tc.outcome); err != nil {
					t.Fatalf("update: %v", err)
				}
				got, err := e.Intent(ctx, "o2")
				if err != nil {
					t.Fatal(err)
				}
				want := defaulted
				want.CreatedAt, want.NextDue = startTime(), tc.wantDue
				want.State, want.Answer, want.Response, want.UpdatedAt = tc.outcome.State, tc.outcome.Answer, tc.outcome.Response, now
				if diff := cmp.Diff(got, want); diff != "" {
					t.Fatalf("Intent after update (-got +want):\n%s", diff)
				}
			})
		}
		// o2 is final now: an older answer committed late (another
		// instance's RecordOutcome after a cancel here) changes nothing.
		final, err := e.Intent(ctx, "o2")
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
		for _, update := range []func(context.Context, string, exgate.IntentOutcome) error{e.UpdateIntent, e.RecordOutcome} {
			if err := update(ctx, "o2", exgate.IntentOutcome{State: exgate.IntentAccepted, Answer: exgate.AnswerRecord, Response: []byte(`{"status":"NEW"}`)}); err != nil {
				t.Fatalf("a late non-final outcome of a final intent: %v, want nil", err)
			}
		}
		if got, err := e.Intent(ctx, "o2"); err != nil || !cmp.Equal(got, final) {
			t.Fatalf("a late non-final outcome reopened a final intent: %+v, %v", got, err)
		}
	})
}

func (s suite) testUnfinishedIntents(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	base := startTime()
	// Created out of order, some at the same time: oldest first means by
	// CreatedAt, then in the order they were recorded.
	tests := []struct {
		id    string
		at    time.Duration
		state exgate.IntentState
	}{
		{"i-late", 5 * time.Second, exgate.IntentSubmitting},
		{"i-first", 0, exgate.IntentUnknown},
		{"i-final", 1 * time.Second, exgate.IntentFinal},
		{"i-tie-a", 2 * time.Second, exgate.IntentAccepted},
		{"i-tie-b", 2 * time.Second, exgate.IntentSubmitting},
		{"i-done", 3 * time.Second, exgate.IntentSubmitting},
	}
	for _, tc := range tests {
		in := intent(tc.id, "alice", "")
		in.State = tc.state
		in.CreatedAt = base.Add(tc.at)
		if err := e.CreateIntent(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.UpdateIntent(ctx, "i-done", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord}); err != nil {
		t.Fatal(err)
	}
	all := []string{"i-first", "i-tie-a", "i-tie-b", "i-late"}
	for _, limit := range []int{0, -1, 1, 3, 4, 10} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			got, err := e.UnfinishedIntents(ctx, limit)
			if err != nil {
				t.Fatalf("UnfinishedIntents: %v", err)
			}
			want := all
			if limit > 0 && limit < len(all) {
				want = all[:limit]
			}
			var ids []string
			for _, in := range got {
				ids = append(ids, in.ID)
			}
			if diff := cmp.Diff(ids, want); diff != "" {
				t.Fatalf("UnfinishedIntents (-got +want):\n%s", diff)
			}
		})
	}
	t.Run("full records", func(t *testing.T) {
		got, err := e.UnfinishedIntents(ctx, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("UnfinishedIntents = %v, %v", got, err)
		}
		want, err := e.Intent(ctx, "i-first")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got[0], want); diff != "" {
			t.Fatalf("UnfinishedIntents record (-got +want):\n%s", diff)
		}
	})
	t.Run("none", func(t *testing.T) {
		empty := s.newEnv(t)
		got, err := empty.UnfinishedIntents(ctx, 10)
		if err != nil || len(got) != 0 {
			t.Fatalf("UnfinishedIntents on an empty store = %v, %v", got, err)
		}
	})
}

// testConcurrentClientRef races intents with one client ref from two
// instances: exactly one is recorded.
func (s suite) testConcurrentClientRef(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	stores := []exgate.Store{e.Store, e.reopen(t)}
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-ready
			errs[i] = stores[i%len(stores)].CreateIntent(ctx, intent(fmt.Sprintf("race-%02d", i), "alice", "same-ref"))
		})
	}
	close(ready)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Fatalf("intents %d and %d both recorded with the same client ref", winner, i)
			}
			winner = i
		case !errors.Is(err, exgate.ErrConflict):
			t.Fatalf("intent %d: error = %v, want nil or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no intent recorded")
	}
	got, err := e.IntentByClientRef(ctx, "alice", exgate.IntentOrder, "same-ref")
	if err != nil || got.ID != fmt.Sprintf("race-%02d", winner) {
		t.Fatalf("IntentByClientRef = %s, %v; want the winner race-%02d", got.ID, err, winner)
	}
}

// testDueIntents checks the reconciler's schedule: only unfinished intents
// whose NextDue has come, the longest overdue first, and ScheduleIntent
// moving one back without touching the rest of the record.
func (s suite) testDueIntents(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	base := startTime()
	tests := []struct {
		id    string
		at    time.Duration // CreatedAt
		due   time.Duration // NextDue; 0: CreatedAt
		state exgate.IntentState
	}{
		{"i-old-later", 0, 30 * time.Second, exgate.IntentAccepted},
		{"i-new-now", 10 * time.Second, 0, exgate.IntentUnknown},
		{"i-future", 0, time.Hour, exgate.IntentSubmitting},
		{"i-final", 0, 0, exgate.IntentFinal},
		{"i-tie-a", 20 * time.Second, 0, exgate.IntentSubmitting},
		{"i-tie-b", 20 * time.Second, 0, exgate.IntentAccepted},
	}
	for _, tc := range tests {
		in := intent(tc.id, "alice", "")
		in.State = tc.state
		in.CreatedAt = base.Add(tc.at)
		if tc.due != 0 {
			in.NextDue = base.Add(tc.due)
		}
		if err := e.CreateIntent(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(t *testing.T, now time.Time, limit int) []string {
		t.Helper()
		got, err := e.DueIntents(ctx, now, limit)
		if err != nil {
			t.Fatalf("DueIntents: %v", err)
		}
		var out []string
		for _, in := range got {
			out = append(out, in.ID)
		}
		return out
	}
	cases := []struct {
		name  string
		now   time.Duration
		limit int
		want  []string
	}{
		{"before any", -time.Second, 0, nil},
		{"at the first", 0, 0, nil},
		{"some", 20 * time.Second, 0, []string{"i-new-now", "i-tie-a", "i-tie-b"}},
		{"overdue first", 30 * time.Second, 0, []string{"i-new-now", "i-tie-a", "i-tie-b", "i-old-later"}},
		{"limit", 30 * time.Second, 2, []string{"i-new-now", "i-tie-a"}},
		{"no limit", 2 * time.Hour, -1, []string{"i-new-now", "i-tie-a", "i-tie-b", "i-old-later", "i-future"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(ids(t, base.Add(tc.now), tc.limit), tc.want); diff != "" {
				t.Fatalf("DueIntents (-got +want):\n%s", diff)
			}
		})
	}

	t.Run("schedule", func(t *testing.T) {
		before, err := e.Intent(ctx, "i-new-now")
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Minute)
		next := base.Add(25*time.Second + 7) // nanoseconds survive
		if err := e.ScheduleIntent(ctx, "i-new-now", next, 4); err != nil {
			t.Fatalf("ScheduleIntent: %v", err)
		}
		got, err := e.Intent(ctx, "i-new-now")
		if err != nil {
			t.Fatal(err)
		}
		want := before
		want.NextDue, want.Attempts = next, 4
		if diff := cmp.Diff(got, want); diff != "" {
			t.Fatalf("Intent after ScheduleIntent (-got +want):\n%s", diff)
		}
		if diff := cmp.Diff(ids(t, base.Add(30*time.Second), 0), []string{"i-tie-a", "i-tie-b", "i-new-now", "i-old-later"}); diff != "" {
			t.Fatalf("DueIntents after ScheduleIntent (-got +want):\n%s", diff)
		}
		if err := e.ScheduleIntent(ctx, "nope", next, 1); !errors.Is(err, exgate.ErrNotFound) {
			t.Fatalf("ScheduleIntent(unknown) = %v, want %v", err, exgate.ErrNotFound)
		}
	})
	t.Run("full records", func(t *testing.T) {
		got, err := e.DueIntents(ctx, base.Add(2*time.Hour), 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("DueIntents = %v, %v", got, err)
		}
		want, err := e.Intent(ctx, got[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got[0], want); diff != "" {
			t.Fatalf("DueIntents record (-got +want):\n%s", diff)
		}
	})
}

// testIntentAnswerMigration: intents stored before migration 0026, with
// the HTTP status the journal used to record, read back with their answer
// in the journal's terms. The test puts the intents table back as it was
// before 0026 (a status column, no answer), writes rows as the journal
// wrote them then, and opens the store again, which applies 0026 again.
func (s suite) testIntentAnswerMigration(t *testing.T) {
	e := s.newEnv(t)
	ctx := t.Context()
	e.rawExec(t, `ALTER TABLE intents ADD COLUMN status INTEGER NOT NULL DEFAULT 0`)
	e.rawExec(t, `ALTER TABLE intents DROP COLUMN answer`)
	e.rawExec(t, `DELETE FROM schema_migrations WHERE name = '0026_intent_answer.sql'`)
	rows := []struct {
		id, state string
		status    int
		response  string // NULL when empty
		want      exgate.IntentAnswer
	}{
		{"o-submitting", "submitting", 0, "", exgate.AnswerNone},
		{"o-filled", "final", 200, `{"status":"FILLED"}`, exgate.AnswerRecord},
		{"o-open", "accepted", 200, `{"status":"PENDING"}`, exgate.AnswerRecord},
		{"o-unknown", "unknown", 504, `{"status":"PENDING"}`, exgate.AnswerPending},
		{"o-refused", "final", 422, `{"code":"ORDER_REJECTED","detail":"no"}`, exgate.AnswerError},
		{"o-orphaned", "final", 502, `{"code":"EXCHANGE_ERROR","detail":"gone","outcomeUnknown":true}`, exgate.AnswerError},
		{"w-unavailable", "final", 503, `{"code":"EXCHANGE_UNAVAILABLE","detail":"down"}`, exgate.AnswerError},
		{"o-status-no-body", "unknown", 504, "", exgate.AnswerNone},
	}
	for i, r := range rows {
		response := "NULL"
		if r.response != "" {
			response = "'" + r.response + "'"
		}
		e.rawExec(t, fmt.Sprintf(`INSERT INTO intents (id, kind, client_api_key, credential_id, credential_name, exchange,
			client_ref, fingerprint, request, state, status, response, created_at, updated_at, next_due, attempts)
			VALUES ('%s', 'order', 'alice', 42, 'main', 'binance', 'ref-%d', 'fp', '{}', '%s', %d, %s, 1, 2, 3, 0)`,
			r.id, i, r.state, r.status, response))
	}
	second := e.reopen(t)
	for _, r := range rows {
		got, err := second.Intent(ctx, r.id)
		if err != nil {
			t.Fatalf("Intent(%s) after the migration: %v", r.id, err)
		}
		if got.Answer != r.want || string(got.Response) != r.response || string(got.State) != r.state {
			t.Errorf("%s (status %d) after the migration: answer %q, state %s, response %s; want %q, %s, %s",
				r.id, r.status, got.Answer, got.State, got.Response, r.want, r.state, r.response)
		}
	}
	if cols := e.rawQuery(t, `SELECT count(*) FROM schema_migrations WHERE name = '0026_intent_answer.sql'`); len(cols) != 1 || cols[0][0] != "1" {
		t.Errorf("0026 recorded %v times, want once", cols)
	}
	// And the journal's writes go on in the new column.
	if err := second.UpdateIntent(ctx, "o-submitting", exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerRecord, Response: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if got, err := second.Intent(ctx, "o-submitting"); err != nil || got.Answer != exgate.AnswerRecord {
		t.Errorf("after an update: %+v, %v", got, err)
	}
}
