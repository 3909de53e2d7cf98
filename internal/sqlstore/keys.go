package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/internal/secretbox"
)

// The additional data a secret is sealed with binds it to its table,
// column and row: sealed bytes copied to another row or column do not open.
// Changing these strings makes every stored secret unreadable.

// clientSecretAD binds a sealed client secret to its key.
func clientSecretAD(apiKey string) []byte {
	return secretbox.AdditionalData("client_keys.secret", apiKey)
}

// credentialAD binds a sealed credential column to its row.
func credentialAD(column string, id int64, clientAPIKey string) []byte {
	return secretbox.AdditionalData("credentials."+column, strconv.FormatInt(id, 10), clientAPIKey)
}

// CreateClientKey implements exgate.Store.
func (s *Store) CreateClientKey(ctx context.Context, k exgate.ClientKey) error {
	if k.APIKey == "" {
		return s.fail("create client key", errors.New("empty API key"))
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = s.now()
	}
	sealed := s.box.Seal([]byte(k.Secret), clientSecretAD(k.APIKey))
	err := s.exec(ctx, exgate.ErrConflict, `INSERT INTO client_keys (api_key, secret, label, created_at, revoked_at, legacy_signing)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		k.APIKey, sealed, k.Label, unixNano(k.CreatedAt), optionalTime(k.RevokedAt), k.LegacySigning)
	if err != nil {
		return s.fail("create client key "+k.APIKey, err)
	}
	return nil
}

// ClientKey implements exgate.Store.
func (s *Store) ClientKey(ctx context.Context, apiKey string) (exgate.ClientKey, error) {
	var (
		k       = exgate.ClientKey{APIKey: apiKey}
		sealed  []byte
		created int64
		revoked *int64
	)
	err := s.readRow(ctx,
		`SELECT secret, label, created_at, revoked_at, legacy_signing FROM client_keys WHERE api_key = $1`, apiKey,
	).Scan(&sealed, &k.Label, &created, &revoked, &k.LegacySigning)
	if err != nil {
		return exgate.ClientKey{}, s.fail("client key "+apiKey, noRow(err))
	}
	secret, err := s.box.Open(sealed, clientSecretAD(apiKey))
	if err != nil {
		return exgate.ClientKey{}, s.fail("client key "+apiKey, err)
	}
	k.Secret = string(secret)
	k.CreatedAt = fromUnixNano(created)
	k.RevokedAt = fromOptional(revoked)
	return k, nil
}

// ListClientKeys implements exgate.Store.
func (s *Store) ListClientKeys(ctx context.Context) ([]exgate.ClientKey, error) {
	rows, err := s.read.QueryContext(ctx,
		`SELECT api_key, label, created_at, revoked_at, legacy_signing FROM client_keys ORDER BY created_at, api_key`)
	if err != nil {
		return nil, s.fail("list client keys", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.ClientKey, error) {
		var (
			k       exgate.ClientKey
			created int64
			revoked *int64
		)
		if err := rows.Scan(&k.APIKey, &k.Label, &created, &revoked, &k.LegacySigning); err != nil {
			return k, err
		}
		k.CreatedAt = fromUnixNano(created)
		k.RevokedAt = fromOptional(revoked)
		return k, nil
	})
	if err != nil {
		return nil, s.fail("list client keys", err)
	}
	return out, nil
}

// RevokeClientKey implements exgate.Store.
func (s *Store) RevokeClientKey(ctx context.Context, apiKey string) error {
	err := s.exec(ctx, exgate.ErrNotFound,
		`UPDATE client_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE api_key = $2`,
		unixNano(s.now()), apiKey)
	if err != nil {
		return s.fail("revoke client key "+apiKey, err)
	}
	return nil
}

// AddCredential implements exgate.Store.
func (s *Store) AddCredential(ctx context.Context, c exgate.Credential) (exgate.Credential, error) {
	if c.Name == "" {
		return exgate.Credential{}, s.fail("add credential", errors.New("empty name"))
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	c.CreatedAt = fromUnixNano(unixNano(c.CreatedAt)) // as Credential will read it
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var revoked *int64
		err := tx.QueryRowContext(ctx,
			`SELECT revoked_at FROM client_keys WHERE api_key = $1`, c.ClientAPIKey).Scan(&revoked)
		if err != nil {
			return fmt.Errorf("client key: %w", noRow(err))
		}
		if revoked != nil {
			return fmt.Errorf("client key revoked: %w", exgate.ErrNotFound)
		}
		// The sealed columns are bound to the id, known only after the
		// insert: write empty values, then the sealed ones.
		err = tx.QueryRowContext(ctx, `INSERT INTO credentials
			(client_api_key, name, exchange, exchange_key, secret, passphrase, permissions, created_at, paper, paper_balances)
			VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING id`,
			c.ClientAPIKey, c.Name, c.Exchange, c.Key, []byte{}, exgate.FormatPermissions(c.Permissions),
			unixNano(c.CreatedAt), c.Paper, exgate.FormatPaperBalances(c.PaperBalances),
		).Scan(&c.ID)
		if errors.Is(err, sql.ErrNoRows) {
			return exgate.ErrConflict
		}
		if err != nil {
			return err
		}
		return execOne(ctx, tx, exgate.ErrNotFound, `UPDATE credentials SET secret = $1, passphrase = $2 WHERE id = $3`,
			s.box.Seal([]byte(c.Secret), credentialAD("secret", c.ID, c.ClientAPIKey)),
			s.box.Seal([]byte(c.Passphrase), credentialAD("passphrase", c.ID, c.ClientAPIKey)),
			c.ID)
	})
	if err != nil {
		return exgate.Credential{}, s.fail(fmt.Sprintf("add credential %q", c.Name), err)
	}
	return c, nil
}

// Credential implements exgate.Store.
func (s *Store) Credential(ctx context.Context, apiKey, name string) (exgate.Credential, error) {
	var (
		c                  = exgate.Credential{ClientAPIKey: apiKey, Name: name}
		secret, passphrase []byte
		perms, balances    string
		created            int64
	)
	what := fmt.Sprintf("credential %q", name)
	err := s.readRow(ctx, `SELECT id, exchange, exchange_key, secret, passphrase, permissions, created_at, paper, paper_balances
		FROM credentials WHERE client_api_key = $1 AND name = $2`, apiKey, name,
	).Scan(&c.ID, &c.Exchange, &c.Key, &secret, &passphrase, &perms, &created, &c.Paper, &balances)
	if err != nil {
		return exgate.Credential{}, s.fail(what, noRow(err))
	}
	if c.PaperBalances, err = exgate.ParsePaperBalances(balances); err != nil {
		return exgate.Credential{}, s.fail(what+": stored paper balances", err)
	}
	plain, err := s.box.Open(secret, credentialAD("secret", c.ID, apiKey))
	if err != nil {
		return exgate.Credential{}, s.fail(what+": secret", err)
	}
	c.Secret = string(plain)
	plain, err = s.box.Open(passphrase, credentialAD("passphrase", c.ID, apiKey))
	if err != nil {
		return exgate.Credential{}, s.fail(what+": passphrase", err)
	}
	c.Passphrase = string(plain)
	if c.Permissions, err = exgate.ParsePermissions(perms); err != nil {
		return exgate.Credential{}, s.fail(what+": stored permissions", err)
	}
	c.CreatedAt = fromUnixNano(created)
	return c, nil
}

// ListCredentials implements exgate.Store.
func (s *Store) ListCredentials(ctx context.Context, apiKey string) ([]exgate.Credential, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, name, exchange, exchange_key, permissions, created_at, paper, paper_balances
		FROM credentials WHERE client_api_key = $1 ORDER BY name`, apiKey)
	if err != nil {
		return nil, s.fail("list credentials", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.Credential, error) {
		var (
			c               = exgate.Credential{ClientAPIKey: apiKey}
			perms, balances string
			created         int64
		)
		if err := rows.Scan(&c.ID, &c.Name, &c.Exchange, &c.Key, &perms, &created, &c.Paper, &balances); err != nil {
			return c, err
		}
		var err error
		if c.Permissions, err = exgate.ParsePermissions(perms); err != nil {
			return c, fmt.Errorf("%q: stored permissions: %w", c.Name, err)
		}
		if c.PaperBalances, err = exgate.ParsePaperBalances(balances); err != nil {
			return c, fmt.Errorf("%q: stored paper balances: %w", c.Name, err)
		}
		c.CreatedAt = fromUnixNano(created)
		return c, nil
	})
	if err != nil {
		return nil, s.fail("list credentials", err)
	}
	return out, nil
}

// RemoveCredential implements exgate.Store. The paper ledger goes with
// the credential (ON DELETE CASCADE).
func (s *Store) RemoveCredential(ctx context.Context, apiKey, name string) error {
	err := s.exec(ctx, exgate.ErrNotFound,
		`DELETE FROM credentials WHERE client_api_key = $1 AND name = $2`, apiKey, name)
	if err != nil {
		return s.fail(fmt.Sprintf("remove credential %q", name), err)
	}
	return nil
}
