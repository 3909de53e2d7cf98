package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// The risk controls (docs/risk.md). A reservation rides on CreateIntent
// and its settlement on UpdateIntent, in their transactions: nothing is
// recorded without its reservation, and no answer without its settlement.
// Every change of a key's figures first locks the key's risk_keys row,
// so that the figures read, checked and written by one transaction are
// the figures of the last one, whichever instance ran it.

// The statements of the reservations and settlements, run with the
// journal's writes (kept prepared on SQLite: stmts.go).
const (
	insertRiskKeySQL   = `INSERT INTO risk_keys (api_key, open_orders) VALUES ($1, 0) ON CONFLICT DO NOTHING`
	selectRiskKeySQL   = `SELECT open_orders FROM risk_keys WHERE api_key = $1`
	selectRiskUsageSQL = `SELECT notional, withdrawal FROM risk_usage WHERE api_key = $1 AND day = $2`
	upsertRiskUsageSQL = `INSERT INTO risk_usage (api_key, day, notional, withdrawal) VALUES ($1, $2, $3, $4)
			ON CONFLICT (api_key, day) DO UPDATE SET notional = excluded.notional, withdrawal = excluded.withdrawal`
	addRiskOpenSQL       = `UPDATE risk_keys SET open_orders = open_orders + $1 WHERE api_key = $2`
	insertReservationSQL = `INSERT INTO risk_reservations
		(intent_id, api_key, day, kind, charge, quote, quote_usd, price, is_open) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
	selectReservationSQL = `SELECT day, kind, charge, quote, quote_usd, price, is_open FROM risk_reservations WHERE intent_id = $1`
	updateReservationSQL = `UPDATE risk_reservations SET charge = $1, is_open = $2 WHERE intent_id = $3`
)

// lockRiskKey creates the key's risk_keys row if needed and locks it,
// returning its open orders.
func (s *Store) lockRiskKey(ctx context.Context, tx *sql.Tx, apiKey string) (int64, error) {
	if _, err := s.txExec(ctx, tx, insertRiskKeySQL, apiKey); err != nil {
		return 0, fmt.Errorf("risk key: %w", err)
	}
	var open int64
	if err := s.txQueryRow(ctx, tx, selectRiskKeySQL+s.d.LockRow, apiKey).Scan(&open); err != nil {
		return 0, fmt.Errorf("lock risk key: %w", err)
	}
	return open, nil
}

// usageIn reads a key's daily figures of day inside tx.
func usageIn(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}, apiKey, day string) (notional, withdrawal decimal.Decimal, err error) {
	var n, w string
	err = q.QueryRowContext(ctx, selectRiskUsageSQL, apiKey, day).Scan(&n, &w)
	if errors.Is(err, sql.ErrNoRows) {
		return decimal.Zero, decimal.Zero, nil
	}
	if err != nil {
		return decimal.Zero, decimal.Zero, fmt.Errorf("risk usage: %w", err)
	}
	if notional, err = decimal.NewFromString(n); err != nil {
		return notional, withdrawal, fmt.Errorf("risk usage notional %q: %w", n, err)
	}
	if withdrawal, err = decimal.NewFromString(w); err != nil {
		return notional, withdrawal, fmt.Errorf("risk usage withdrawal %q: %w", w, err)
	}
	return notional, withdrawal, nil
}

// addUsage adds to a key's figures of day and open orders.
func (s *Store) addUsage(ctx context.Context, tx *sql.Tx, apiKey, day string, notional, withdrawal decimal.Decimal, open int64) error {
	if !notional.IsZero() || !withdrawal.IsZero() {
		n, w, err := usageIn(ctx, s.inTxStmts(tx), apiKey, day)
		if err != nil {
			return err
		}
		if _, err := s.txExec(ctx, tx, upsertRiskUsageSQL,
			apiKey, day, n.Add(notional).String(), w.Add(withdrawal).String()); err != nil {
			return fmt.Errorf("risk usage: %w", err)
		}
	}
	if open != 0 {
		if _, err := s.txExec(ctx, tx, addRiskOpenSQL, open, apiKey); err != nil {
			return fmt.Errorf("risk open orders: %w", err)
		}
	}
	return nil
}

// reserveRisk checks and records the reservation of an intent inside the
// transaction that records it.
func (s *Store) reserveRisk(ctx context.Context, tx *sql.Tx, in exgate.Intent) error {
	r := in.Risk
	open, err := s.lockRiskKey(ctx, tx, in.ClientAPIKey)
	if err != nil {
		return err
	}
	n, w, err := usageIn(ctx, s.inTxStmts(tx), in.ClientAPIKey, r.Day)
	if err != nil {
		return err
	}
	if err := r.Check(in.Kind, exgate.RiskUsage{Day: r.Day, DailyNotional: n, DailyWithdrawal: w, OpenOrders: open}); err != nil {
		return err
	}
	var dn, dw decimal.Decimal
	var dopen int64
	if in.Kind == exgate.IntentWithdrawal {
		dw = r.Notional
	} else {
		dn = r.Notional
	}
	if r.Open {
		dopen = 1
	}
	if err := s.addUsage(ctx, tx, in.ClientAPIKey, r.Day, dn, dw, dopen); err != nil {
		return err
	}
	if _, err := s.txExec(ctx, tx, insertReservationSQL,
		in.ID, in.ClientAPIKey, r.Day, string(in.Kind), r.Notional.String(), r.Quote, r.QuoteUSD.String(), r.Price.String(), boolInt(r.Open)); err != nil {
		return fmt.Errorf("risk reservation: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reservationKeySQL finds whether an intent has a reservation: run with
// every outcome the journal records.
const reservationKeySQL = `SELECT api_key FROM risk_reservations WHERE intent_id = $1`

// settleRisk settles the reservation of an intent, if it has one, for the
// answer UpdateIntent records.
func (s *Store) settleRisk(ctx context.Context, tx *sql.Tx, id string, state exgate.IntentState, answer exgate.IntentAnswer, response []byte) error {
	var apiKey string
	err := s.txQueryRow(ctx, tx, reservationKeySQL, id).Scan(&apiKey)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("risk reservation: %w", err)
	}
	if _, err := s.lockRiskKey(ctx, tx, apiKey); err != nil {
		return err
	}
	var (
		r                        exgate.RiskReservation
		kind, charge, usd, price string
		open                     int
	)
	if err := s.txQueryRow(ctx, tx, selectReservationSQL, id).
		Scan(&r.Day, &kind, &charge, &r.Quote, &usd, &price, &open); err != nil {
		return fmt.Errorf("risk reservation: %w", err)
	}
	if r.Notional, err = decimal.NewFromString(charge); err == nil {
		if r.QuoteUSD, err = decimal.NewFromString(usd); err == nil {
			r.Price, err = decimal.NewFromString(price)
		}
	}
	if err != nil {
		return fmt.Errorf("risk reservation %s: %w", id, err)
	}
	r.Open = open == 1
	k := exgate.IntentKind(kind)
	newCharge, newOpen, known := exgate.SettleRisk(k, r, state, answer, response)
	if !known || (newCharge.Equal(r.Notional) && newOpen == r.Open) {
		return nil
	}
	delta := newCharge.Sub(r.Notional)
	var dn, dw decimal.Decimal
	if k == exgate.IntentWithdrawal {
		dw = delta
	} else {
		dn = delta
	}
	var dopen int64
	switch {
	case r.Open && !newOpen:
		dopen = -1
	case !r.Open && newOpen:
		dopen = 1
	}
	if err := s.addUsage(ctx, tx, apiKey, r.Day, dn, dw, dopen); err != nil {
		return err
	}
	if _, err := s.txExec(ctx, tx, updateReservationSQL,
		newCharge.String(), boolInt(newOpen), id); err != nil {
		return fmt.Errorf("risk reservation: %w", err)
	}
	return nil
}

// SetRiskLimits implements exgate.RiskStore.
func (s *Store) SetRiskLimits(ctx context.Context, apiKey string, set exgate.RiskLimits, clear []string) (exgate.RiskLimits, error) {
	var out exgate.RiskLimits
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM client_keys WHERE api_key = $1`, apiKey).Scan(&one); err != nil {
			return noRow(err)
		}
		var cur exgate.RiskLimits
		var text string
		err := tx.QueryRowContext(ctx, `SELECT limits FROM risk_limits WHERE api_key = $1`+s.d.LockRow, apiKey).Scan(&text)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal([]byte(text), &cur); err != nil {
				return fmt.Errorf("stored limits: %w", err)
			}
		}
		if out, err = cur.Merge(set, clear); err != nil {
			return err
		}
		if out.Empty() {
			_, err = tx.ExecContext(ctx, `DELETE FROM risk_limits WHERE api_key = $1`, apiKey)
			return err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO risk_limits (api_key, limits, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (api_key) DO UPDATE SET limits = excluded.limits, updated_at = excluded.updated_at`,
			apiKey, string(b), unixNano(s.now()))
		return err
	})
	if err != nil {
		return exgate.RiskLimits{}, s.fail("set risk limits", err)
	}
	return out, nil
}

// AllRiskLimits implements exgate.RiskStore.
func (s *Store) AllRiskLimits(ctx context.Context) (map[string]exgate.RiskLimits, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT api_key, limits FROM risk_limits`)
	if err != nil {
		return nil, s.fail("risk limits", err)
	}
	defer rows.Close()
	out := map[string]exgate.RiskLimits{}
	for rows.Next() {
		var key, text string
		if err := rows.Scan(&key, &text); err != nil {
			return nil, s.fail("risk limits", err)
		}
		var l exgate.RiskLimits
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return nil, s.fail("risk limits of "+key, err)
		}
		out[key] = l
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("risk limits", err)
	}
	return out, nil
}

// HaltTrading implements exgate.RiskStore.
func (s *Store) HaltTrading(ctx context.Context, h exgate.RiskHalt) error {
	if h.CreatedAt.IsZero() {
		h.CreatedAt = s.now()
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if h.APIKey != exgate.RiskHaltAll {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM client_keys WHERE api_key = $1`, h.APIKey).Scan(&one); err != nil {
				return noRow(err)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO risk_halts (api_key, reason, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (api_key) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at`,
			h.APIKey, h.Reason, unixNano(h.CreatedAt))
		return err
	})
	if err != nil {
		return s.fail("halt trading", err)
	}
	return nil
}

// ResumeTrading implements exgate.RiskStore.
func (s *Store) ResumeTrading(ctx context.Context, apiKey string) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var res sql.Result
		var err error
		if apiKey == exgate.RiskHaltAll {
			res, err = tx.ExecContext(ctx, `DELETE FROM risk_halts`)
		} else {
			res, err = tx.ExecContext(ctx, `DELETE FROM risk_halts WHERE api_key = $1`, apiKey)
		}
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, s.fail("resume trading", err)
	}
	return int(n), nil
}

// RiskHalts implements exgate.RiskStore.
func (s *Store) RiskHalts(ctx context.Context) ([]exgate.RiskHalt, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT api_key, reason, created_at FROM risk_halts ORDER BY created_at, api_key`)
	if err != nil {
		return nil, s.fail("risk halts", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (exgate.RiskHalt, error) {
		var h exgate.RiskHalt
		var at int64
		err := rows.Scan(&h.APIKey, &h.Reason, &at)
		h.CreatedAt = fromUnixNano(at)
		return h, err
	})
	if err != nil {
		return nil, s.fail("risk halts", err)
	}
	return out, nil
}

// RiskUsage implements exgate.RiskStore.
func (s *Store) RiskUsage(ctx context.Context, apiKey, day string) (exgate.RiskUsage, error) {
	u := exgate.RiskUsage{Day: day}
	var err error
	if u.DailyNotional, u.DailyWithdrawal, err = usageIn(ctx, s.read, apiKey, day); err != nil {
		return u, s.fail("risk usage", err)
	}
	err = s.read.QueryRowContext(ctx, `SELECT open_orders FROM risk_keys WHERE api_key = $1`, apiKey).Scan(&u.OpenOrders)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return u, s.fail("risk usage", err)
	}
	return u, nil
}
