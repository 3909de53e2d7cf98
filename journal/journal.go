// Package journal makes orders and withdrawals safe to retry and safe to
// crash (docs/contract.md section 5). Every intent is written to the store before
// the exchange is called and its outcome after; a client id reused by the
// same client returns the first answer; an ambiguous outcome is never sent
// again but reconciled by querying the exchange by the gateway's client id.
package journal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// Store is the journal's view of the store.
type Store interface {
	CreateIntent(ctx context.Context, it exgate.Intent) error
	Intent(ctx context.Context, id string) (exgate.Intent, error)
	IntentByClientRef(ctx context.Context, apiKey string, kind exgate.IntentKind, ref string) (exgate.Intent, error)
	UpdateIntent(ctx context.Context, id string, o exgate.IntentOutcome) error
	// RecordOutcome is UpdateIntent for an outcome already answered:
	// the store may batch it with its next write.
	RecordOutcome(ctx context.Context, id string, o exgate.IntentOutcome) error
	// DueIntents returns unfinished intents whose NextDue is at or
	// before now, the longest overdue first.
	DueIntents(ctx context.Context, now time.Time, limit int) ([]exgate.Intent, error)
	// ScheduleIntent sets an intent's NextDue and Attempts only.
	ScheduleIntent(ctx context.Context, id string, next time.Time, attempts int) error
	Credential(ctx context.Context, apiKey, name string) (exgate.Credential, error)
}

// Options configures a Service. Store and Exchanges are required.
type Options struct {
	Store     Store
	Exchanges map[string]exgate.Exchange
	Logger    *slog.Logger
	Now       func() time.Time
	// CallTimeout bounds one submission to an exchange; the call is not
	// cancelled when the client goes away. Default 15 s.
	CallTimeout time.Duration
	// QueryTimeout bounds one reconciliation read (which may page
	// through the exchange's order history). Default 20 s.
	QueryTimeout time.Duration
	// NotFoundGrace is how long an intent whose outcome is unknown may be
	// missing on the exchange before it is recorded as never placed.
	// It must exceed CallTimeout. Default 2 min.
	NotFoundGrace time.Duration
	// ReconcileEvery is the reconciler's polling period, and the first
	// wait of an intent's backoff. Default 1 s.
	ReconcileEvery time.Duration
	// MaxBackoff caps the wait between two reconciliation reads of one
	// intent, which doubles from ReconcileEvery with each read that
	// leaves it unfinished. Default 1 min.
	MaxBackoff time.Duration
	// OrphanAfter is how long an intent whose exchange key was removed
	// (or replaced by another under its name) may go without a reading
	// from the exchange before it is ended with EXCHANGE_ERROR. Default
	// 24 h.
	OrphanAfter time.Duration
	// WaitPoll is how often a duplicate request polls the store for the
	// outcome of an intent another instance is sending. Default 100 ms.
	WaitPoll time.Duration
	// WarnEvery bounds the reconciler's repeated warnings: one per cause
	// (exchange key removed, not found yet, query failed...) per period,
	// with the number left out. Default 1 min.
	WarnEvery time.Duration
	// Metrics, when set, hears of intents' states and reconciliations.
	Metrics Observer
}

// Observer is what the journal reports to metrics; labels are kinds,
// states and outcomes, never ids.
type Observer interface {
	IntentState(kind, state string)
	Reconciled(kind, outcome string)
	ReconcileBacklog(n int)
}

// noteState reports an intent entering state.
func (s *Service) noteState(kind exgate.IntentKind, state exgate.IntentState) {
	if s.obs != nil {
		s.obs.IntentState(string(kind), string(state))
	}
}

// ownerMargin is how long after its call deadline the instance sending an
// intent still owns it: the time to record the outcome. Kept short: when
// the sender has died, a retry on another instance waits this long before
// reading the outcome from the exchange.
const ownerMargin = 2 * time.Second

// Service places orders and withdrawals through the journal.
type Service struct {
	store     Store
	exchanges map[string]exgate.Exchange
	log       *slog.Logger
	now       func() time.Time
	timeout   time.Duration
	qtimeout  time.Duration
	grace     time.Duration
	every     time.Duration
	maxWait   time.Duration
	orphan    time.Duration
	poll      time.Duration
	kick      chan struct{}
	warns     *warnLimiter
	obs       Observer

	// inflight holds each intent this process is submitting, until its
	// outcome is on disk: the reconciler and the streams keep away from
	// them, a duplicate request waits for its answer, and a read gets the
	// answer before it is on disk (flight).
	mu       sync.Mutex
	inflight map[string]*flight
}

// flight is an intent this process is submitting.
type flight struct {
	// answered is closed once outcome is set; saved once the outcome is
	// on disk, or failed to be.
	answered, saved chan struct{}
	// outcome is what the submission answered, as the stored intent
	// will read once it is on disk.
	outcome exgate.Intent
}

// New builds a Service.
func New(opts Options) *Service {
	s := &Service{
		store:     opts.Store,
		exchanges: opts.Exchanges,
		log:       opts.Logger,
		now:       opts.Now,
		timeout:   opts.CallTimeout,
		qtimeout:  opts.QueryTimeout,
		grace:     opts.NotFoundGrace,
		every:     opts.ReconcileEvery,
		maxWait:   opts.MaxBackoff,
		orphan:    opts.OrphanAfter,
		poll:      opts.WaitPoll,
		kick:      make(chan struct{}, 1),
		obs:       opts.Metrics,
		inflight:  map[string]*flight{},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.timeout <= 0 {
		s.timeout = 15 * time.Second
	}
	if s.qtimeout <= 0 {
		s.qtimeout = 20 * time.Second
	}
	if s.grace <= 0 {
		s.grace = 2 * time.Minute
	}
	if s.every <= 0 {
		s.every = time.Second
	}
	if s.maxWait <= 0 {
		s.maxWait = time.Minute
	}
	if s.orphan <= 0 {
		s.orphan = 24 * time.Hour
	}
	if s.poll <= 0 {
		s.poll = 100 * time.Millisecond
	}
	warnEvery := opts.WarnEvery
	if warnEvery <= 0 {
		warnEvery = time.Minute
	}
	s.warns = newWarnLimiter(s.log, s.now, warnEvery)
	return s
}

// kind holds what differs between orders and withdrawals.
type kind[R, T any] struct {
	name   exgate.IntentKind
	prefix byte
	// rejected is the code recorded for an intent the exchange never saw.
	rejected exgate.Code
	setID    func(r *R, id string)
	submit   func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r R) (T, error)
	query    func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r R, id string) (T, error)
	// pending is the record answered while the outcome is unknown.
	pending func(r R, id string, at time.Time, exchange string) T
	// label sets the gateway's id and the client's id on a record.
	label func(t T, id, ref string) T
	final func(t T) bool
	// refused, when set, is how a lookup answers an intent the exchange
	// refused or never saw: as a record (an Order REJECTED with its
	// reason) rather than as the error.
	refused func(r R, id string, at time.Time, exchange string, reason exgate.Reason) T
	// queryIntent, when set, replaces query: the reconciler reads the
	// record knowing the whole intent (when it was recorded, what was
	// last answered), for an exchange that has no client id to look it
	// up by (transfer.go).
	queryIntent func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r R, it exgate.Intent) (T, error)
	// idAsRef makes the gateway id the client's id when the client gives
	// none, so that every intent of the kind has one (transfers:
	// docs/contract.md 2.10).
	idAsRef bool
	// exclusive, when set, is the key (exgate.Intent.Exclusive) no two
	// intents of the kind may hold while their outcome is open;
	// inFlight is the refusal of a request whose key is held.
	exclusive func(cred exgate.Credential, r R) string
	inFlight  func(r R) error
	// check, when set, refuses malformed input before anything is
	// recorded.
	check func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r R) error
}

// orderKind journals market and limit orders (orderIntent, lifecycle.go).
var orderKind = kind[orderIntent, exgate.Order]{
	name:     exgate.IntentOrder,
	prefix:   'o',
	rejected: exgate.CodeOrderRejected,
	setID:    func(r *orderIntent, id string) { r.setID(id) },
	submit:   submitOrder,
	query:    queryOrder,
	pending:  pendingOrder,
	label: func(o exgate.Order, id, ref string) exgate.Order {
		o.ID, o.ClientOrderID = id, ref
		return o
	},
	final:   func(o exgate.Order) bool { return o.Status.Final() },
	refused: refusedOrder,
}

var withdrawalKind = kind[exgate.WithdrawalRequest, exgate.Withdrawal]{
	name:     exgate.IntentWithdrawal,
	prefix:   'w',
	rejected: exgate.CodeWithdrawalRejected,
	setID:    func(r *exgate.WithdrawalRequest, id string) { r.ClientWithdrawalID = id },
	submit: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r exgate.WithdrawalRequest) (exgate.Withdrawal, error) {
		return ex.Withdraw(ctx, cred, r)
	},
	query: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r exgate.WithdrawalRequest, id string) (exgate.Withdrawal, error) {
		return ex.QueryWithdrawal(ctx, cred, exgate.WithdrawalQuery{Asset: r.Asset, ClientWithdrawalID: id})
	},
	pending: pendingWithdrawal,
	label: func(w exgate.Withdrawal, id, ref string) exgate.Withdrawal {
		w.ID, w.ClientWithdrawalID = id, ref
		return w
	},
	final: func(w exgate.Withdrawal) bool { return w.Status.Final() },
	check: func(ctx context.Context, ex exgate.Exchange, cred exgate.Credential, r exgate.WithdrawalRequest) error {
		if c, ok := exgate.Ability[exgate.WithdrawalChecker](ex); ok {
			return c.CheckWithdrawal(ctx, cred, r)
		}
		return nil
	},
	// A refused withdrawal reads back as a record, status failed with
	// the refusal as its reason, as a refused order reads back REJECTED:
	// the GET answers what happened, not the POST's error again.
	refused: func(r exgate.WithdrawalRequest, id string, at time.Time, exchange string, reason exgate.Reason) exgate.Withdrawal {
		w := pendingWithdrawal(r, id, at, exchange)
		w.Status, w.Reason = exgate.TransferFailed, &reason
		w.TotalAmount = exgate.NewNumber(decimal.Zero) // nothing left the account
		return w
	},
}

func pendingWithdrawal(r exgate.WithdrawalRequest, id string, at time.Time, exchange string) exgate.Withdrawal {
	return exgate.Withdrawal{
		ID: id, Amount: exgate.NewNumber(r.Amount), TotalAmount: exgate.NewNumber(r.Amount),
		Asset: r.Asset, Status: exgate.TransferPending, ToAddress: r.Address, Tag: r.Tag,
		Timestamp: at.UnixMilli(), Network: r.Network, Exchange: exchange,
	}
}

// PlaceOrder places a market order once per client reference. On an
// unknown outcome it returns the PENDING order with an EXCHANGE_TIMEOUT
// error.
func (s *Service) PlaceOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest, clientRef string) (exgate.Order, error) {
	return submit(ctx, s, orderKind, cred, orderIntent{OrderRequest: req}, clientRef)
}

// Withdraw submits a withdrawal once per client reference.
func (s *Service) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest, clientRef string) (exgate.Withdrawal, error) {
	return submit(ctx, s, withdrawalKind, cred, req, clientRef)
}

// Order returns an order of the client by gateway id or client id,
// refreshed from the exchange while it is not final.
func (s *Service) Order(ctx context.Context, apiKey, id, clientRef string) (exgate.Order, error) {
	return lookup(ctx, s, orderKind, apiKey, 0, id, clientRef)
}

// OrderOf returns an order of the exchange key cred (its client key and
// credential) by gateway id or client id, refreshed with that key's
// credential: a record of another exchange key of the same client is not
// found (docs/contract.md 2.4).
func (s *Service) OrderOf(ctx context.Context, cred exgate.Credential, id, clientRef string) (exgate.Order, error) {
	return lookup(ctx, s, orderKind, cred.ClientAPIKey, cred.ID, id, clientRef)
}

// Withdrawal returns a withdrawal of the client by gateway id or client id.
func (s *Service) Withdrawal(ctx context.Context, apiKey, id, clientRef string) (exgate.Withdrawal, error) {
	return lookup(ctx, s, withdrawalKind, apiKey, 0, id, clientRef)
}

// WithdrawalOf is OrderOf for a withdrawal.
func (s *Service) WithdrawalOf(ctx context.Context, cred exgate.Credential, id, clientRef string) (exgate.Withdrawal, error) {
	return lookup(ctx, s, withdrawalKind, cred.ClientAPIKey, cred.ID, id, clientRef)
}

func submit[R, T any](ctx context.Context, s *Service, k kind[R, T], cred exgate.Credential, req R, ref string) (T, error) {
	var zero T
	fp, err := fingerprint(cred, req)
	if err != nil {
		return zero, err
	}
	ex, ok := s.exchanges[cred.Exchange]
	if ref != "" && (!ok || k.check != nil) {
		// A retry is answered before anything else is checked. Where
		// nothing is checked first, the unique index of CreateIntent
		// below tells a retry without a read of its own (one store
		// round trip less for every new order).
		it, err := s.store.IntentByClientRef(ctx, cred.ClientAPIKey, k.name, ref)
		if err == nil {
			return replay(ctx, s, k, it, fp)
		}
		if !errors.Is(err, exgate.ErrNotFound) {
			return zero, storeError(err)
		}
	}
	if !ok {
		return zero, exgate.Errorf(exgate.CodeExchangeUnavailable, "exchange %q is not enabled on this gateway", cred.Exchange)
	}
	if k.check != nil {
		if err := k.check(ctx, ex, cred, req); err != nil {
			return zero, err
		}
	}
	id := exgate.NewID(k.prefix)
	if ref == "" && k.idAsRef {
		ref = id
	}
	k.setID(&req, id)
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return zero, fmt.Errorf("journal: encode request: %w", err)
	}
	now := s.now()
	it := exgate.Intent{
		ID: id, Kind: k.name, ClientAPIKey: cred.ClientAPIKey, CredentialID: cred.ID,
		CredentialName: cred.Name, Exchange: cred.Exchange, ClientRef: ref, Fingerprint: fp,
		Request: reqJSON, State: exgate.IntentSubmitting, CreatedAt: now, UpdatedAt: now,
		// Until its call deadline has passed and its outcome had time
		// to be recorded, the intent belongs to this instance: no
		// reconciler (here or elsewhere) asks the exchange about it.
		NextDue: now.Add(s.timeout + ownerMargin),
	}
	if k.exclusive != nil {
		it.Exclusive = k.exclusive(cred, req)
	}
	if k.name == exgate.IntentOrder || k.name == exgate.IntentWithdrawal {
		// What the risk checks reserve is reserved with the intent, in
		// one transaction (docs/risk.md). Transfers are not checked:
		// nothing leaves the account (docs/contract.md 2.8).
		it.Risk = exgate.RiskFromContext(ctx)
	}
	s.startInflight(id)
	if err := s.store.CreateIntent(ctx, it); err != nil {
		s.dropInflight(id)
		if exgate.ErrorCode(err) == exgate.CodeRiskLimitExceeded {
			return zero, err
		}
		if errors.Is(err, exgate.ErrConflict) && ref != "" {
			// A retry, or another request with the same client id won
			// the race.
			prev, err := s.store.IntentByClientRef(ctx, cred.ClientAPIKey, k.name, ref)
			if errors.Is(err, exgate.ErrNotFound) && it.Exclusive != "" {
				// No: another intent holds the exclusive key.
				return zero, k.inFlight(req)
			}
			if err != nil {
				return zero, storeError(err)
			}
			return replay(ctx, s, k, prev, fp)
		}
		return zero, storeError(err)
	}
	s.noteState(k.name, exgate.IntentSubmitting)

	// The call outlives the client's connection: an order half-sent
	// because a client hung up is exactly what must not happen.
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	rec, callErr := k.submit(callCtx, ex, cred, req)
	cancel()

	// The outcome is recorded after the answer (settle): only the intent
	// had to be on disk before the exchange was called. A crash before
	// the outcome is on disk leaves the intent as a crash during the call
	// would, for the reconciler to read from the exchange.
	if callErr == nil {
		rec = k.label(rec, id, ref)
		state := exgate.IntentAccepted
		var next time.Time
		if k.final(rec) {
			state = exgate.IntentFinal
		} else {
			next = s.now().Add(s.every)
		}
		s.settle(ctx, it, exgate.IntentOutcome{State: state, Answer: exgate.AnswerRecord, NextDue: next}, rec)
		s.noteState(k.name, state)
		return rec, nil
	}
	if definite(callErr) {
		s.settle(ctx, it, exgate.IntentOutcome{State: exgate.IntentFinal, Answer: exgate.AnswerError}, toStored(callErr))
		s.noteState(k.name, exgate.IntentFinal)
		return zero, callErr
	}
	s.log.WarnContext(ctx, "outcome unknown; reconciling", "kind", string(k.name), "id", id, "exchange", cred.Exchange, "err", callErr)
	pending := k.label(k.pending(req, id, now, cred.Exchange), id, ref)
	s.settle(ctx, it, exgate.IntentOutcome{State: exgate.IntentUnknown, Answer: exgate.AnswerPending, NextDue: s.now()}, pending)
	s.noteState(k.name, exgate.IntentUnknown)
	return pending, timeoutError(k.name, id)
}

func timeoutError(k exgate.IntentKind, id string) error {
	route := "/v1/order"
	switch k {
	case exgate.IntentWithdrawal:
		route = "/v1/wallet/withdrawal"
	case exgate.IntentTransfer:
		route = "/v1/wallet/transfer"
	}
	return exgate.Errorf(exgate.CodeExchangeTimeout,
		"the exchange did not confirm the %s in time; its outcome is being reconciled and it will not be sent again; read it with GET %s?id=%s", k, route, id)
}

// definite reports whether the exchange (or the adapter's local check)
// certainly refused the request, as opposed to an unknown outcome.
func definite(err error) bool {
	e, ok := errors.AsType[*exgate.Error](err)
	if !ok {
		return false
	}
	switch e.Code {
	case exgate.CodeExchangeTimeout, exgate.CodeInternal:
		return false
	}
	return true
}

func (s *Service) startInflight(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight[id] = &flight{answered: make(chan struct{}), saved: make(chan struct{})}
}

// dropInflight forgets an intent whose outcome will not be recorded by
// this process: it was never recorded, or its outcome cannot be encoded.
func (s *Service) dropInflight(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.inflight[id]
	close(f.answered)
	close(f.saved)
	delete(s.inflight, id)
}

// settle answers the duplicates waiting for it with the outcome o of it,
// and records that outcome in the background, in the store's next commit
// (exgate.Store.RecordOutcome): the client has its answer without waiting
// for that commit. The intent stays in flight until the outcome is on
// disk. A failure to record it leaves the intent as a crash during the
// call would, for the reconciler to settle from the exchange's records.
func (s *Service) settle(ctx context.Context, it exgate.Intent, o exgate.IntentOutcome, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.log.ErrorContext(ctx, "journal: outcome not encoded; the reconciler will settle it", "id", it.ID, "err", err)
		s.dropInflight(it.ID)
		return
	}
	o.Response = body
	if it.Risk != nil {
		// The settlement of the intent's reservation, worked out here from
		// the answer as decoded, so that the store's write transaction
		// need not decode it again (exgate.IntentOutcome.Risk).
		if st, ok := exgate.SettleRiskRecord(it.Kind, *it.Risk, o.State, o.Answer, v); ok {
			o.Risk = &st
		}
	}
	it.State, it.Answer, it.Response, it.UpdatedAt = o.State, o.Answer, body, s.now()
	if !o.NextDue.IsZero() {
		it.NextDue = o.NextDue
	}
	s.mu.Lock()
	f := s.inflight[it.ID]
	f.outcome = it
	close(f.answered)
	s.mu.Unlock()
	save := func(record func(context.Context, string, exgate.IntentOutcome) error) {
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := record(saveCtx, it.ID, o); err != nil {
			s.log.ErrorContext(saveCtx, "journal: outcome not recorded; the reconciler will settle it", "id", it.ID, "err", err)
		}
		s.mu.Lock()
		delete(s.inflight, it.ID)
		close(f.saved)
		s.mu.Unlock()
		if o.State == exgate.IntentUnknown {
			s.Kick()
		}
	}
	if it.Exclusive != "" {
		// The intent holds its key until its outcome is on disk: the
		// next intent of that key must not wait for a later commit.
		save(s.store.UpdateIntent)
		return
	}
	go save(s.store.RecordOutcome)
}

// Drain waits until the outcomes answered so far are on disk (or failed
// to be), or ctx ends. Call it after the HTTP server has shut down and
// before the store is closed.
func (s *Service) Drain(ctx context.Context) error {
	s.mu.Lock()
	var saving []chan struct{}
	for _, f := range s.inflight {
		if f.outcome.ID != "" {
			saving = append(saving, f.saved)
		}
	}
	s.mu.Unlock()
	for _, ch := range saving {
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("journal: outcomes still being recorded: %w", ctx.Err())
		}
	}
	return nil
}

// saved waits until the outcome this process answered for id is on disk
// (or failed to be), when it has answered one; it returns at once for an
// intent this process is not settling, or when ctx ends.
func (s *Service) saved(ctx context.Context, id string) {
	s.mu.Lock()
	f, ok := s.inflight[id]
	s.mu.Unlock()
	if !ok {
		return
	}
	select {
	case <-f.answered:
	default:
		return // still with the exchange
	}
	select {
	case <-f.saved:
	case <-ctx.Done():
	}
}

// inflightDone returns the channel closed once this process has the
// answer to id, or nil when this process is not submitting it.
func (s *Service) inflightDone(id string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.inflight[id]; ok {
		return f.answered
	}
	return nil
}

// answered returns it as this process answered it when its outcome is
// not on disk yet, or it unchanged.
func (s *Service) answered(it exgate.Intent) exgate.Intent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.inflight[it.ID]; ok && f.outcome.ID != "" {
		return f.outcome
	}
	return it
}

func (s *Service) isInflight(id string) bool { return s.inflightDone(id) != nil }

// owned reports whether the instance that recorded it may still be
// sending it: an intent still being submitted whose call deadline has not
// passed is asked about only by its sender.
func (s *Service) owned(it exgate.Intent) bool {
	return it.State == exgate.IntentSubmitting && s.now().Before(it.NextDue)
}

// await waits until the outcome of an intent still being submitted is
// recorded: by this process (woken when it is) or by another instance
// (polled from the store until it is, or until the sender's own deadline
// has passed). A duplicate gets the budget the first request had, the
// call deadline, whatever the deadline of ctx; it stops early only when
// ctx is cancelled (the client went away). It returns the intent as last
// read.
func (s *Service) await(ctx context.Context, it exgate.Intent) exgate.Intent {
	if it.State != exgate.IntentSubmitting {
		return it
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			cancel()
		}
	})
	defer stop()
	if done := s.inflightDone(it.ID); done != nil {
		select {
		case <-done:
			return s.answered(s.reread(wctx, it))
		case <-wctx.Done():
			return it
		}
	}
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for s.owned(it) {
		select {
		case <-t.C:
			it = s.reread(wctx, it)
		case <-wctx.Done():
			return it
		}
	}
	return it
}

// reread returns the stored intent, or it unchanged when the store cannot
// be read.
func (s *Service) reread(ctx context.Context, it exgate.Intent) exgate.Intent {
	fresh, err := s.store.Intent(ctx, it.ID)
	if err != nil {
		return it
	}
	return fresh
}

// schedule sets when the reconciler next reads an intent. A failure only
// delays or hastens that read.
func (s *Service) schedule(ctx context.Context, id string, next time.Time, attempts int) {
	if err := s.store.ScheduleIntent(ctx, id, next, attempts); err != nil {
		s.log.WarnContext(ctx, "journal: next reconciliation not recorded", "id", id, "err", err)
	}
}

// storedError is how a refusal is kept in an intent's response.
type storedError struct {
	Code   exgate.Code `json:"code"`
	Detail string      `json:"detail"`
	Param  string      `json:"param,omitempty"`
	// OutcomeUnknown marks an intent ended without its outcome (its
	// exchange key was removed): a lookup answers the error, never a
	// REJECTED record, since the exchange may have carried it out.
	OutcomeUnknown bool `json:"outcomeUnknown,omitempty"`
}

// errOutcomeUnknown is wrapped by the error of an intent ended without its
// outcome (storedError.OutcomeUnknown).
var errOutcomeUnknown = errors.New("outcome unknown")

func toStored(err error) storedError {
	e, _ := errors.AsType[*exgate.Error](err)
	return storedError{Code: e.Code, Detail: e.Detail, Param: e.Param}
}

func storeError(err error) error {
	return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the gateway's store is unavailable", RetryAfter: time.Second, Err: err}
}

// fingerprint identifies a request's parameters (without the gateway id).
func fingerprint[R any](cred exgate.Credential, req R) (string, error) {
	b, err := json.Marshal(struct {
		Credential string
		Request    R
	}{cred.Name, req})
	if err != nil {
		return "", fmt.Errorf("journal: fingerprint: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// replay answers a retry with the intent's recorded answer, refreshed from
// the exchange if it is not final yet.
func replay[R, T any](ctx context.Context, s *Service, k kind[R, T], it exgate.Intent, fp string) (T, error) {
	var zero T
	if it.Fingerprint != fp {
		return zero, exgate.Errorf(exgate.CodeIdempotencyConflict,
			"this client id was already used for a different %s (gateway id %s)", k.name, it.ID)
	}
	// A duplicate of a request still with the exchange waits for its
	// outcome rather than answering that it is unknown.
	it = s.await(ctx, it)
	if !it.State.Done() {
		s.saved(ctx, it.ID)
	}
	if !it.State.Done() && !s.isInflight(it.ID) && !s.owned(it) {
		if fresh, err := reconcile(ctx, s, k, it); err == nil {
			it = fresh
		}
	}
	return decode(k, it)
}

// decode turns an intent's recorded answer back into a record or error.
func decode[R, T any](k kind[R, T], it exgate.Intent) (T, error) {
	var rec T
	switch {
	case it.Answer == exgate.AnswerNone || len(it.Response) == 0:
		// Recorded but no outcome yet: being submitted or its
		// answer was lost in a crash.
		var req R
		if err := json.Unmarshal(it.Request, &req); err != nil {
			return rec, fmt.Errorf("journal: decode request %s: %w", it.ID, err)
		}
		return k.label(k.pending(req, it.ID, it.CreatedAt, it.Exchange), it.ID, it.ClientRef), timeoutError(k.name, it.ID)
	case it.Answer == exgate.AnswerRecord || it.Answer == exgate.AnswerPending:
		if err := json.Unmarshal(it.Response, &rec); err != nil {
			return rec, fmt.Errorf("journal: decode response %s: %w", it.ID, err)
		}
		if it.Answer == exgate.AnswerPending {
			return rec, timeoutError(k.name, it.ID)
		}
		return rec, nil
	default:
		var se storedError
		if err := json.Unmarshal(it.Response, &se); err != nil {
			return rec, fmt.Errorf("journal: decode response %s: %w", it.ID, err)
		}
		e := &exgate.Error{Code: se.Code, Detail: se.Detail, Param: se.Param}
		if se.OutcomeUnknown {
			e.Err = errOutcomeUnknown
		}
		return rec, e
	}
}

// lookup finds a record of the client apiKey by gateway id or client id;
// with a credential id (not 0), only a record of that exchange key
// (another exchange key's records do not exist for it, and are never
// refreshed with its credential).
func lookup[R, T any](ctx context.Context, s *Service, k kind[R, T], apiKey string, credID int64, id, ref string) (T, error) {
	var zero T
	var it exgate.Intent
	var err error
	if id != "" {
		it, err = s.store.Intent(ctx, id)
		if err == nil && (it.ClientAPIKey != apiKey || it.Kind != k.name) {
			err = exgate.ErrNotFound // another client's records do not exist for this one
		}
	} else {
		it, err = s.store.IntentByClientRef(ctx, apiKey, k.name, ref)
	}
	if err == nil && credID != 0 && it.CredentialID != credID {
		err = exgate.ErrNotFound // nor do another exchange key's
	}
	if errors.Is(err, exgate.ErrNotFound) {
		if credID != 0 {
			return zero, exgate.Errorf(exgate.CodeNotFound, "no %s with that id for this exchange key", k.name)
		}
		return zero, exgate.Errorf(exgate.CodeNotFound, "no %s with that id for this API key", k.name)
	}
	if err != nil {
		return zero, storeError(err)
	}
	it = s.answered(it)
	if !it.State.Done() {
		// Read from the exchange below, and recorded, only after this
		// process's own answer is on disk.
		s.saved(ctx, it.ID)
	}
	if !it.State.Done() && !s.isInflight(it.ID) {
		if fresh, err := reconcile(ctx, s, k, it); err == nil {
			it = fresh
		}
	}
	rec, err := decode(k, it)
	if e, ok := errors.AsType[*exgate.Error](err); ok && e.Code == exgate.CodeExchangeTimeout {
		return rec, nil // reading a pending record is not an error
	} else if ok && k.refused != nil && !errors.Is(err, errOutcomeUnknown) {
		var req R
		if jerr := json.Unmarshal(it.Request, &req); jerr == nil {
			reason := exgate.Reason{Code: e.Code, Detail: e.Detail}
			return k.label(k.refused(req, it.ID, it.CreatedAt, it.Exchange, reason), it.ID, it.ClientRef), nil
		}
	}
	return rec, err
}
