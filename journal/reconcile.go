package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
		s.ReconcileAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
	}
}

// ReconcileAll makes one pass over unfinished intents and reports how many
// are still unfinished after it.
func (s *Service) ReconcileAll(ctx context.Context) int {
	its, err := s.store.UnfinishedIntents(ctx, 500)
	if err != nil {
		if ctx.Err() == nil {
			s.log.WarnContext(ctx, "reconcile: list unfinished intents", "err", err)
		}
		return -1
	}
	left := 0
	for _, it := range its {
		if ctx.Err() != nil {
			return -1
		}
		if s.isInflight(it.ID) || !s.due(it) {
			left++
			continue
		}
		var fresh exgate.Intent
		switch it.Kind {
		case exgate.IntentOrder:
			fresh, err = reconcile(ctx, s, orderKind, it)
		case exgate.IntentWithdrawal:
			fresh, err = reconcile(ctx, s, withdrawalKind, it)
		case exgate.IntentCancel:
			fresh, err = reconcile(ctx, s, cancelKind, it)
		default:
			err = fmt.Errorf("unknown intent kind %q", it.Kind)
		}
		if err != nil {
			s.log.WarnContext(ctx, "reconcile", "id", it.ID, "kind", string(it.Kind), "err", err)
			left++
			continue
		}
		if !fresh.State.Done() {
			left++
		}
	}
	return left
}

// due spaces out queries of an accepted intent as it ages (an order that
// has been PENDING for an hour is not asked about every second); an
// unknown outcome is always due.
func (s *Service) due(it exgate.Intent) bool {
	if it.State != exgate.IntentAccepted {
		return true
	}
	age := s.now().Sub(it.CreatedAt)
	wait := min(max(age/10, s.every), time.Minute)
	return s.now().Sub(it.UpdatedAt) >= wait
}

// reconcile queries the exchange for an unfinished intent by the gateway's
// client id and records what it finds. It never submits an order or a
// withdrawal; a cancel whose order is still open is sent again by the
// order's client id, which can name no other order (lifecycle.go).
func reconcile[R, T any](ctx context.Context, s *Service, k kind[R, T], it exgate.Intent) (exgate.Intent, error) {
	var req R
	if err := json.Unmarshal(it.Request, &req); err != nil {
		return it, fmt.Errorf("decode request: %w", err)
	}
	ex, ok := s.exchanges[it.Exchange]
	if !ok {
		return it, fmt.Errorf("exchange %q is not enabled", it.Exchange)
	}
	cred, err := s.store.Credential(ctx, it.ClientAPIKey, it.CredentialName)
	if err != nil {
		return it, fmt.Errorf("credential %q: %w", it.CredentialName, err)
	}
	if cred.ID != it.CredentialID {
		return it, fmt.Errorf("credential %q was replaced since the intent was recorded", it.CredentialName)
	}
	qctx, cancel := context.WithTimeout(ctx, s.qtimeout)
	rec, err := k.query(qctx, ex, cred, req, it.ID)
	cancel()
	now := s.now()
	switch {
	case err == nil:
		rec = k.label(rec, it.ID, it.ClientRef)
		state := exgate.IntentAccepted
		if k.final(rec) {
			state = exgate.IntentFinal
		}
		body, err := json.Marshal(rec)
		if err != nil {
			return it, err
		}
		if err := s.store.UpdateIntent(ctx, it.ID, state, http.StatusOK, body); err != nil {
			return it, err
		}
		if it.State != exgate.IntentAccepted || state == exgate.IntentFinal {
			s.log.InfoContext(ctx, "reconciled", "id", it.ID, "kind", string(k.name), "state", string(state))
		}
		it.State, it.Status, it.Response, it.UpdatedAt = state, http.StatusOK, body, now
		return it, nil
	case errors.Is(err, exgate.ErrNotFound):
		if it.State == exgate.IntentAccepted || now.Sub(it.CreatedAt) < s.grace {
			// Accepted records do not vanish; and a young intent
			// may not have reached the exchange's books yet.
			return it, fmt.Errorf("not found on the exchange yet: %w", err)
		}
		se := storedError{Code: k.rejected, Detail: fmt.Sprintf(
			"the exchange has no %s with client id %s %s after it was submitted; it was never placed", k.name, it.ID, s.grace)}
		body, _ := json.Marshal(se)
		status := k.rejected.Status()
		if err := s.store.UpdateIntent(ctx, it.ID, exgate.IntentFinal, status, body); err != nil {
			return it, err
		}
		s.log.WarnContext(ctx, "reconciled as never placed", "id", it.ID, "kind", string(k.name))
		it.State, it.Status, it.Response, it.UpdatedAt = exgate.IntentFinal, status, body, now
		return it, nil
	default:
		return it, err
	}
}
