package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// Kick asks the reconciler to look at unfinished intents now.
func (s *Service) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run reconciles unfinished intents until ctx is done: first everything
// left over from before a restart, then every ReconcileEvery or when
// kicked. Several instances may run it at once; reconciling is a read of
// the exchange followed by an idempotent update.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		if n := s.ReconcileAll(ctx); n >= 0 && s.obs != nil {
			s.obs.ReconcileBacklog(n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
	}
}

// reconcileBatch is how many due intents one store read returns.
const reconcileBatch = 500

// Errors of a reconciliation that leave the intent unfinished, by cause:
// the reconciler's warnings are limited per cause.
var (
	errCredentialGone  = errors.New("its exchange key was removed or replaced")
	errNotFoundYet     = errors.New("not found on the exchange yet")
	errExchangeOff     = errors.New("its exchange is not enabled on this gateway")
	errUndecodable     = errors.New("its recorded request cannot be read")
	errUnknownKind     = errors.New("unknown intent kind")
	errOutcomeNotSaved = errors.New("the outcome read from the exchange was not recorded")
)

// ReconcileAll reads from the exchange every unfinished intent whose next
// reconciliation is due (the longest overdue first) and reports how many
// of those are still unfinished after it, or -1 when the store could not
// be read. Each intent left unfinished is scheduled again after a wait
// that doubles with each read (ReconcileEvery up to MaxBackoff), so that
// intents that cannot progress are read less and less often and never
// keep a newer one waiting: an intent due now is read in this pass or, if
// it became due during it, in the next.
func (s *Service) ReconcileAll(ctx context.Context) int {
	// The outcomes this process answered are read as it answered them:
	// they are on disk within a commit.
	_ = s.Drain(ctx)
	now := s.now()
	left := 0
	seen := map[string]bool{}
	for {
		its, err := s.store.DueIntents(ctx, now, reconcileBatch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.WarnContext(ctx, "reconcile: list due intents", "err", err)
			}
			return -1
		}
		progress := false
		for _, it := range its {
			if ctx.Err() != nil {
				return -1
			}
			if seen[it.ID] {
				continue // not rescheduled (a store error): next pass
			}
			seen[it.ID], progress = true, true
			if !s.reconcileDue(ctx, it, now) {
				left++
			}
		}
		if len(its) < reconcileBatch || !progress {
			return left
		}
	}
}

// reconcileDue reads one due intent from the exchange and, unless it is
// now final, schedules its next read. It reports whether it is final.
func (s *Service) reconcileDue(ctx context.Context, it exgate.Intent, now time.Time) bool {
	attempts := it.Attempts + 1
	next := now.Add(s.backoff(attempts))
	if s.isInflight(it.ID) {
		// This process is still submitting it (past its own deadline,
		// which the adapters' deadlines should prevent): ask later.
		s.schedule(ctx, it.ID, next, it.Attempts)
		return false
	}
	var fresh exgate.Intent
	var err error
	switch it.Kind {
	case exgate.IntentOrder:
		fresh, err = reconcile(ctx, s, orderKind, it)
	case exgate.IntentWithdrawal:
		fresh, err = reconcile(ctx, s, withdrawalKind, it)
	case exgate.IntentCancel:
		fresh, err = reconcile(ctx, s, cancelKind, it)
	case exgate.IntentTransfer:
		fresh, err = reconcile(ctx, s, transferKind, it)
	default:
		err = fmt.Errorf("%w %q", errUnknownKind, it.Kind)
	}
	if s.obs != nil {
		outcome := "unfinished"
		switch {
		case err != nil:
			outcome = "error"
		case fresh.State.Done():
			outcome = "final"
		}
		s.obs.Reconciled(string(it.Kind), outcome)
		if err == nil && fresh.State != it.State {
			s.noteState(it.Kind, fresh.State)
		}
	}
	if err == nil && fresh.State.Done() {
		return true
	}
	if err != nil {
		s.warns.warn(ctx, cause(err), "reconcile: still unfinished",
			"id", it.ID, "kind", string(it.Kind), "exchange", it.Exchange, "attempts", attempts,
			"next", next.UTC().Format(time.RFC3339), "err", err)
	}
	s.schedule(ctx, it.ID, next, attempts)
	return false
}

// backoff is the wait after the n-th read (n >= 1) of an intent that left
// it unfinished: ReconcileEvery doubled n-1 times, at most MaxBackoff.
func (s *Service) backoff(n int) time.Duration {
	d := s.every
	for i := 1; i < n && d < s.maxWait; i++ {
		d *= 2
	}
	return min(d, s.maxWait)
}

// cause names the kind of a reconciliation error, for limiting warnings.
func cause(err error) string {
	for _, e := range []error{errCredentialGone, errNotFoundYet, errExchangeOff, errUndecodable, errUnknownKind, errOutcomeNotSaved} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return "the exchange could not be read"
}

// warnLimiter logs a warning of one cause at most once per period, saying
// how many of that cause it left out since the last: thousands of intents
// stuck for one reason make one line a period, not thousands.
type warnLimiter struct {
	log   *slog.Logger
	now   func() time.Time
	every time.Duration

	mu     sync.Mutex
	causes map[string]*warnState
}

type warnState struct {
	last    time.Time
	skipped int
}

func newWarnLimiter(log *slog.Logger, now func() time.Time, every time.Duration) *warnLimiter {
	return &warnLimiter{log: log, now: now, every: every, causes: map[string]*warnState{}}
}

func (w *warnLimiter) warn(ctx context.Context, cause, msg string, args ...any) {
	now := w.now()
	w.mu.Lock()
	st, ok := w.causes[cause]
	if !ok {
		st = &warnState{}
		w.causes[cause] = st
	}
	if ok && now.Sub(st.last) < w.every {
		st.skipped++
		w.mu.Unlock()
		return
	}
	skipped := st.skipped
	st.last, st.skipped = now, 0
	w.mu.Unlock()
	w.log.WarnContext(ctx, msg, append([]any{"cause", cause, "similar_warnings_left_out", skipped}, args...)...)
}

// reconcile queries the exchange for an unfinished intent by the gateway's
// client id and records what it finds. It never submits an order or a
// withdrawal; a cancel whose order is still open is sent again by the
// order's client id, which can name no other order (lifecycle.go).
func reconcile[R, T any](ctx context.Context, s *Service, k kind[R, T], it exgate.Intent) (exgate.Intent, error) {
	var req R
	if err := json.Unmarshal(it.Request, &req); err != nil {
		return it, fmt.Errorf("%w: %w", errUndecodable, err)
	}
	ex, ok := s.exchanges[it.Exchange]
	if !ok {
		return it, fmt.Errorf("%w: %q", errExchangeOff, it.Exchange)
	}
	cred, err := s.store.Credential(ctx, it.ClientAPIKey, it.CredentialName)
	if err == nil && cred.ID != it.CredentialID {
		err = exgate.ErrNotFound // replaced: possibly another account
	}
	if errors.Is(err, exgate.ErrNotFound) {
		return orphaned(ctx, s, k, it)
	}
	if err != nil {
		return it, fmt.Errorf("credential %q: %w", it.CredentialName, err)
	}
	qctx, cancel := context.WithTimeout(ctx, s.qtimeout)
	var rec T
	if k.queryIntent != nil {
		rec, err = k.queryIntent(qctx, ex, cred, req, it)
	} else {
		rec, err = k.query(qctx, ex, cred, req, it.ID)
	}
	cancel()
	now := s.now()
	switch {
	case err == nil:
		return recordRead(ctx, s, k, it, rec, now, "reconciled")
	case errors.Is(err, exgate.ErrNotFound):
		if it.State == exgate.IntentAccepted || now.Sub(it.CreatedAt) < s.grace {
			// Accepted records do not vanish; and a young intent
			// may not have reached the exchange's books yet.
			return it, fmt.Errorf("%w: %w", errNotFoundYet, err)
		}
		se := storedError{Code: k.rejected, Detail: fmt.Sprintf(
			"the exchange has no %s with client id %s %s after it was submitted; it was never placed", k.name, it.ID, s.grace)}
		body, _ := json.Marshal(se)
		if err := s.store.UpdateIntent(ctx, it.ID, exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerError, Response: body}); err != nil {
			return it, err
		}
		s.log.WarnContext(ctx, "reconciled as never placed", "id", it.ID, "kind", string(k.name))
		it.State, it.Answer, it.Response, it.UpdatedAt = exgate.IntentFinal, exgate.AnswerError, body, now
		return it, nil
	default:
		return it, err
	}
}

// recordRead records rec, the intent's record as read from the exchange
// (by the reconciler, or pushed by a stream), as its outcome: accepted
// while it is open, final once it is. how names the reader in the log.
func recordRead[R, T any](ctx context.Context, s *Service, k kind[R, T], it exgate.Intent, rec T, now time.Time, how string) (exgate.Intent, error) {
	rec = k.label(rec, it.ID, it.ClientRef)
	state := exgate.IntentAccepted
	if k.final(rec) {
		state = exgate.IntentFinal
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return it, err
	}
	if err := s.store.UpdateIntent(ctx, it.ID, exgate.IntentOutcome{State: state, Answer: exgate.AnswerRecord, Response: body}); err != nil {
		return it, err
	}
	if it.State != exgate.IntentAccepted || state == exgate.IntentFinal {
		s.log.InfoContext(ctx, how, "id", it.ID, "kind", string(k.name), "state", string(state))
	}
	it.State, it.Answer, it.Response, it.UpdatedAt = state, exgate.AnswerRecord, body, now
	return it, nil
}

// orphaned handles an intent whose exchange key was removed or replaced:
// nothing can be read about it any more. Once it has gone OrphanAfter
// without a reading from the exchange it is ended with EXCHANGE_ERROR
// saying so; until then (the key may be restored) it stays unfinished.
func orphaned[R, T any](ctx context.Context, s *Service, k kind[R, T], it exgate.Intent) (exgate.Intent, error) {
	now := s.now()
	if now.Sub(it.UpdatedAt) < s.orphan {
		return it, fmt.Errorf("%w: %q", errCredentialGone, it.CredentialName)
	}
	se := storedError{Code: exgate.CodeExchangeError, Detail: fmt.Sprintf(
		"the exchange key %q was removed or replaced before the gateway could read the outcome of this %s; "+
			"after %s without a reading the gateway stopped asking: look for client id %s in the exchange account's own records",
		it.CredentialName, k.name, s.orphan, it.ID), OutcomeUnknown: true}
	body, err := json.Marshal(se)
	if err != nil {
		return it, err
	}
	if err := s.store.UpdateIntent(ctx, it.ID, exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerError, Response: body}); err != nil {
		return it, fmt.Errorf("%w: %w", errOutcomeNotSaved, err)
	}
	s.log.WarnContext(ctx, "reconcile: ended, its exchange key is gone", "id", it.ID, "kind", string(k.name), "credential", it.CredentialName)
	it.State, it.Answer, it.Response, it.UpdatedAt = exgate.IntentFinal, exgate.AnswerError, body, now
	return it, nil
}
