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

// keyFigures is a client key's risk_keys row: its open orders and the
// figures of one UTC day.
type keyFigures struct {
	open                 int64
	day                  string
	notional, withdrawal decimal.Decimal
	// notionalText and withdrawalText are the two figures as the row
	// holds them, which a conditional write compares (updateFigures).
	notionalText, withdrawalText string
}

// lockRiskKey locks the key's risk_keys row until the transaction ends
// and returns it, creating it first when the key has none. The row
// exists from the key's first reservation on, so the usual cost is one
// read: a SELECT in SQLite's write transaction (which holds the only
// write lock) or a SELECT ... FOR UPDATE on PostgreSQL (Dialect.LockRow).
// An upsert that locked by writing the row (as this did before) wrote
// the key's row twice per order.
func (s *Store) lockRiskKey(ctx context.Context, tx *sql.Tx, apiKey string) (keyFigures, error) {
	f, err := s.readRiskKey(ctx, tx, apiKey)
	if errors.Is(err, sql.ErrNoRows) {
		// Another transaction may create it meanwhile: then this INSERT
		// waits for it (PostgreSQL) and does nothing, and the SELECT
		// below reads and locks that row.
		if _, err := s.txExec(ctx, tx, createRiskKeySQL, apiKey); err != nil {
			return f, fmt.Errorf("lock risk key: %w", err)
		}
		f, err = s.readRiskKey(ctx, tx, apiKey)
	}
	if err != nil {
		return f, fmt.Errorf("lock risk key: %w", err)
	}
	return f, nil
}

// readRiskKey reads and locks the key's risk_keys row; sql.ErrNoRows
// when it has none.
func (s *Store) readRiskKey(ctx context.Context, tx *sql.Tx, apiKey string) (keyFigures, error) {
	var f keyFigures
	// On SQLite LockRow is empty and the statement is lockRiskKeySQL
	// itself, kept prepared (stmts.go).
	if err := s.txQueryRow(ctx, tx, lockRiskKeySQL+s.d.LockRow, apiKey).Scan(&f.open, &f.day, &f.notionalText, &f.withdrawalText); err != nil {
		return f, err
	}
	var err error
	if f.notional, err = decimal.NewFromString(f.notionalText); err == nil {
		f.withdrawal, err = decimal.NewFromString(f.withdrawalText)
	}
	if err != nil {
		return f, fmt.Errorf("risk figures of %s: %w", apiKey, err)
	}
	return f, nil
}

// The statements of the order path, kept prepared where the dialect keeps
// statements (stmts.go).
const (
	lockRiskKeySQL   = `SELECT open_orders, day, notional, withdrawal FROM risk_keys WHERE api_key = $1`
	createRiskKeySQL = `INSERT INTO risk_keys (api_key, open_orders, day, notional, withdrawal) VALUES ($1, 0, '', '0', '0')
		ON CONFLICT (api_key) DO NOTHING`
	writeFiguresSQL = `UPDATE risk_keys SET open_orders = $1, day = $2, notional = $3, withdrawal = $4 WHERE api_key = $5`
	swapFiguresSQL  = `UPDATE risk_keys SET open_orders = $1, day = $2, notional = $3, withdrawal = $4
		WHERE api_key = $5 AND open_orders = $6 AND day = $7 AND notional = $8 AND withdrawal = $9`
	updateIntentRiskSQL = `UPDATE intents SET risk = $1 WHERE id = $2`
)

// updateFigures applies change to the key's figures and writes them back,
// in the transaction tx. When this store knows the row as it last wrote
// or read it (Store.figures), change works on that and the write is one
// conditional UPDATE that takes effect only if the row still holds it:
// one statement per reservation instead of a locking read and a write.
// When the row holds something else (another instance, or a transaction
// that did not commit, wrote it since), or change refuses on figures that
// may be stale, the row is read and locked and change runs again on what
// it holds. change must work only on the figures it is given.
func (s *Store) updateFigures(ctx context.Context, tx *sql.Tx, apiKey string, change func(*keyFigures) error) (keyFigures, error) {
	if v, ok := s.figures.Load(apiKey); ok {
		known := v.(keyFigures)
		f := known
		if change(&f) == nil {
			f.notionalText, f.withdrawalText = f.notional.String(), f.withdrawal.String()
			res, err := s.txExec(ctx, tx, swapFiguresSQL, f.open, f.day, f.notionalText, f.withdrawalText, apiKey,
				known.open, known.day, known.notionalText, known.withdrawalText)
			if err != nil {
				s.figures.Delete(apiKey)
				return f, fmt.Errorf("risk figures: %w", err)
			}
			if n, err := res.RowsAffected(); err == nil && n == 1 {
				s.figures.Store(apiKey, f)
				return f, nil
			}
		}
		s.figures.Delete(apiKey)
	}
	known, err := s.lockRiskKey(ctx, tx, apiKey)
	if err != nil {
		return known, err
	}
	s.figures.Store(apiKey, known)
	f := known
	if err := change(&f); err != nil {
		return f, err
	}
	f.notionalText, f.withdrawalText = f.notional.String(), f.withdrawal.String()
	if _, err := s.txExec(ctx, tx, writeFiguresSQL, f.open, f.day, f.notionalText, f.withdrawalText, apiKey); err != nil {
		s.figures.Delete(apiKey)
		return f, fmt.Errorf("risk figures: %w", err)
	}
	s.figures.Store(apiKey, f)
	return f, nil
}

// storedReservation is an intent's reservation as its risk column holds
// it.
type storedReservation struct {
	Day      string          `json:"day"`
	Charge   decimal.Decimal `json:"charge"`
	Quote    string          `json:"quote,omitempty"`
	QuoteUSD decimal.Decimal `json:"quoteUsd"`
	Price    decimal.Decimal `json:"price"`
	Open     bool            `json:"open,omitempty"`
}

func (r storedReservation) reservation() exgate.RiskReservation {
	return exgate.RiskReservation{Day: r.Day, Notional: r.Charge, Quote: r.Quote, QuoteUSD: r.QuoteUSD, Price: r.Price, Open: r.Open}
}

// storedOf is reservation r as the risk column holds it.
func storedOf(r exgate.RiskReservation) storedReservation {
	return storedReservation{Day: r.Day, Charge: r.Notional, Quote: r.Quote, QuoteUSD: r.QuoteUSD, Price: r.Price, Open: r.Open}
}

// storedRisk is the risk column of an intent with reservation r (nil
// without one).
func storedRisk(r *exgate.RiskReservation) (*string, error) {
	if r == nil {
		return nil, nil
	}
	b, err := json.Marshal(storedOf(*r))
	if err != nil {
		return nil, fmt.Errorf("risk reservation: %w", err)
	}
	text := string(b)
	return &text, nil
}

// reserveRisk checks and makes the reservation of an intent inside the
// transaction that records it, after the intent's INSERT (which wrote the
// reservation in its risk column): one conditional write of the key's row
// as this store knows it, or a locking read and a write (updateFigures).
// A refusal fails the transaction, intent and all.
func (s *Store) reserveRisk(ctx context.Context, tx *sql.Tx, in exgate.Intent) error {
	r := in.Risk
	f, err := s.updateFigures(ctx, tx, in.ClientAPIKey, func(f *keyFigures) error {
		if r.Day > f.day {
			// A new UTC day starts the daily figures afresh.
			f.day, f.notional, f.withdrawal = r.Day, decimal.Zero, decimal.Zero
		}
		if err := r.Check(in.Kind, exgate.RiskUsage{Day: f.day, DailyNotional: f.notional, DailyWithdrawal: f.withdrawal, OpenOrders: f.open}); err != nil {
			return err
		}
		if in.Kind == exgate.IntentWithdrawal {
			f.withdrawal = f.withdrawal.Add(r.Notional)
		} else {
			f.notional = f.notional.Add(r.Notional)
		}
		if r.Open {
			f.open++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if r.Day < f.day {
		// An instance whose clock is behind dated the reservation before
		// the key's day: it counts to the key's day, and says so.
		moved := *r
		moved.Day = f.day
		risk, err := storedRisk(&moved)
		if err != nil {
			return err
		}
		if _, err := s.txExec(ctx, tx, updateIntentRiskSQL, *risk, in.ID); err != nil {
			return fmt.Errorf("risk reservation: %w", err)
		}
	}
	return nil
}

// settlementHint is an outcome's settlement worked out by its caller
// (exgate.IntentOutcome.Risk) and the risk column of the reservation it
// was worked out from.
type settlementHint struct {
	stored string
	s      *exgate.RiskSettlement
}

// settleRisk settles an intent's reservation (its risk column, as the
// UPDATE that recorded the answer returned it) for that answer. An answer
// that changes nothing (an order still resting as it was) costs no
// statement. With a hint whose reservation is still the stored one, the
// settlement is the hint's: neither the reservation nor the answer is
// decoded in the write transaction (the journal's own outcomes, nearly
// every one).
func (s *Store) settleRisk(ctx context.Context, tx *sql.Tx, id, apiKey string, kind exgate.IntentKind, stored *string, o exgate.IntentOutcome, hint *settlementHint) error {
	if stored == nil {
		return nil
	}
	var (
		sr                storedReservation
		r                 exgate.RiskReservation
		charge            decimal.Decimal
		open, known, used bool
	)
	if hint != nil && hint.stored == *stored {
		r, charge, open, known, used = hint.s.Reserved, hint.s.Charge, hint.s.Open, hint.s.Known, true
	} else {
		if err := json.Unmarshal([]byte(*stored), &sr); err != nil {
			return fmt.Errorf("risk reservation of %s: %w", id, err)
		}
		r = sr.reservation()
		charge, open, known = exgate.SettleRisk(kind, r, o.State, o.Answer, o.Response)
	}
	if !known || (charge.Equal(r.Notional) && open == r.Open) {
		return nil
	}
	if used {
		sr = storedOf(r)
	}
	// The intent's row is locked by the UPDATE that returned its
	// reservation, so no other settlement of it runs meanwhile; the key's
	// row is written next, as a reservation writes it.
	_, err := s.updateFigures(ctx, tx, apiKey, func(f *keyFigures) error {
		if sr.Day == f.day {
			// A past day's figures are gone; only its open orders still count.
			delta := charge.Sub(r.Notional)
			if kind == exgate.IntentWithdrawal {
				f.withdrawal = f.withdrawal.Add(delta)
			} else {
				f.notional = f.notional.Add(delta)
			}
		}
		switch {
		case r.Open && !open:
			f.open--
		case !r.Open && open:
			f.open++
		}
		return nil
	})
	if err != nil {
		return err
	}
	sr.Charge, sr.Open = charge, open
	b, err := json.Marshal(sr)
	if err != nil {
		return err
	}
	if _, err := s.txExec(ctx, tx, updateIntentRiskSQL, string(b), id); err != nil {
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
	var rowDay, n, w string
	err := s.read.QueryRowContext(ctx, `SELECT open_orders, day, notional, withdrawal FROM risk_keys WHERE api_key = $1`, apiKey).
		Scan(&u.OpenOrders, &rowDay, &n, &w)
	if errors.Is(err, sql.ErrNoRows) {
		return u, nil
	}
	if err != nil {
		return u, s.fail("risk usage", err)
	}
	if rowDay == day {
		if u.DailyNotional, err = decimal.NewFromString(n); err == nil {
			u.DailyWithdrawal, err = decimal.NewFromString(w)
		}
		if err != nil {
			return u, s.fail("risk usage of "+apiKey, err)
		}
	}
	return u, nil
}
