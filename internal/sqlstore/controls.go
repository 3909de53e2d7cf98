package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/internal/secretbox"
)

// SetAllowedIPs implements exgate.Store.
func (s *Store) SetAllowedIPs(ctx context.Context, apiKey string, prefixes []netip.Prefix) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM client_keys WHERE api_key = $1`, apiKey).Scan(&one)
		if err != nil {
			return fmt.Errorf("client key: %w", noRow(err))
		}
		if len(prefixes) == 0 {
			_, err := tx.ExecContext(ctx, `DELETE FROM client_key_ips WHERE api_key = $1`, apiKey)
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO client_key_ips (api_key, prefixes, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (api_key) DO UPDATE SET prefixes = excluded.prefixes, updated_at = excluded.updated_at`,
			apiKey, exgate.FormatIPAllowlist(prefixes), unixNano(s.now()))
		return err
	})
	if err != nil {
		return s.fail("set allowed IPs of "+apiKey, err)
	}
	return nil
}

// AllowedIPs implements exgate.Store.
func (s *Store) AllowedIPs(ctx context.Context, apiKey string) ([]netip.Prefix, error) {
	var text string
	err := s.read.QueryRowContext(ctx, `SELECT prefixes FROM client_key_ips WHERE api_key = $1`, apiKey).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail("allowed IPs of "+apiKey, err)
	}
	out, err := exgate.ParseIPAllowlist(text)
	if err != nil {
		return nil, s.fail("allowed IPs of "+apiKey+": stored list", err)
	}
	return out, nil
}

// AllowAddress implements exgate.Store.
func (s *Store) AllowAddress(ctx context.Context, a exgate.AllowedAddress) (exgate.AllowedAddress, error) {
	a.Asset, a.Network = strings.ToUpper(a.Asset), strings.ToUpper(a.Network)
	what := fmt.Sprintf("allow address on %q", a.CredentialName)
	if a.Asset == "" || a.Network == "" || a.Address == "" {
		return a, s.fail(what, errors.New("asset, network and address are required"))
	}
	a.CreatedAt = fromUnixNano(unixNano(s.now()))
	if a.UsableFrom.IsZero() {
		a.UsableFrom = a.CreatedAt
	}
	a.UsableFrom = fromUnixNano(unixNano(a.UsableFrom))
	a.DeniedAt = time.Time{}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM credentials WHERE client_api_key = $1 AND name = $2`,
			a.ClientAPIKey, a.CredentialName).Scan(&one)
		if err != nil {
			return fmt.Errorf("exchange key: %w", noRow(err))
		}
		// A denied entry comes back with the new hold; an allowed one is
		// left as it is (no row changed: a conflict).
		return execOne(ctx, tx, exgate.ErrConflict, `INSERT INTO withdrawal_addresses
			(client_api_key, credential_name, asset, network, address, tag, usable_from, created_at, denied_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)
			ON CONFLICT (client_api_key, credential_name, asset, network, address, tag) DO UPDATE
			SET usable_from = excluded.usable_from, created_at = excluded.created_at, denied_at = NULL
			WHERE withdrawal_addresses.denied_at IS NOT NULL`,
			a.ClientAPIKey, a.CredentialName, a.Asset, a.Network, a.Address, a.Tag,
			unixNano(a.UsableFrom), unixNano(a.CreatedAt))
	})
	if err != nil {
		return exgate.AllowedAddress{}, s.fail(what, err)
	}
	return a, nil
}

// DenyAddress implements exgate.Store.
func (s *Store) DenyAddress(ctx context.Context, a exgate.AllowedAddress) error {
	err := s.exec(ctx, exgate.ErrNotFound, `UPDATE withdrawal_addresses SET denied_at = $1
		WHERE client_api_key = $2 AND credential_name = $3 AND asset = $4 AND network = $5 AND address = $6 AND tag = $7
		AND denied_at IS NULL`,
		unixNano(s.now()), a.ClientAPIKey, a.CredentialName, strings.ToUpper(a.Asset), strings.ToUpper(a.Network), a.Address, a.Tag)
	if err != nil {
		return s.fail(fmt.Sprintf("deny address on %q", a.CredentialName), err)
	}
	return nil
}

// AllowedAddresses implements exgate.Store.
func (s *Store) AllowedAddresses(ctx context.Context, apiKey, name string) ([]exgate.AllowedAddress, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT asset, network, address, tag, usable_from, created_at, denied_at
		FROM withdrawal_addresses WHERE client_api_key = $1 AND credential_name = $2
		ORDER BY asset, network, address, tag`, apiKey, name)
	if err != nil {
		return nil, s.fail(fmt.Sprintf("allowed addresses of %q", name), err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.AllowedAddress, error) {
		var (
			a               = exgate.AllowedAddress{ClientAPIKey: apiKey, CredentialName: name}
			usable, created int64
			denied          *int64
		)
		if err := rows.Scan(&a.Asset, &a.Network, &a.Address, &a.Tag, &usable, &created, &denied); err != nil {
			return a, err
		}
		a.UsableFrom, a.CreatedAt, a.DeniedAt = fromUnixNano(usable), fromUnixNano(created), fromOptional(denied)
		return a, nil
	})
	if err != nil {
		return nil, s.fail(fmt.Sprintf("allowed addresses of %q", name), err)
	}
	return out, nil
}

// AppendAudit implements exgate.Store.
func (s *Store) AppendAudit(ctx context.Context, e exgate.AuditEntry) (exgate.AuditEntry, error) {
	err := s.inTx(ctx, func(tx *sql.Tx) error { return s.insertAudit(ctx, tx, &e) })
	if err != nil {
		return e, s.fail("append audit", err)
	}
	return e, nil
}

// AppendAudits implements exgate.Store: the entries in one transaction, in
// order; none is written when one is invalid. The write joins the next
// batch of the journal's writes (journalLater).
func (s *Store) AppendAudits(ctx context.Context, es []exgate.AuditEntry) error {
	err := s.journalLater(ctx, func(tx *sql.Tx) error {
		for i := range es {
			if err := s.insertAudit(ctx, tx, &es[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.fail("append audit", err)
	}
	return nil
}

// insertAuditSQL writes one audit record and returns its seq.
const insertAuditSQL = `INSERT INTO audit_log
	(at, actor, action, api_key, exchange_key, details, status, code, intent_id, request_id, remote, client_request_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING seq`

// insertAudit writes e and sets its Seq and Time.
func (s *Store) insertAudit(ctx context.Context, tx *sql.Tx, e *exgate.AuditEntry) error {
	if e.Actor == "" || e.Action == "" {
		return errors.New("actor and action are required")
	}
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	e.Time = fromUnixNano(unixNano(e.Time))
	details := ""
	if len(e.Details) > 0 {
		b, err := json.Marshal(e.Details)
		if err != nil {
			return err
		}
		details = string(b)
	}
	return s.txQueryRow(ctx, tx, insertAuditSQL,
		unixNano(e.Time), e.Actor, e.Action, e.APIKey, e.ExchangeKey, details, e.Status, e.Code,
		e.IntentID, e.RequestID, e.Remote, e.ClientRequestID).Scan(&e.Seq)
}

// AuditLog implements exgate.Store.
func (s *Store) AuditLog(ctx context.Context, f exgate.AuditFilter) ([]exgate.AuditEntry, error) {
	var (
		where []string
		args  []any
	)
	if f.APIKey != "" {
		args = append(args, f.APIKey)
		where = append(where, fmt.Sprintf("api_key = $%d", len(args)))
	}
	if !f.Since.IsZero() {
		args = append(args, unixNano(f.Since))
		where = append(where, fmt.Sprintf("at >= $%d", len(args)))
	}
	query := `SELECT seq, at, actor, action, api_key, exchange_key, details, status, code, intent_id, request_id, remote,
		client_request_id FROM audit_log`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY seq DESC" + limitClause(f.Limit)
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.fail("audit log", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.AuditEntry, error) {
		var (
			e       exgate.AuditEntry
			at      int64
			details string
		)
		if err := rows.Scan(&e.Seq, &at, &e.Actor, &e.Action, &e.APIKey, &e.ExchangeKey, &details, &e.Status,
			&e.Code, &e.IntentID, &e.RequestID, &e.Remote, &e.ClientRequestID); err != nil {
			return e, err
		}
		e.Time = fromUnixNano(at)
		if details != "" {
			if err := json.Unmarshal([]byte(details), &e.Details); err != nil {
				return e, fmt.Errorf("entry %d: details: %w", e.Seq, err)
			}
		}
		return e, nil
	})
	if err != nil {
		return nil, s.fail("audit log", err)
	}
	return out, nil
}

// masterKeyCheck is the text sealed under the master key in store_meta.
const masterKeyCheck = "exgate master key check v1"

// masterKeyCheckAD binds the check value to its row.
func masterKeyCheckAD() []byte {
	return secretbox.AdditionalData("store_meta.value", "master_key_check")
}

// CheckMasterKey implements exgate.Store.
func (s *Store) CheckMasterKey(ctx context.Context) error {
	sealed, err := s.readMasterKeyCheck(ctx, s.read)
	if err != nil && !errors.Is(err, exgate.ErrNotFound) {
		return s.fail("check master key", err)
	}
	if err == nil {
		return s.openMasterKeyCheck(sealed)
	}
	// First use: a store created before the check existed may hold
	// secrets already, sealed under the right key or not. Only a key that
	// opens them may become the store's check value.
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var apiKey string
		var secret []byte
		err := tx.QueryRowContext(ctx, `SELECT api_key, secret FROM client_keys ORDER BY created_at, api_key LIMIT 1`).
			Scan(&apiKey, &secret)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if _, err := s.box.Open(secret, clientSecretAD(apiKey)); err != nil {
				return fmt.Errorf("client key %s: %w", apiKey, exgate.ErrWrongMasterKey)
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO store_meta (name, value) VALUES ('master_key_check', $1)
			ON CONFLICT (name) DO NOTHING`, s.box.Seal([]byte(masterKeyCheck), masterKeyCheckAD()))
		return err
	})
	if err != nil {
		return s.fail("check master key", err)
	}
	// Another instance may have stored its check value first, under
	// another key: read back the one that won.
	sealed, err = s.readMasterKeyCheck(ctx, s.write)
	if err != nil {
		return s.fail("check master key", err)
	}
	return s.openMasterKeyCheck(sealed)
}

func (s *Store) readMasterKeyCheck(ctx context.Context, db *sql.DB) ([]byte, error) {
	var sealed []byte
	err := db.QueryRowContext(ctx, `SELECT value FROM store_meta WHERE name = 'master_key_check'`).Scan(&sealed)
	return sealed, noRow(err)
}

func (s *Store) openMasterKeyCheck(sealed []byte) error {
	plain, err := s.box.Open(sealed, masterKeyCheckAD())
	if err != nil || !bytes.Equal(plain, []byte(masterKeyCheck)) {
		return s.fail("check master key", exgate.ErrWrongMasterKey)
	}
	return nil
}
