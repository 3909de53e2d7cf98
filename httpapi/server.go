// Package httpapi is exgate's HTTP API: the routes of api/openapi.yaml,
// one row each in the route table (routes.go), request signing
// (docs/contract.md 2.1), input validation and RFC 9457 problem answers
// (docs/contract.md 2.2). A handler returns its error; the server writes it
// as a problem, once.
package httpapi

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// MaxBodyBytes is the largest request body accepted (docs/contract.md 2.2).
const MaxBodyBytes = 64 << 10

// ledger is the journal of orders and withdrawals: it records each intent
// before the exchange call and answers retries with the first result.
type ledger interface {
	PlaceOrder(ctx context.Context, cred exgate.Credential, req exgate.OrderRequest, clientRef string) (exgate.Order, error)
	Withdraw(ctx context.Context, cred exgate.Credential, req exgate.WithdrawalRequest, clientRef string) (exgate.Withdrawal, error)
	// OrderOf and WithdrawalOf find a record of the exchange key cred
	// only, and refresh it with that key's credential.
	OrderOf(ctx context.Context, cred exgate.Credential, id, clientRef string) (exgate.Order, error)
	WithdrawalOf(ctx context.Context, cred exgate.Credential, id, clientRef string) (exgate.Withdrawal, error)
}

// limiter is the gateway's own per-client rate limit.
type limiter interface {
	Reserve(ctx context.Context, key string, cost int, limit exgate.RateLimit) (time.Duration, error)
}

// Config holds the server's dependencies. Keys, Exchanges, Ledger, Replay
// and Limiter are required.
type Config struct {
	Keys      keyStore
	Exchanges map[string]exgate.Exchange
	Ledger    ledger
	Replay    replayGuard
	Limiter   limiter
	// ClientLimit is each client key's request budget; zero Rate means
	// no limit.
	ClientLimit      exgate.RateLimit
	RequireTimestamp bool
	// ReplayQuota is the most live signatures one client key may hold in
	// the replay guard; more are refused with 429. Default
	// DefaultReplayQuota.
	ReplayQuota int
	// Ready lists what /readyz checks (the store, the shared state);
	// none means always ready.
	Ready []ReadyCheck
	// OpenAPI is served at GET /v1/openapi.yaml.
	OpenAPI []byte
	Logger  *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// RequestTimeout is the deadline of a signed request's exchange work
	// (an adapter that would have to wait longer for the exchange's rate
	// budget answers 503 at once). Orders and withdrawals keep their own
	// submission deadline in the journal. Default 10 s.
	RequestTimeout time.Duration
	// KeyCacheTTL bounds how long a client key or credential is cached;
	// default 500 ms, so revocations apply within a second.
	KeyCacheTTL time.Duration
	// Controls, when set, holds the client keys' IP allowlists and the
	// exchange keys' withdrawal allowlists (controls.go).
	Controls controlStore
	// Audit, when set, records every authenticated request that changes
	// state (controls.go).
	Audit auditLog
	// AuditMetrics, when set, hears of audit records not written yet
	// (a failed write, retried) and dropped (the queue full while the
	// store fails).
	AuditMetrics auditObserver
	// TrustedProxies are the peers whose X-Forwarded-For names the client.
	TrustedProxies []netip.Prefix
	// RouteLimits are each client key's budgets per kind of route, on top
	// of ClientLimit; a zero Rate is no limit (limits.go).
	RouteLimits RouteLimits
	// Metrics, when set, hears of every request answered.
	Metrics requestObserver
	// Risk, when set, checks orders and withdrawals against the risk
	// limits and halts before they are journaled, and serves GET
	// /v1/account/risk (risk.go).
	Risk riskGate
	// RiskMetrics, when set, counts the risk refusals by limit.
	RiskMetrics riskObserver
	// Stream, when set, serves GET /v1/stream (stream.go); without it
	// the route answers 501 NOT_IMPLEMENTED.
	Stream streamHub
	// StreamSlots, when set, bounds the stream connections one client key
	// holds open, across instances, to StreamConnectionsPerKey (default
	// DefaultStreamConnectionsPerKey); one more handshake is 429.
	StreamSlots             streamSlots
	StreamConnectionsPerKey int
}

// requestObserver is what the API reports to metrics: the route pattern
// (never the raw path), the exchange (empty before the exchange key is
// known), the status and the time taken.
type requestObserver interface {
	ObserveRequest(route, exchange string, status int, d time.Duration)
}

// requestInfo is what a request learns on its way that metrics label it
// with; ServeHTTP puts one in the context.
type requestInfo struct{ exchange string }

type requestInfoKey struct{}

// Server is the HTTP API handler.
type Server struct {
	cfg  Config
	log  *slog.Logger
	now  func() time.Time
	keys *keyCache
	ips  *ipCache
	// life is the journal's order-lifecycle side, taken from the ledger
	// before the withdrawal allowlist wraps it; nil when it has none.
	life lifecycleLedger
	// xfers is the journal's transfer side (transfer.go), taken from the
	// ledger likewise; nil when it has none.
	xfers transferLedger
	mux   *http.ServeMux
	// limits is each route pattern's limit class, from the route table.
	limits map[string]LimitClass
	// audit writes the audit trail when Config.Audit is set.
	audit *auditWriter
}

// New builds the API handler.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	ttl := cfg.KeyCacheTTL
	if ttl <= 0 {
		ttl = 500 * time.Millisecond
	}
	s.keys = newKeyCache(cfg.Keys, ttl, s.now)
	s.life, _ = cfg.Ledger.(lifecycleLedger)
	s.xfers, _ = cfg.Ledger.(transferLedger)
	if cfg.Controls != nil {
		s.ips = &ipCache{store: cfg.Controls, ttl: ttl, now: s.now, entries: map[string]cachedIPs{}}
		s.cfg.Ledger = addressGuard{ledger: cfg.Ledger, addresses: cfg.Controls, now: s.now}
	}
	if cfg.Audit != nil {
		s.audit = newAuditWriter(cfg.Audit, s.log, cfg.AuditMetrics)
	}
	s.mux = http.NewServeMux()
	s.routes()
	return s
}

// ServeHTTP assigns the request id, logs the request and dispatches it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// The gateway's own id, always: a client's X-Request-ID is kept apart
	// (clientRequestID), so that no client can give its request, in the
	// logs or the audit trail, the id of another.
	id := newRequestID()
	w.Header().Set("X-Request-ID", id)
	ctx := context.WithValue(r.Context(), requestIDKey{}, id)
	clientID := r.Header.Get("X-Request-ID")
	if !validRequestID(clientID) {
		clientID = ""
	}
	ctx = context.WithValue(ctx, clientRequestIDKey{}, clientID)
	info := &requestInfo{}
	if s.cfg.Metrics != nil {
		ctx = context.WithValue(ctx, requestInfoKey{}, info)
	}
	req := r.WithContext(ctx)
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.ErrorContext(ctx, "panic", "requestId", id, "panic", v)
			if !rec.wrote {
				s.writeProblem(rec, req, errors.New("panic"))
			}
		}
		// The path only: the query carries the signature.
		s.log.InfoContext(ctx, "request",
			"requestId", id,
			"clientRequestId", clientID,
			"method", r.Method,
			"path", clip(r.URL.Path),
			"status", rec.status,
			"bytes", rec.bytes,
			"durationMs", float64(time.Since(start).Microseconds())/1000,
			"apiKey", clip(r.Header.Get("X-API-KEY")),
			"remote", r.RemoteAddr,
		)
		if s.cfg.Metrics != nil {
			// req.Pattern is the route ServeMux matched; empty for a
			// path refused before it.
			s.cfg.Metrics.ObserveRequest(req.Pattern, info.exchange, rec.status, time.Since(start))
		}
	}()
	if r.URL.Path != cleanPath(r.URL.Path) {
		// ServeMux would answer such a path (//v1/order, /v1/../healthz)
		// with a 307 to the cleaned path, repeating the query, signature
		// and all. Every answer is a problem instead, and the query is not
		// echoed.
		s.writeProblem(rec, req, exgate.Errorf(exgate.CodeNotFound,
			"no route %q: paths must be clean (no //, . or .. segments)", clip(r.URL.Path)))
		return
	}
	s.mux.ServeHTTP(rec, req)
}

// cleanPath is the path ServeMux would redirect p to: p with a leading
// slash, cleaned, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

type requestIDKey struct{}

type clientRequestIDKey struct{}

// clientRequestID is the client's own X-Request-ID ("" without a valid
// one).
func clientRequestID(ctx context.Context) string {
	id, _ := ctx.Value(clientRequestIDKey{}).(string)
	return id
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validRequestID accepts a client's X-Request-ID of up to 128 visible
// ASCII characters, so that logs cannot be forged with control characters.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status = code
		r.wrote = true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack hands the connection to GET /v1/stream's WebSocket (stream.go).
func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err == nil {
		r.wrote = true
	}
	return conn, brw, err
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ *call) error {
	return writeJSON(w, map[string]string{"status": "ok"})
}

// ReadyCheck is one dependency /readyz checks: its name is shown to the
// caller when Check fails, the error only in the log.
type ReadyCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// handleReady answers 503 naming the dependencies that are down, without
// their errors, which may hold addresses or internal detail (they go to
// the log).
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request, _ *call) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var down []string
	for _, c := range s.cfg.Ready {
		if err := c.Check(ctx); err != nil {
			s.log.WarnContext(ctx, "not ready", "requestId", requestID(r.Context()), "dependency", c.Name, "err", clipLog(err))
			down = append(down, c.Name)
		}
	}
	if len(down) > 0 {
		return &exgate.Error{Code: exgate.CodeExchangeUnavailable, RetryAfter: time.Second,
			Detail: "not ready: " + strings.Join(down, " and ") + " unreachable; the log has the cause"}
	}
	return writeJSON(w, map[string]string{"status": "ready"})
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request, _ *call) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(s.cfg.OpenAPI)
	return nil
}

// call is an authenticated request on a signed route.
type call struct {
	apiKey string
	cred   exgate.Credential
	ex     exgate.Exchange
	params []param
}

// signed authenticates the request (docs/contract.md 2.1), resolves the exchange
// credential, checks permission and the client's rate limit, then runs h;
// an error on the way, or h's, is written as a problem. Authentication
// comes first: an unauthenticated caller learns nothing about parameters
// or exchange keys. A stream handshake keeps no deadline: the hub holds
// the connection.
func (s *Server) signed(acc access, legacy legacyRule, h func(http.ResponseWriter, *http.Request, *call) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if acc != streamKey {
			timeout := s.cfg.RequestTimeout
			if timeout <= 0 {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		c, err := s.authenticateAs(w, r, acc.permission(), acc == streamKey, legacy)
		if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			s.writeProblem(w, r, err)
		}
	})
}

// hasBody reports whether a GET request came with a body.
func hasBody(r *http.Request) bool {
	switch {
	case r.ContentLength > 0:
		return true
	case r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody:
		return false
	}
	// Length unknown (chunked): a body whose first read gives nothing is
	// none.
	var b [1]byte
	n, _ := r.Body.Read(b[:])
	return n > 0
}

// authenticateAs authenticates a signed request (signed); for the stream
// handshake (stream.go) a timestamp is required and the keys may be signed
// query parameters.
func (s *Server) authenticateAs(w http.ResponseWriter, r *http.Request, perm exgate.Permission, stream bool, legacy legacyRule) (*call, error) {
	ctx := r.Context()
	apiKey := r.Header.Get("X-API-KEY")
	if apiKey == "" && stream {
		apiKey = queryValue(r.URL.RawQuery, streamKeyParam)
	}
	if apiKey == "" {
		if stream {
			return nil, exgate.Errorf(exgate.CodeMissingAPIKey, "the X-API-KEY header or the signed apiKey query parameter is required")
		}
		return nil, exgate.Errorf(exgate.CodeMissingAPIKey, "the X-API-KEY header is required")
	}
	key, mac, err := s.keys.clientKey(ctx, apiKey)
	if errors.Is(err, exgate.ErrNotFound) || (err == nil && !key.Active()) {
		return nil, exgate.Errorf(exgate.CodeInvalidAPIKey, "the API key is unknown or revoked")
	}
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the key store is unreachable", RetryAfter: time.Second, Err: err}
	}

	var sr signedRequest
	post := r.Method != http.MethodGet && r.Method != http.MethodHead
	if !post {
		sr, err = parseQuery(r.URL.RawQuery)
		if err == nil && hasBody(r) {
			// Served as if the body were absent, a filter sent there
			// would be silently dropped.
			err = errors.New("parameters of a GET request go in the query string, not a body: send them as ?name=value&… and sign that query string")
		}
	} else {
		if err := checkJSONContentType(r.Header.Get("Content-Type")); err != nil {
			return nil, err
		}
		body, rerr := readBody(w, r)
		if rerr != nil {
			return nil, rerr
		}
		sr, err = parseBody(body)
		if err == nil && r.URL.RawQuery != "" {
			err = errors.New("parameters of a POST request go in the JSON body, not the query string")
		}
	}
	if err != nil {
		if e, ok := errors.AsType[*exgate.Error](err); ok {
			return nil, e
		}
		return nil, &exgate.Error{Code: exgate.CodeInvalidParameter, Detail: err.Error()}
	}
	if sr.signatures == 0 || sr.signature == "" {
		return nil, exgate.Errorf(exgate.CodeMissingSignature, "the signature parameter is required")
	}
	var sig [sha256.Size]byte
	if !decodeSignature(sr.signature, &sig) || sr.signatures > 1 {
		return nil, exgate.Errorf(exgate.CodeInvalidSignature, "signature must be one HMAC-SHA256 of the parameters as 64 hex characters")
	}
	if !mac.verify(sr.raw, &sig) && (sr.decoded == "" || !mac.verify(sr.decoded, &sig)) {
		return nil, exgate.Errorf(exgate.CodeInvalidSignature, "%s", verifiedText(&sr))
	}
	now := s.now()
	// Why this request needs a timestamp, said as it is (empty: it
	// does not).
	var required string
	switch {
	case stream:
		required = "the stream handshake (GET /v1/stream) always requires a signed timestamp parameter, whatever --require-timestamp says"
	case post && !key.LegacySigning:
		required = "a request that changes state (every POST) requires a signed timestamp parameter"
	case s.cfg.RequireTimestamp:
		required = "this gateway requires a signed timestamp parameter on every signed request (--require-timestamp, on by default)"
	}
	expiry, err := checkTimestamp(&sr, now, required)
	if err != nil {
		return nil, err
	}

	name := r.Header.Get("X-API-EXCHANGE-KEY")
	if stream {
		if name, err = streamKeys(r, sr.params); err != nil {
			return nil, err
		}
	}
	// The replay guard binds the signature to the method, path and
	// exchange key it is first seen on, before anything else can answer:
	// a signature is accepted once, and never on another route or
	// exchange key, whatever its first answer was (docs/contract.md 2.1).
	var guardKey, route string
	if !expiry.IsZero() {
		guardKey = "replay:" + apiKey + ":" + strings.ToLower(sr.signature)
		route = r.Method + " " + r.URL.Path + " " + name
		first, boundTo, err := s.cfg.Replay.Claim(ctx, apiKey, guardKey, route, expiry, s.replayQuota())
		if errors.Is(err, exgate.ErrOverQuota) {
			return nil, &exgate.Error{Code: exgate.CodeRateLimited, RetryAfter: time.Second,
				Detail: "this API key has " + strconv.Itoa(s.replayQuota()) + " signatures in the replay guard, its most; send fewer requests or a shorter recvWindow"}
		}
		if err != nil {
			return nil, &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the replay guard is unreachable", RetryAfter: time.Second, Err: err}
		}
		if !first {
			if boundTo != route {
				return nil, exgate.Errorf(exgate.CodeReplayedRequest, "this signature was first seen on another route or exchange key; a signature opens one method, path and exchange key, once")
			}
			return nil, exgate.Errorf(exgate.CodeReplayedRequest, "this signature was already accepted inside its receive window")
		}
	}
	// A request refused by the client's own rate limit gives its claim
	// back, so that the same signed request may be sent again after
	// Retry-After, to the same method, path and exchange key only.
	if err := s.checkClientLimits(ctx, apiKey, r.Pattern); err != nil {
		if guardKey != "" {
			if rerr := s.cfg.Replay.Release(ctx, apiKey, guardKey, route); rerr != nil {
				s.log.WarnContext(ctx, "replay guard release", "requestId", requestID(ctx), "err", clipLog(rerr))
			}
		}
		return nil, err
	}

	// Authenticated from here on.
	s.noteAuthenticated(ctx, r, sr.params)
	if err := s.checkClientIP(ctx, r, apiKey); err != nil {
		return nil, err
	}
	if key.LegacySigning && legacy != legacyOK {
		return nil, exgate.Errorf(exgate.CodePermissionDenied, "this API key signs the legacy way (created with --legacy-signing, no timestamp): it may call only the seven routes of the spec and GET /v1/order; %s %s needs a key created without --legacy-signing", r.Method, r.URL.Path)
	}
	if name == "" {
		return nil, exgate.Errorf(exgate.CodeMissingExchangeKey, "the X-API-EXCHANGE-KEY header is required")
	}
	cred, err := s.keys.credential(ctx, apiKey, name)
	if errors.Is(err, exgate.ErrNotFound) {
		return nil, exgate.Errorf(exgate.CodeUnknownExchangeKey, "no exchange key named %q for this API key", clip(name))
	}
	if err != nil {
		return nil, &exgate.Error{Code: exgate.CodeExchangeUnavailable, Detail: "the key store is unreachable", RetryAfter: time.Second, Err: err}
	}
	if !cred.Allows(perm) {
		return nil, exgate.Errorf(exgate.CodePermissionDenied, "exchange key %q lacks the %s permission", name, perm)
	}
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		info.exchange = cred.Exchange
	}
	ex, ok := s.cfg.Exchanges[cred.Exchange]
	if !ok {
		return nil, exgate.Errorf(exgate.CodeExchangeUnavailable, "exchange %q is not enabled on this gateway", cred.Exchange)
	}
	return &call{apiKey: apiKey, cred: cred, ex: ex, params: sr.params}, nil
}

// replayQuota is the most signatures one client key may hold in the
// replay guard at once.
func (s *Server) replayQuota() int {
	if s.cfg.ReplayQuota > 0 {
		return s.cfg.ReplayQuota
	}
	return DefaultReplayQuota
}

// DefaultReplayQuota bounds the live signatures of one client key in the
// replay guard: 10 000 is 160 requests a second for a 61 s window (the
// longest recvWindow plus the clock skew), three times the default client
// rate limit, and a hundredth of what the in-process guard holds, so one
// flooding key is refused long before others are affected.
const DefaultReplayQuota = 10_000

// verifiedText is the detail of a signature that does not match: the
// parameter string the gateway verified, as the client sent it, so that a
// client signing 100.0 for 100, or members in another order, can see why.
// It holds no secret; a long string is clipped.
func verifiedText(sr *signedRequest) string {
	if sr.decoded != "" {
		return fmt.Sprintf("the signature matches neither the parameter string %q nor its percent-decoded form %q", clip(sr.raw), clip(sr.decoded))
	}
	return fmt.Sprintf("the signature does not match the parameter string %q (the signed parameters in the order sent, signature excluded)", clip(sr.raw))
}

// checkJSONContentType refuses a POST whose Content-Type is not
// application/json (parameters such as charset are allowed).
func checkJSONContentType(ct string) error {
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		shown := "no Content-Type"
		if ct != "" {
			shown = fmt.Sprintf("Content-Type %q", clip(ct))
		}
		return exgate.Errorf(exgate.CodeUnsupportedMediaType, "a POST body must be JSON sent as Content-Type application/json, not %s", shown)
	}
	return nil
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, exgate.Errorf(exgate.CodePayloadTooLarge, "the body is larger than %d bytes", MaxBodyBytes)
		}
		return nil, &exgate.Error{Code: exgate.CodeInvalidParameter, Detail: "the body could not be read", Err: err}
	}
	return body, nil
}

// rateText writes a limit for people: "20 requests per 1s".
func rateText(l exgate.RateLimit) string {
	return strconv.Itoa(l.Rate) + " requests per " + l.Period.String()
}
