package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/exgate/exgate"
)

// intentColumns is the column list scanIntent reads.
const intentColumns = `id, kind, client_api_key, credential_id, credential_name, exchange, client_ref,
	fingerprint, request, state, answer, response, created_at, updated_at, next_due, attempts`

// insertIntent records a new intent; a duplicate inserts nothing.
const insertIntent = `INSERT INTO intents (` + intentColumns + `, exclusive, risk)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) ON CONFLICT DO NOTHING`

// CreateIntent implements exgate.Store: on a store that batches the
// journal's writes, concurrent intents share one synced commit.
func (s *Store) CreateIntent(ctx context.Context, in exgate.Intent) error {
	if in.ID == "" {
		return s.fail("create intent", errors.New("empty id"))
	}
	if in.CreatedAt.IsZero() {
		in.CreatedAt = s.now()
	}
	if in.UpdatedAt.IsZero() {
		in.UpdatedAt = in.CreatedAt
	}
	if in.NextDue.IsZero() {
		in.NextDue = in.CreatedAt
	}
	// Encoded before the write transaction, which one writer runs for
	// every caller in turn (groupcommit.go).
	risk, err := storedRisk(in.Risk)
	if err != nil {
		return s.fail("create intent "+in.ID, err)
	}
	// exclusive is written, never read back (exgate.Intent.Exclusive).
	err = s.journalTx(ctx, func(tx *sql.Tx) error {
		// The intent first: a duplicate then fails cleanly, having written
		// nothing (groupcommit.go batches works without savepoints on
		// PostgreSQL). The reservation commits with the intent or not at
		// all (risk.go).
		err := s.execStmt(ctx, tx, exgate.ErrConflict, insertIntent,
			in.ID, string(in.Kind), in.ClientAPIKey, in.CredentialID, in.CredentialName, in.Exchange,
			in.ClientRef, in.Fingerprint, nilIfEmpty(in.Request), string(in.State), string(in.Answer),
			nilIfEmpty(in.Response), unixNano(in.CreatedAt), unixNano(in.UpdatedAt), unixNano(in.NextDue), in.Attempts,
			in.Exclusive, risk)
		if err != nil || in.Risk == nil {
			return err
		}
		return s.reserveRisk(ctx, tx, in)
	})
	if e, ok := errors.AsType[*exgate.Error](err); ok && e.Code == exgate.CodeRiskLimitExceeded {
		return e
	}
	if err == nil && in.Risk != nil && s.after != s.journal {
		s.reserved.Store(in.ID, struct{}{})
	}
	if err != nil {
		return s.fail("create intent "+in.ID, err)
	}
	return nil
}

// Intent implements exgate.Store.
func (s *Store) Intent(ctx context.Context, id string) (exgate.Intent, error) {
	in, err := scanIntent(s.readRow(ctx,
		`SELECT `+intentColumns+` FROM intents WHERE id = $1`, id))
	if err != nil {
		return exgate.Intent{}, s.fail("intent "+id, noRow(err))
	}
	return in, nil
}

// IntentByClientRef implements exgate.Store.
func (s *Store) IntentByClientRef(ctx context.Context, apiKey string, kind exgate.IntentKind, ref string) (exgate.Intent, error) {
	if ref == "" {
		return exgate.Intent{}, s.fail("intent by empty client id", exgate.ErrNotFound)
	}
	in, err := scanIntent(s.readRow(ctx, `SELECT `+intentColumns+` FROM intents
		WHERE client_api_key = $1 AND kind = $2 AND client_ref = $3 AND client_ref <> ''`,
		apiKey, string(kind), ref))
	if err != nil {
		return exgate.Intent{}, s.fail(fmt.Sprintf("%s intent by client id %q", kind, ref), noRow(err))
	}
	return in, nil
}

// UpdateIntent implements exgate.Store.
func (s *Store) UpdateIntent(ctx context.Context, id string, o exgate.IntentOutcome) error {
	s.reserved.Delete(id)
	if err := s.journalTx(ctx, s.updateIntent(ctx, id, o)); err != nil {
		return s.fail("update intent "+id, err)
	}
	return nil
}

// RecordOutcome implements exgate.Store: the update waits for the next
// batch of writes, or for a short while when none comes (groupcommit.go).
func (s *Store) RecordOutcome(ctx context.Context, id string, o exgate.IntentOutcome) error {
	later := s.journalLater
	if _, ok := s.reserved.LoadAndDelete(id); ok {
		// Its settlement locks the key's risk row, as the intents of
		// that key do: it waits for the intents' next batch, in their
		// transaction, not beside it.
		later = s.journalLaterWithIntents
	}
	if err := later(ctx, s.updateIntent(ctx, id, o)); err != nil {
		return s.fail("record outcome of intent "+id, err)
	}
	return nil
}

// updateIntent is the work of UpdateIntent and RecordOutcome: the
// outcome, and the settlement of the intent's risk reservation, if any,
// for that answer (risk.go).
func (s *Store) updateIntent(ctx context.Context, id string, o exgate.IntentOutcome) func(tx *sql.Tx) error {
	// The caller's settlement, when it has one, holds while the stored
	// reservation reads as the one it was worked out from: encoded here,
	// before the write transaction, it is compared there as a string.
	var hint *settlementHint
	if o.Risk != nil {
		if text, err := storedRisk(&o.Risk.Reserved); err == nil {
			hint = &settlementHint{stored: *text, s: o.Risk}
		}
	}
	return func(tx *sql.Tx) error {
		// The UPDATE returns the intent's reservation, so that an answer
		// of an intent without one, or that changes nothing, costs no
		// statement more (risk.go).
		var row *sql.Row
		if o.NextDue.IsZero() {
			row = s.txQueryRow(ctx, tx, updateIntentSQL,
				string(o.State), string(o.Answer), nilIfEmpty(o.Response), unixNano(s.now()), id)
		} else {
			row = s.txQueryRow(ctx, tx, updateIntentDueSQL,
				string(o.State), string(o.Answer), nilIfEmpty(o.Response), unixNano(s.now()), unixNano(o.NextDue), id)
		}
		var kind, apiKey string
		var risk *string
		if err := row.Scan(&kind, &apiKey, &risk); errors.Is(err, sql.ErrNoRows) {
			// Either no such intent, or it is final already and o is
			// not: an outcome recorded after its answer (RecordOutcome)
			// that another instance's cancel or reconciliation has
			// overtaken. A final record never goes back.
			var state string
			if err := tx.QueryRowContext(ctx, `SELECT state FROM intents WHERE id = $1`, id).Scan(&state); err != nil {
				return noRow(err)
			}
			return nil
		} else if err != nil {
			return err
		}
		return s.settleRisk(ctx, tx, id, apiKey, exgate.IntentKind(kind), risk, o, hint)
	}
}

// The statements of UpdateIntent, RecordOutcome and ScheduleIntent.
const (
	// A final intent takes only another final outcome: an older answer
	// committed late (RecordOutcome after another instance's cancel) must
	// not reopen it, nor recharge its risk reservation.
	updateIntentSQL    = `UPDATE intents SET state = $1, answer = $2, response = $3, updated_at = $4 WHERE id = $5 AND (state <> 'final' OR $1 = 'final') RETURNING kind, client_api_key, risk`
	updateIntentDueSQL = `UPDATE intents SET state = $1, answer = $2, response = $3, updated_at = $4, next_due = $5 WHERE id = $6 AND (state <> 'final' OR $1 = 'final') RETURNING kind, client_api_key, risk`
	scheduleIntentSQL  = `UPDATE intents SET next_due = $1, attempts = $2 WHERE id = $3`
)

// UnfinishedIntents implements exgate.Store.
func (s *Store) UnfinishedIntents(ctx context.Context, limit int) ([]exgate.Intent, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+intentColumns+` FROM intents
		WHERE state <> 'final' ORDER BY created_at, seq`+limitClause(limit))
	if err != nil {
		return nil, s.fail("unfinished intents", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.Intent, error) { return scanIntent(rows) })
	if err != nil {
		return nil, s.fail("unfinished intents", err)
	}
	return out, nil
}

// DueIntents implements exgate.Store.
func (s *Store) DueIntents(ctx context.Context, now time.Time, limit int) ([]exgate.Intent, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+intentColumns+` FROM intents
		WHERE state <> 'final' AND next_due <= $1 ORDER BY next_due, seq`+limitClause(limit), unixNano(now))
	if err != nil {
		return nil, s.fail("due intents", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.Intent, error) { return scanIntent(rows) })
	if err != nil {
		return nil, s.fail("due intents", err)
	}
	return out, nil
}

// ScheduleIntent implements exgate.Store.
func (s *Store) ScheduleIntent(ctx context.Context, id string, next time.Time, attempts int) error {
	err := s.journalTx(ctx, func(tx *sql.Tx) error {
		return s.execStmt(ctx, tx, exgate.ErrNotFound, scheduleIntentSQL, unixNano(next), attempts, id)
	})
	if err != nil {
		return s.fail("schedule intent "+id, err)
	}
	return nil
}

// scanIntent reads the columns of intentColumns.
func scanIntent(row interface{ Scan(...any) error }) (exgate.Intent, error) {
	var (
		in               exgate.Intent
		kind, state      string
		answer           string
		created, updated int64
		due              int64
	)
	err := row.Scan(&in.ID, &kind, &in.ClientAPIKey, &in.CredentialID, &in.CredentialName, &in.Exchange,
		&in.ClientRef, &in.Fingerprint, &in.Request, &state, &answer, &in.Response, &created, &updated, &due, &in.Attempts)
	if err != nil {
		return exgate.Intent{}, err
	}
	in.Kind = exgate.IntentKind(kind)
	in.State = exgate.IntentState(state)
	in.Answer = exgate.IntentAnswer(answer)
	in.Request = nilIfEmpty(in.Request)
	in.Response = nilIfEmpty(in.Response)
	in.CreatedAt = fromUnixNano(created)
	in.UpdatedAt = fromUnixNano(updated)
	in.NextDue = fromUnixNano(due)
	return in, nil
}
