package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/exgate/exgate"
)

// The operator's controls (docs/contract.md 2.6) in the request path: a client
// key's IP allowlist, checked as soon as the request is authenticated; an
// exchange key's withdrawal allowlist, checked before the journal records
// anything; and the audit trail of every request that changes state.

// controlStore is what the allowlists need from the store.
type controlStore interface {
	AllowedIPs(ctx context.Context, apiKey string) ([]netip.Prefix, error)
	AllowedAddresses(ctx context.Context, apiKey, name string) ([]exgate.AllowedAddress, error)
	IntentByClientRef(ctx context.Context, apiKey string, kind exgate.IntentKind, ref string) (exgate.Intent, error)
}

// auditLog is where the audit trail goes.
type auditLog interface {
	AppendAudits(ctx context.Context, es []exgate.AuditEntry) error
}

// auditWriter writes the API's audit records after their answers, in the
// order of the answers, in batches: every record queued while a batch is
// being written goes into the next one, a single write transaction. The
// answer does not wait for its record, so the record shares the store's
// next commit with the connection's next request instead of holding the
// connection for a commit of its own. A crash between an answer and the
// next commit loses that answer's record, never the order or withdrawal,
// which the journal recorded before the answer.
//
// A batch the store refuses (an outage) stays at the head of the queue and
// is written again with doubling backoff until the store is back; records
// answered meanwhile wait behind it, at most maxAuditPending in all. Only
// when the queue is full while the store fails is a record dropped, and
// then never silently: it is logged with its request id and counted
// (auditObserver.AuditDropped), as is every failed write.
type auditWriter struct {
	log     auditLog
	logger  *slog.Logger
	obs     auditObserver
	mu      sync.Mutex
	pending []exgate.AuditEntry
	writing bool
	// failing is set while the last write failed and the writer waits to
	// write it again.
	failing bool
	// room is signaled after each batch, and when a write fails, for
	// adders waiting while maxAuditPending records are queued.
	room *sync.Cond
	// idle is closed when the writer stops with nothing queued.
	idle chan struct{}
	// retry is the wait before the attempt-th write again (from 1).
	retry func(attempt int) time.Duration
}

// auditObserver hears what the audit writer could not write: the records
// of a failed write (written again later) and the records dropped.
type auditObserver interface {
	AuditWriteFailed(records int)
	AuditDropped(records int)
}

// maxAuditPending bounds the records queued: past it, a request waits for
// the writer before it answers, or, while the store fails, its record is
// dropped (logged and counted).
const maxAuditPending = 4096

// maxAuditBatch bounds the records of one write.
const maxAuditBatch = 1024

// auditRetry is the default wait before writing a refused batch again:
// 50 ms doubling to 5 s.
func auditRetry(attempt int) time.Duration {
	return min(50*time.Millisecond<<min(attempt-1, 10), 5*time.Second)
}

func newAuditWriter(log auditLog, logger *slog.Logger, obs auditObserver) *auditWriter {
	w := &auditWriter{log: log, logger: logger, obs: obs, idle: make(chan struct{}), retry: auditRetry}
	w.room = sync.NewCond(&w.mu)
	close(w.idle)
	return w
}

// add queues e and starts the writer when it is not running.
func (w *auditWriter) add(e exgate.AuditEntry) {
	w.mu.Lock()
	for len(w.pending) >= maxAuditPending {
		if w.failing {
			w.mu.Unlock()
			w.logger.Error("audit record dropped: the store is failing and the audit queue is full",
				"requestId", e.RequestID, "action", e.Action, "apiKey", e.APIKey, "status", e.Status, "intentId", e.IntentID)
			if w.obs != nil {
				w.obs.AuditDropped(1)
			}
			return
		}
		w.room.Wait()
	}
	w.pending = append(w.pending, e)
	if !w.writing {
		w.writing = true
		w.idle = make(chan struct{})
		go w.run()
	}
	w.mu.Unlock()
}

// queued is the number of records waiting to be written.
func (w *auditWriter) queued() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// run writes batches until nothing is queued, writing a refused batch
// again after a backoff.
func (w *auditWriter) run() {
	attempt := 0
	for {
		w.mu.Lock()
		n := min(len(w.pending), maxAuditBatch)
		if n == 0 {
			w.writing, w.failing = false, false
			close(w.idle)
			w.mu.Unlock()
			return
		}
		batch := append([]exgate.AuditEntry(nil), w.pending[:n]...)
		w.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := w.log.AppendAudits(ctx, batch)
		cancel()
		w.mu.Lock()
		if err == nil {
			w.pending = append(w.pending[:0:0], w.pending[n:]...)
			w.failing, attempt = false, 0
			w.room.Broadcast()
			w.mu.Unlock()
			continue
		}
		w.failing = true
		w.room.Broadcast()
		queued := len(w.pending)
		w.mu.Unlock()
		attempt++
		if w.obs != nil {
			w.obs.AuditWriteFailed(n)
		}
		w.logger.Warn("audit records not written yet: written again when the store answers",
			"records", n, "queued", queued, "attempt", attempt, "firstRequestId", batch[0].RequestID, "err", err)
		time.Sleep(w.retry(attempt))
	}
}

// wait returns when every record queued so far is written, or ctx ends.
func (w *auditWriter) wait(ctx context.Context) error {
	w.mu.Lock()
	idle := w.idle
	w.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		n := w.queued()
		w.logger.Error("audit records not written when the wait ended", "records", n)
		return fmt.Errorf("%d audit records still waiting to be written: %w", n, ctx.Err())
	}
}

// clientAddr is the address the request comes from: the peer's, or, when
// the peer is a trusted proxy, the right-most address of X-Forwarded-For
// that is not a trusted proxy (every proxy appends the address it was
// called from, so the addresses left of an untrusted one are the client's
// own claims). The zero Addr when it cannot be read.
func clientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := parseHostAddr(r.RemoteAddr)
	if !peer.IsValid() || len(trusted) == 0 || !exgate.IPAllowed(trusted, peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	addr := peer
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if hop == "" && i == 0 && len(hops) == 1 {
			break // no header
		}
		a := parseHostAddr(hop)
		if !a.IsValid() {
			return netip.Addr{} // a proxy we trust wrote nonsense: refuse to guess
		}
		addr = a
		if !exgate.IPAllowed(trusted, a) {
			break
		}
	}
	return addr.Unmap().WithZone("")
}

// parseHostAddr reads "1.2.3.4", "1.2.3.4:5", "[::1]:5" or "::1".
func parseHostAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap()
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a.Unmap()
		}
	}
	return netip.Addr{}
}

// checkClientIP refuses a request of a client key with an IP allowlist
// from an address outside it. The store is asked at most once per cache
// period per key; when it cannot be asked, the request is refused.
func (s *Server) checkClientIP(ctx context.Context, r *http.Request, apiKey string) error {
	if s.ips == nil {
		return nil
	}
	prefixes, err := s.ips.get(ctx, apiKey)
	if err != nil {
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the key store is unreachable", RetryAfter: time.Second, Err: err}
	}
	if len(prefixes) == 0 {
		return nil
	}
	addr := clientAddr(r, s.cfg.TrustedProxies)
	if !addr.IsValid() || !exgate.IPAllowed(prefixes, addr) {
		shown := "an unreadable address"
		if addr.IsValid() {
			shown = addr.String()
		}
		return exgate.Errorf(exgate.CodeIPNotAllowed, "this API key may not be used from %s", shown)
	}
	return nil
}

// ipCache keeps client keys' IP allowlists for at most ttl, as keyCache
// keeps the keys: a change made with the CLI applies within a second.
type ipCache struct {
	store controlStore
	ttl   time.Duration
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]cachedIPs
}

type cachedIPs struct {
	prefixes []netip.Prefix
	fetched  time.Time
}

func (c *ipCache) get(ctx context.Context, apiKey string) ([]netip.Prefix, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[apiKey]
	c.mu.Unlock()
	if ok && now.Sub(e.fetched) < c.ttl {
		return e.prefixes, nil
	}
	prefixes, err := c.store.AllowedIPs(ctx, apiKey)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.entries) >= maxCacheEntries {
		clear(c.entries)
	}
	c.entries[apiKey] = cachedIPs{prefixes: prefixes, fetched: now}
	c.mu.Unlock()
	return prefixes, nil
}

// addressGuard is the ledger with the exchange key's withdrawal allowlist
// in front: a withdrawal elsewhere is refused before the journal records
// it, so nothing reaches the exchange. The allowlist is read from the
// store on every withdrawal, never from a cache: a denied address stops
// at once. A retry of a withdrawal the journal already holds (same client
// id) goes to the journal, which answers with the first result and never
// sends it again: a refusal would tell the client that a withdrawal made
// before the address was denied was not made.
type addressGuard struct {
	ledger
	addresses controlStore
	now       func() time.Time
}

func (g addressGuard) Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest, clientRef string) (exgate.Withdrawal, error) {
	if clientRef != "" {
		_, err := g.addresses.IntentByClientRef(ctx, cred.ClientAPIKey, exgate.IntentWithdrawal, clientRef)
		if err == nil {
			return g.ledger.Withdraw(ctx, cred, req, clientRef)
		}
		if !errors.Is(err, exgate.ErrNotFound) {
			return exgate.Withdrawal{}, &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the journal is unreachable", RetryAfter: time.Second, Err: err}
		}
	}
	list, err := g.addresses.AllowedAddresses(ctx, cred.ClientAPIKey, cred.Name)
	if err != nil {
		return exgate.Withdrawal{}, &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the withdrawal allowlist is unreachable", RetryAfter: time.Second, Err: err}
	}
	if err := exgate.CheckWithdrawalAddress(list, req, g.now()); err != nil {
		return exgate.Withdrawal{}, err
	}
	return g.ledger.Withdraw(ctx, cred, req, clientRef)
}

// auditNote is what authentication tells the audit trail about a request:
// whether it was authenticated (only those are recorded: a flood of
// unsigned requests must not fill the store) and its parameters.
type auditNote struct {
	authenticated bool
	params        []param
	remote        string
}

type auditNoteKey struct{}

// noteAuthenticated marks the request authenticated for the audit trail.
func (s *Server) noteAuthenticated(ctx context.Context, r *http.Request, params []param) {
	if n, ok := ctx.Value(auditNoteKey{}).(*auditNote); ok {
		n.authenticated = true
		n.params = params
		if a := clientAddr(r, s.cfg.TrustedProxies); a.IsValid() {
			n.remote = a.String()
		}
	}
}

// maxAuditAnswer is how much of an answer the audit reads its outcome from.
const maxAuditAnswer = 64 << 10

// audited records every authenticated request to h in the audit trail
// with its outcome: the status, the problem's code and the order's or
// withdrawal's id. The answer is flushed to the client first.
func (s *Server) audited(action string, h http.Handler) http.Handler {
	if s.cfg.Audit == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note := &auditNote{}
		r = r.WithContext(context.WithValue(r.Context(), auditNoteKey{}, note))
		rec := &answerRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if !note.authenticated {
			return
		}
		var outcome struct {
			ID   string `json:"id"`
			Code string `json:"code"`
		}
		_ = json.Unmarshal(rec.body.Bytes(), &outcome)
		e := exgate.AuditEntry{
			Actor:       exgate.AuditActorAPI,
			Action:      action,
			APIKey:      r.Header.Get("X-API-KEY"),
			ExchangeKey: r.Header.Get("X-API-EXCHANGE-KEY"),
			Details:     auditDetails(note.params),
			Status:      rec.status,
			Code:        outcome.Code,
			IntentID:    outcome.ID,
			RequestID:   requestID(r.Context()),
			// The client's own id, apart: anyone may set it.
			ClientRequestID: clientRequestID(r.Context()),
			Remote:          note.remote,
			Time:            s.now(),
		}
		// The record is queued before the answer is flushed, so records
		// keep the order of the answers, and written after it, beside the
		// connection's next request (auditWriter).
		s.audit.add(e)
		_ = http.NewResponseController(w).Flush()
	})
}

// AuditQueued is the number of audit records waiting to be written: the
// metrics gauge of the audit queue.
func (s *Server) AuditQueued() int {
	if s.audit == nil {
		return 0
	}
	return s.audit.queued()
}

// Drain waits until the audit records of the requests answered so far are
// written, or ctx ends. Call it after the HTTP server has shut down and
// before the store is closed.
func (s *Server) Drain(ctx context.Context) error {
	if s.audit == nil {
		return nil
	}
	return s.audit.wait(ctx)
}

// auditDetails are a request's parameters for the audit trail: never the
// signature.
func auditDetails(params []param) map[string]string {
	out := make(map[string]string, len(params))
	for _, p := range params {
		if p.name == "signature" {
			continue
		}
		out[p.name] = p.value
	}
	return out
}

// answerRecorder keeps the status and the start of the answer.
type answerRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *answerRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *answerRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	if room := maxAuditAnswer - r.body.Len(); room > 0 {
		r.body.Write(b[:min(len(b), room)])
	}
	return r.ResponseWriter.Write(b)
}

func (r *answerRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
