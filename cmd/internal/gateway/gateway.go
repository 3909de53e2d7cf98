// Package gateway builds the exgate gateway from its settings: the store,
// the state instances share, the exchange adapters, the journal and the
// HTTP API. It is the wiring of cmd/exgate, which parses the settings and
// serves what Build returns, and of cmd/exgate-bench, which measures that
// same gateway in process; no other package wires the gateway.
//
// The exchanges are one list (adapters.go): every exchange's settings,
// its credential check, doctor's and the console's checks come from it.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/coalesce"
	"github.com/exgate/exgate/exchange"
	"github.com/exgate/exgate/exchange/paper"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/metrics"
	"github.com/exgate/exgate/redis"
	"github.com/exgate/exgate/risk"
	"github.com/exgate/exgate/stream"
)

// State is what instances must share: in process by default, in
// Redis when EXGATE_REDIS_URL is set.
type State struct {
	limiter exgate.Limiter
	// shared is what the adapters take of it (exchange.Shared).
	shared exchange.Shared
	replay interface {
		Claim(ctx context.Context, owner, key, route string, expiry time.Time, quota int) (bool, string, error)
		Release(ctx context.Context, owner, key, route string) error
	}
	// slots counts each client key's open stream connections.
	slots interface {
		Acquire(ctx context.Context, key, id string, limit int, until time.Time) (bool, error)
		Renew(ctx context.Context, key, id string, until time.Time) error
		Release(ctx context.Context, key, id string) error
	}
	ping  func(ctx context.Context) error
	close func() error
	// replaySize is the replay guard's size where it is cheaply known
	// (in process); nil with Redis.
	replaySize func() int
}

// Close closes the connection to Redis, if any.
func (s *State) Close() error { return s.close() }

// OpenState opens the shared state c names: Redis, or in process.
func OpenState(ctx context.Context, c *Config) (*State, error) {
	if c.RedisURL == "" {
		replay := localstate.NewReplayGuard(nil)
		return &State{
			limiter:    localstate.NewLimiter(nil),
			shared:     exchange.Shared{Nonces: localstate.NewNonces()},
			replay:     replay,
			slots:      localstate.NewSlots(nil),
			replaySize: replay.Len,
			ping:       func(context.Context) error { return nil },
			close:      func() error { return nil },
		}, nil
	}
	rc, err := redis.Open(ctx, c.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("open Redis: %w", err)
	}
	const prefix = "exgate:"
	return &State{
		limiter: redis.NewLimiter(rc, prefix),
		shared: exchange.Shared{
			Nonces: redis.NewNonces(rc, prefix),
			Locks:  redis.NewLocks(rc, prefix),
			Cache:  redis.NewCache(rc, prefix),
		},
		replay: redis.NewReplayGuard(rc, prefix),
		slots:  redis.NewSlots(rc, prefix),
		ping:   rc.Ping,
		close:  rc.Close,
	}, nil
}

// NewLogger logs to w in c's format.
func NewLogger(c *Config, w io.Writer) *slog.Logger {
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// Gateway is what Build wires for one instance.
type Gateway struct {
	// API is the HTTP API's handler.
	API *httpapi.Server
	// Journal records and reconciles orders, cancels and withdrawals;
	// its Run must be started.
	Journal *journal.Service
	// Adapters are the adapters built, in the order of the list.
	Adapters []exchange.Adapter
	// Exchanges are the adapters by name, as the API uses them
	// (coalescing when configured).
	Exchanges map[string]exgate.Exchange
	// Hub is the stream hub of GET /v1/stream, which the console's
	// market page shares.
	Hub *stream.Hub
	// Risk checks orders and withdrawals against the risk controls; its
	// Run announces halts and resumes on the orders channel.
	Risk *risk.Engine
	// paper are the paper switches whose watchers fill resting paper
	// orders (RunPaper).
	paper []*paper.Exchange
}

// RunPaper checks the resting orders of paper keys against the live
// books until ctx ends (docs/contract.md 2.9); serve starts it beside the
// journal's reconciler.
func (g *Gateway) RunPaper(ctx context.Context) {
	var wg sync.WaitGroup
	for _, p := range g.paper {
		wg.Go(func() { _ = p.Run(ctx) })
	}
	wg.Wait()
}

// An Option changes what Build wires, for tests and the bench; no
// setting of the command line has one.
type Option func(*buildOptions)

type buildOptions struct {
	metrics  *metrics.Metrics
	noAudit  bool
	adapters []exchange.Adapter
}

// WithMetrics reports to m: the API's requests, the adapters' exchange
// calls and pacing, coalescing, the journal and the replay guard's size.
func WithMetrics(m *metrics.Metrics) Option { return func(o *buildOptions) { o.metrics = m } }

// WithoutAudit leaves the audit trail out (the bench measures what it
// costs).
func WithoutAudit() Option { return func(o *buildOptions) { o.noAudit = true } }

// WithAdapters builds these adapters in place of the registered ones of
// the same names (added when the name is new): the bench's synthetic
// exchange, or an adapter built with options no setting covers.
func WithAdapters(as ...exchange.Adapter) Option {
	return func(o *buildOptions) { o.adapters = append(o.adapters, as...) }
}

// Build wires the exchanges, the journal, the stream hub and the HTTP API
// over a store and shared state.
func Build(cfg *Config, st exgate.Store, state *State, log *slog.Logger, opts ...Option) (*Gateway, error) {
	var o buildOptions
	for _, opt := range opts {
		opt(&o)
	}
	m := o.metrics
	limiter := state.limiter
	upstream := func(exchange.Adapter) *http.Client { return newUpstreamClient() }
	if m != nil {
		limiter = m.Limiter(limiter)
		upstream = func(a exchange.Adapter) *http.Client {
			c := newUpstreamClient()
			c.Transport = m.Transport(a.Name, c.Transport, a.Weight)
			return c
		}
		if state.replaySize != nil {
			m.ReplayGuardSize(state.replaySize)
		}
	}
	list := adapters()
	for _, a := range o.adapters {
		if i := slices.IndexFunc(list, func(b exchange.Adapter) bool { return b.Name == a.Name }); i >= 0 {
			list[i] = a
		} else {
			list = append(list, a)
		}
	}
	built := make(map[string]exgate.Exchange, len(list))
	for _, a := range list {
		if m != nil && a.WeightLimit > 0 {
			m.SetWeightLimit(a.Name, a.WeightLimit)
		}
		settings := exchange.Settings{}
		for _, s := range a.Settings {
			settings[s.Name] = s.Default
		}
		maps.Copy(settings, cfg.ExchangeSettings[a.Name])
		env := exchange.Env{Settings: settings, Limiter: limiter, Logger: log.With("exchange", a.Name), Store: st, Shared: state.shared}
		if !a.InProcess {
			env.HTTPClient = upstream(a)
		}
		ex, err := a.Build(env)
		if err != nil {
			return nil, fmt.Errorf("build the %s adapter: %w", a.Name, err)
		}
		built[a.Name] = ex
	}
	exchanges := make(map[string]exgate.Exchange, len(built))
	for name, ex := range built {
		if cfg.Coalesce {
			opts := coalesce.Options{MaxAge: cfg.MarketDataMaxAge}
			if m != nil {
				opts.Hit = func(kind string) { m.CoalesceHit(name, kind) }
			}
			ex = coalesce.New(ex, opts)
		}
		exchanges[name] = ex
	}
	// Paper keys (docs/contract.md 2.9): every real exchange is reached
	// through its paper switch, which sends a paper key's orders and
	// wallet to the simulation on the sim ledger (the wallet of the
	// exchange simulated in process) and only its market data, through
	// the coalescer, to the exchange.
	var wallet paper.Wallet
	for _, a := range list {
		if w, ok := exgate.Ability[paper.Wallet](built[a.Name]); ok && a.InProcess && wallet == nil {
			wallet = w
		}
	}
	var watchers []*paper.Exchange
	for _, a := range list {
		if a.InProcess || wallet == nil {
			continue
		}
		p := paper.New(paper.Options{Live: exchanges[a.Name], Wallet: wallet, Store: st, Logger: log.With("exchange", a.Name, "paper", true)})
		exchanges[a.Name] = p
		watchers = append(watchers, p)
	}
	jopts := journal.Options{Store: st, Exchanges: exchanges, Logger: log}
	var observer interface {
		ObserveRequest(route, exchange string, status int, d time.Duration)
	}
	if m != nil {
		jopts.Metrics = m
		observer = m
	}
	jr := journal.New(jopts)
	trusted, _ := parseTrustedProxies(cfg.TrustedProxies) // validated with the configuration
	routeLimits, _ := cfg.routeLimits()                   // validated with the configuration
	var audit interface {
		AppendAudits(ctx context.Context, es []exgate.AuditEntry) error
	} = st
	if o.noAudit {
		audit = nil
	}
	// One stream hub for the instance: one upstream subscription per
	// exchange, channel and pair however many clients listen.
	// A key revoked or removed while a stream is open ends the stream at
	// its next ping.
	// Upstream connections open within each exchange's published
	// connection limit, in the limiter instances share.
	hub := stream.New(stream.Options{Exchanges: exchanges, Journal: jr, Logger: log,
		Revalidate:   func(ctx context.Context, cred exgate.Credential) error { return stillValid(ctx, st, cred) },
		Limiter:      state.limiter,
		ConnectLimit: connectLimits(list)})
	if m != nil {
		m.Streams(hub)
	}
	// The risk controls: limits and halts from the store, halts and
	// resumes announced on the orders channel, prices from the books the
	// hub streams (docs/risk.md).
	var eng *risk.Engine
	eng = risk.New(risk.Options{Store: st, Logger: log, Books: hub,
		Halted: func(h exgate.RiskHalt) {
			msg, _ := json.Marshal(map[string]string{"op": "halted", "reason": h.Reason})
			hub.Announce(func(k string) bool { return h.APIKey == exgate.RiskHaltAll || k == h.APIKey }, msg)
		},
		Resumed: func(apiKey string) {
			hub.Announce(func(k string) bool {
				if apiKey != exgate.RiskHaltAll && k != apiKey {
					return false
				}
				h, err := eng.Halted(context.Background(), k)
				return err == nil && h == nil
			}, []byte(`{"op":"resumed"}`))
		},
	})
	var riskMetrics interface{ RiskRefused(limit string) }
	if m != nil {
		riskMetrics = m.Risk(eng.HaltCount)
	}
	// The audit queue's gauge reads the server built below.
	var srv *httpapi.Server
	var auditMetrics interface {
		AuditWriteFailed(records int)
		AuditDropped(records int)
	}
	if m != nil && audit != nil {
		auditMetrics = m.Audit(func() int { return srv.AuditQueued() })
	}
	srv = httpapi.New(httpapi.Config{
		Keys:             st,
		Exchanges:        exchanges,
		Ledger:           jr,
		Replay:           state.replay,
		Limiter:          state.limiter,
		ClientLimit:      exgate.RateLimit{Rate: cfg.ClientRate, Period: time.Second, Burst: max(cfg.ClientBurst, cfg.ClientRate)},
		RequireTimestamp: cfg.RequireTimestamp,
		RequestTimeout:   cfg.RequestTimeout,
		Ready: []httpapi.ReadyCheck{
			{Name: "store", Check: st.Ping},
			{Name: "shared state (Redis)", Check: state.ping},
			{Name: "master key", Check: func(ctx context.Context) error { return checkMasterKey(ctx, st) }},
		},
		Controls:                st,
		Audit:                   audit,
		AuditMetrics:            auditMetrics,
		TrustedProxies:          trusted,
		RouteLimits:             routeLimits,
		Metrics:                 observer,
		OpenAPI:                 api.Spec(),
		Logger:                  log,
		Stream:                  hub,
		StreamSlots:             state.slots,
		StreamConnectionsPerKey: cfg.StreamConnectionsPerKey,
		Risk:                    eng,
		RiskMetrics:             riskMetrics,
	})
	return &Gateway{API: srv, Journal: jr, Adapters: list, Exchanges: exchanges, Hub: hub, Risk: eng, paper: watchers}, nil
}

// connectLimits are the adapters' limits on new WebSocket connections
// (exchange.Adapter.StreamConnectLimit), for the stream hub.
func connectLimits(list []exchange.Adapter) func(exchange string) (exgate.RateLimit, bool) {
	limits := map[string]exgate.RateLimit{}
	for _, a := range list {
		if a.StreamConnectLimit.Rate > 0 {
			limits[a.Name] = a.StreamConnectLimit
		}
	}
	return func(exchange string) (exgate.RateLimit, bool) {
		l, ok := limits[exchange]
		return l, ok
	}
}

// stillValid reports whether a stream's client key is active and its
// exchange key still the same credential. A store that cannot be read
// keeps the stream: only a definite answer ends it.
func stillValid(ctx context.Context, st exgate.Store, cred exgate.Credential) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	k, err := st.ClientKey(ctx, cred.ClientAPIKey)
	if err == nil && !k.Active() {
		return errors.New("the client key was revoked")
	}
	if errors.Is(err, exgate.ErrNotFound) {
		return errors.New("the client key is gone")
	}
	c, err := st.Credential(ctx, cred.ClientAPIKey, cred.Name)
	if errors.Is(err, exgate.ErrNotFound) || (err == nil && c.ID != cred.ID) {
		return errors.New("the exchange key was removed or replaced")
	}
	return nil
}

// newUpstreamClient is the HTTP client of one exchange adapter: connections
// to the exchange are kept alive and reused by concurrent requests (the
// default transport keeps only two idle connections per host, which under
// load means a new TCP and TLS handshake for most calls).
func newUpstreamClient() *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          512,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   5 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
	}
}

// NewClientKey makes a key pair: a public key of 32 base32 characters
// and a 256-bit secret in base64url, which clients use as the raw bytes of
// the HMAC key.
func NewClientKey(ctx context.Context, st exgate.Store, label string, legacySigning bool) (exgate.ClientKey, error) {
	if len(label) > 200 {
		return exgate.ClientKey{}, errors.New("--label must be at most 200 characters")
	}
	var secret [32]byte
	var public [20]byte
	_, _ = rand.Read(secret[:])
	_, _ = rand.Read(public[:])
	k := exgate.ClientKey{
		APIKey:    strings.ToLower(base32.StdEncoding.EncodeToString(public[:])),
		Secret:    base64.RawURLEncoding.EncodeToString(secret[:]),
		Label:     label,
		CreatedAt: time.Now().UTC(),
		// Without a timestamp a POST can be replayed (docs/signing.md).
		LegacySigning: legacySigning,
	}
	if err := st.CreateClientKey(ctx, k); err != nil {
		return exgate.ClientKey{}, fmt.Errorf("create key: %w", err)
	}
	return k, nil
}
