package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/exgate/exgate"
)

// intentColumns is the column list scanIntent reads.
const intentColumns = `id, kind, client_api_key, credential_id, credential_name, exchange, client_ref,
	fingerprint, request, state, status, response, created_at, updated_at, next_due, attempts`

// CreateIntent records a new intent. A zero CreatedAt is set to now and a
// zero UpdatedAt and a zero NextDue to CreatedAt. Returns an error wrapping exgate.ErrConflict
// when an intent has the same ID, or the same client key, kind and
// non-empty ClientRef: of several instances racing on one client id,
// exactly one succeeds.
func (s *Store) CreateIntent(ctx context.Context, in exgate.Intent) error {
	if in.ID == "" {
		return errors.New("postgres: create intent: empty id")
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
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO intents (`+intentColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
			in.ID, string(in.Kind), in.ClientAPIKey, in.CredentialID, in.CredentialName, in.Exchange,
			in.ClientRef, in.Fingerprint, nilIfEmpty(in.Request), string(in.State), in.Status,
			nilIfEmpty(in.Response), unixNano(in.CreatedAt), unixNano(in.UpdatedAt), unixNano(in.NextDue), in.Attempts)
		if err != nil {
			return err
		}
		return conflictUnlessOne(tag)
	})
	if err != nil {
		return fmt.Errorf("postgres: create intent %s: %w", in.ID, err)
	}
	return nil
}

// Intent returns an intent by ID. Returns an error wrapping
// exgate.ErrNotFound when there is none.
func (s *Store) Intent(ctx context.Context, id string) (exgate.Intent, error) {
	in, err := scanIntent(s.pool.QueryRow(ctx,
		`SELECT `+intentColumns+` FROM intents WHERE id = $1`, id))
	if err != nil {
		return exgate.Intent{}, fmt.Errorf("postgres: intent %s: %w", id, err)
	}
	return in, nil
}

// IntentByClientRef returns the intent of a client key and kind carrying
// the client's own id ref. Returns an error wrapping exgate.ErrNotFound
// when there is none (always for an empty ref).
func (s *Store) IntentByClientRef(ctx context.Context, apiKey string, kind exgate.IntentKind, ref string) (exgate.Intent, error) {
	if ref == "" {
		return exgate.Intent{}, fmt.Errorf("postgres: intent by empty client id: %w", exgate.ErrNotFound)
	}
	in, err := scanIntent(s.pool.QueryRow(ctx, `SELECT `+intentColumns+` FROM intents
		WHERE client_api_key = $1 AND kind = $2 AND client_ref = $3 AND client_ref <> ''`,
		apiKey, string(kind), ref))
	if err != nil {
		return exgate.Intent{}, fmt.Errorf("postgres: %s intent by client id %q: %w", kind, ref, err)
	}
	return in, nil
}

// UpdateIntent sets an intent's state and last answer, and its UpdatedAt
// to now. Returns an error wrapping exgate.ErrNotFound when there is no
// such intent.
func (s *Store) UpdateIntent(ctx context.Context, id string, state exgate.IntentState, status int, response []byte) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx,
			`UPDATE intents SET state = $1, status = $2, response = $3, updated_at = $4 WHERE id = $5`,
			string(state), status, nilIfEmpty(response), unixNano(s.now()), id)
		if err != nil {
			return err
		}
		return notFoundUnlessOne(tag)
	})
	if err != nil {
		return fmt.Errorf("postgres: update intent %s: %w", id, err)
	}
	return nil
}

// UnfinishedIntents returns up to limit intents that are not final, oldest
// first; limit <= 0 means no limit.
func (s *Store) UnfinishedIntents(ctx context.Context, limit int) ([]exgate.Intent, error) {
	var max *int // NULL: no limit
	if limit > 0 {
		max = &limit
	}
	rows, err := s.pool.Query(ctx, `SELECT `+intentColumns+` FROM intents
		WHERE state <> 'final' ORDER BY created_at, seq LIMIT $1`, max)
	if err != nil {
		return nil, fmt.Errorf("postgres: unfinished intents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (exgate.Intent, error) {
		return scanIntent(row)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: unfinished intents: %w", err)
	}
	return out, nil
}

// scanIntent reads the columns of intentColumns. It returns
// exgate.ErrNotFound for no row.
func scanIntent(row pgx.Row) (exgate.Intent, error) {
	var (
		in               exgate.Intent
		kind, state      string
		created, updated int64
		due              int64
	)
	err := row.Scan(&in.ID, &kind, &in.ClientAPIKey, &in.CredentialID, &in.CredentialName, &in.Exchange,
		&in.ClientRef, &in.Fingerprint, &in.Request, &state, &in.Status, &in.Response, &created, &updated, &due, &in.Attempts)
	if errors.Is(err, pgx.ErrNoRows) {
		return exgate.Intent{}, exgate.ErrNotFound
	}
	if err != nil {
		return exgate.Intent{}, err
	}
	in.Kind = exgate.IntentKind(kind)
	in.State = exgate.IntentState(state)
	in.Request = nilIfEmpty(in.Request)
	in.Response = nilIfEmpty(in.Response)
	in.CreatedAt = fromUnixNano(created)
	in.UpdatedAt = fromUnixNano(updated)
	in.NextDue = fromUnixNano(due)
	return in, nil
}
