package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/internal/secretbox"
)

// clientSecretAD binds a sealed client secret to its key.
func clientSecretAD(apiKey string) []byte {
	return secretbox.AdditionalData("client_keys.secret", apiKey)
}

// credentialAD binds a sealed credential column to its row.
func credentialAD(column string, id int64, clientAPIKey string) []byte {
	return secretbox.AdditionalData("credentials."+column, strconv.FormatInt(id, 10), clientAPIKey)
}

// CreateClientKey stores a new client key with its secret sealed. A zero
// CreatedAt is set to now. Returns an error wrapping exgate.ErrConflict when
// the API key exists.
func (s *Store) CreateClientKey(ctx context.Context, k exgate.ClientKey) error {
	if k.APIKey == "" {
		return errors.New("sqlite: create client key: empty API key")
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = s.now()
	}
	var revoked sql.NullInt64
	if !k.RevokedAt.IsZero() {
		revoked = sql.NullInt64{Int64: unixNano(k.RevokedAt), Valid: true}
	}
	sealed := s.box.Seal([]byte(k.Secret), clientSecretAD(k.APIKey))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO client_keys (api_key, secret, label, created_at, revoked_at, legacy_signing)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			k.APIKey, sealed, k.Label, unixNano(k.CreatedAt), revoked, k.LegacySigning)
		if err != nil {
			return err
		}
		return conflictUnlessOne(res)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create client key %s: %w", k.APIKey, err)
	}
	return nil
}

// ClientKey returns a client key with its secret opened, revoked or not.
// Returns an error wrapping exgate.ErrNotFound when there is none.
func (s *Store) ClientKey(ctx context.Context, apiKey string) (exgate.ClientKey, error) {
	var (
		k       = exgate.ClientKey{APIKey: apiKey}
		sealed  []byte
		created int64
		revoked sql.NullInt64
	)
	err := s.read.QueryRowContext(ctx,
		`SELECT secret, label, created_at, revoked_at, legacy_signing FROM client_keys WHERE api_key = ?`, apiKey,
	).Scan(&sealed, &k.Label, &created, &revoked, &k.LegacySigning)
	if errors.Is(err, sql.ErrNoRows) {
		err = exgate.ErrNotFound
	}
	if err != nil {
		return exgate.ClientKey{}, fmt.Errorf("sqlite: client key %s: %w", apiKey, err)
	}
	secret, err := s.box.Open(sealed, clientSecretAD(apiKey))
	if err != nil {
		return exgate.ClientKey{}, fmt.Errorf("sqlite: client key %s: %w", apiKey, err)
	}
	k.Secret = string(secret)
	k.CreatedAt = fromUnixNano(created)
	if revoked.Valid {
		k.RevokedAt = fromUnixNano(revoked.Int64)
	}
	return k, nil
}

// ListClientKeys returns every client key, oldest first, without secrets.
func (s *Store) ListClientKeys(ctx context.Context) ([]exgate.ClientKey, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT api_key, label, created_at, revoked_at, legacy_signing FROM client_keys ORDER BY created_at, api_key`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list client keys: %w", err)
	}
	defer rows.Close()
	var out []exgate.ClientKey
	for rows.Next() {
		var (
			k       exgate.ClientKey
			created int64
			revoked sql.NullInt64
		)
		if err := rows.Scan(&k.APIKey, &k.Label, &created, &revoked, &k.LegacySigning); err != nil {
			return nil, fmt.Errorf("sqlite: list client keys: %w", err)
		}
		k.CreatedAt = fromUnixNano(created)
		if revoked.Valid {
			k.RevokedAt = fromUnixNano(revoked.Int64)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list client keys: %w", err)
	}
	return out, nil
}

// RevokeClientKey marks a client key revoked now; revoking it again keeps
// the first time. Returns an error wrapping exgate.ErrNotFound when there is
// no such key.
func (s *Store) RevokeClientKey(ctx context.Context, apiKey string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE client_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE api_key = ?`,
			unixNano(s.now()), apiKey)
		if err != nil {
			return err
		}
		return notFoundUnlessOne(res)
	})
	if err != nil {
		return fmt.Errorf("sqlite: revoke client key %s: %w", apiKey, err)
	}
	return nil
}

// AddCredential stores an exchange credential for an active client key,
// with its secret and passphrase sealed, and returns it with its new ID
// (never reused) and CreatedAt (now when zero). Returns an error wrapping
// exgate.ErrNotFound when the client key is unknown or revoked and
// exgate.ErrConflict when the client key has a credential of that name.
func (s *Store) AddCredential(ctx context.Context, c exgate.Credential) (exgate.Credential, error) {
	if c.Name == "" {
		return exgate.Credential{}, errors.New("sqlite: add credential: empty name")
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	c.CreatedAt = fromUnixNano(unixNano(c.CreatedAt)) // as Credential will read it
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var revoked sql.NullInt64
		err := tx.QueryRowContext(ctx,
			`SELECT revoked_at FROM client_keys WHERE api_key = ?`, c.ClientAPIKey).Scan(&revoked)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("client key: %w", exgate.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if revoked.Valid {
			return fmt.Errorf("client key revoked: %w", exgate.ErrNotFound)
		}
		// The sealed columns are bound to the id, known only after the
		// insert: write placeholders, then the sealed values.
		err = tx.QueryRowContext(ctx, `INSERT INTO credentials
			(client_api_key, name, exchange, exchange_key, secret, passphrase, permissions, created_at)
			VALUES (?, ?, ?, ?, x'', x'', ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
			c.ClientAPIKey, c.Name, c.Exchange, c.Key, exgate.FormatPermissions(c.Permissions), unixNano(c.CreatedAt),
		).Scan(&c.ID)
		if errors.Is(err, sql.ErrNoRows) {
			return exgate.ErrConflict
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE credentials SET secret = ?, passphrase = ? WHERE id = ?`,
			s.box.Seal([]byte(c.Secret), credentialAD("secret", c.ID, c.ClientAPIKey)),
			s.box.Seal([]byte(c.Passphrase), credentialAD("passphrase", c.ID, c.ClientAPIKey)),
			c.ID)
		return err
	})
	if err != nil {
		return exgate.Credential{}, fmt.Errorf("sqlite: add credential %q: %w", c.Name, err)
	}
	return c, nil
}

// Credential returns a client key's credential by name with its secrets
// opened. Returns an error wrapping exgate.ErrNotFound when there is none.
func (s *Store) Credential(ctx context.Context, apiKey, name string) (exgate.Credential, error) {
	var (
		c                  = exgate.Credential{ClientAPIKey: apiKey, Name: name}
		secret, passphrase []byte
		perms              string
		created            int64
	)
	err := s.read.QueryRowContext(ctx, `SELECT id, exchange, exchange_key, secret, passphrase, permissions, created_at
		FROM credentials WHERE client_api_key = ? AND name = ?`, apiKey, name,
	).Scan(&c.ID, &c.Exchange, &c.Key, &secret, &passphrase, &perms, &created)
	if errors.Is(err, sql.ErrNoRows) {
		err = exgate.ErrNotFound
	}
	if err != nil {
		return exgate.Credential{}, fmt.Errorf("sqlite: credential %q: %w", name, err)
	}
	plain, err := s.box.Open(secret, credentialAD("secret", c.ID, apiKey))
	if err != nil {
		return exgate.Credential{}, fmt.Errorf("sqlite: credential %q: secret: %w", name, err)
	}
	c.Secret = string(plain)
	plain, err = s.box.Open(passphrase, credentialAD("passphrase", c.ID, apiKey))
	if err != nil {
		return exgate.Credential{}, fmt.Errorf("sqlite: credential %q: passphrase: %w", name, err)
	}
	c.Passphrase = string(plain)
	if c.Permissions, err = exgate.ParsePermissions(perms); err != nil {
		return exgate.Credential{}, fmt.Errorf("sqlite: credential %q: stored permissions: %w", name, err)
	}
	c.CreatedAt = fromUnixNano(created)
	return c, nil
}

// ListCredentials returns a client key's credentials by name, without
// secrets.
func (s *Store) ListCredentials(ctx context.Context, apiKey string) ([]exgate.Credential, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, name, exchange, exchange_key, permissions, created_at
		FROM credentials WHERE client_api_key = ? ORDER BY name`, apiKey)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list credentials: %w", err)
	}
	defer rows.Close()
	var out []exgate.Credential
	for rows.Next() {
		var (
			c       = exgate.Credential{ClientAPIKey: apiKey}
			perms   string
			created int64
		)
		if err := rows.Scan(&c.ID, &c.Name, &c.Exchange, &c.Key, &perms, &created); err != nil {
			return nil, fmt.Errorf("sqlite: list credentials: %w", err)
		}
		if c.Permissions, err = exgate.ParsePermissions(perms); err != nil {
			return nil, fmt.Errorf("sqlite: list credentials: %q: stored permissions: %w", c.Name, err)
		}
		c.CreatedAt = fromUnixNano(created)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list credentials: %w", err)
	}
	return out, nil
}

// RemoveCredential deletes a credential and the simulated exchange's
// ledger kept for it. Returns an error wrapping exgate.ErrNotFound when
// there is none.
func (s *Store) RemoveCredential(ctx context.Context, apiKey, name string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`DELETE FROM credentials WHERE client_api_key = ? AND name = ?`, apiKey, name)
		if err != nil {
			return err
		}
		return notFoundUnlessOne(res)
	})
	if err != nil {
		return fmt.Errorf("sqlite: remove credential %q: %w", name, err)
	}
	return nil
}

// conflictUnlessOne turns an INSERT ... ON CONFLICT DO NOTHING that
// inserted nothing into exgate.ErrConflict.
func conflictUnlessOne(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return exgate.ErrConflict
	}
	return nil
}

// notFoundUnlessOne turns an UPDATE or DELETE that matched nothing into
// exgate.ErrNotFound.
func notFoundUnlessOne(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return exgate.ErrNotFound
	}
	return nil
}
