// Package gateway builds the exgate gateway from its settings: the store,
// the state instances share, the exchange adapters, the journal and the
// HTTP API. It is the wiring of cmd/exgate, which parses the settings and
// serves what Build returns, and of cmd/exgate-bench, which measures that
// same gateway in process; no other package wires the gateway.
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
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/coalesce"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/paper"
	"github.com/exgate/exgate/exchange/sim"
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
	nonces  kraken.Nonces
	// keyLocks serializes the calls on one Kraken API key across
	// instances; nil in process, where the adapter does it itself.
	keyLocks kraken.KeyLocks
	// metadata shares Binance's exchangeInfo between instances; nil in
	// process, where the adapter keeps its own.
	metadata binance.MetadataCache
	replay   interface {
		FirstUseBy(ctx context.Context, owner, key string, expiry time.Time, quota int) (bool, error)
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
			nonces:     localstate.NewNonces(),
			replay:     replay,
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
		limiter:  redis.NewLimiter(rc, prefix),
		nonces:   redis.NewNonces(rc, prefix),
		keyLocks: redis.NewLocks(rc, prefix),
		metadata: redis.NewCache(rc, prefix),
		replay:   redis.NewReplayGuard(rc, prefix),
		ping:     rc.Ping,
		close:    rc.Close,
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

// Build wires the exchanges, the journal, the stream hub and the HTTP API
// over a store and shared state, without metrics.
func Build(cfg *Config, st exgate.Store, state *State, log *slog.Logger) *Gateway {
	return BuildWithMetrics(cfg, st, state, log, nil)
}

// BuildWithMetrics is Build reporting to m (nil: no metrics): the API's
// requests, the adapters' exchange calls and pacing, coalescing, the
// journal and the replay guard's size.
func BuildWithMetrics(cfg *Config, st exgate.Store, state *State, log *slog.Logger, m *metrics.Metrics) *Gateway {
	limiter := state.limiter
	upstream := func(string) *http.Client { return newUpstreamClient() }
	if m != nil {
		limiter = m.Limiter(limiter)
		upstream = func(exchange string) *http.Client {
			c := newUpstreamClient()
			c.Transport = m.Transport(exchange, c.Transport)
			return c
		}
		// Binance's published request-weight limit, which its adapter
		// paces for; Gate.io reports its own in every answer.
		m.SetWeightLimit(exgate.ExchangeBinance, 6000)
		if state.replaySize != nil {
			m.ReplayGuardSize(state.replaySize)
		}
	}
	simulated := sim.New(sim.Options{Ledger: st})
	adapters := map[string]exgate.Exchange{
		exgate.ExchangeSim: simulated,
		exgate.ExchangeBinance: binance.New(binance.Options{
			BaseURL: cfg.BinanceURL, StreamURL: cfg.BinanceWSURL, WSAPIURL: cfg.BinanceWSAPIURL, HTTPClient: upstream(exgate.ExchangeBinance), Limiter: limiter, MetadataCache: state.metadata, KlineMemory: cfg.KlineMemory, Logger: log.With("exchange", "binance"),
		}),
		exgate.ExchangeKraken: kraken.New(kraken.Options{
			BaseURL: cfg.KrakenURL, HTTPClient: upstream(exgate.ExchangeKraken), Limiter: limiter, Nonces: state.nonces, KeyLocks: state.keyLocks, Tier: kraken.Tier(cfg.KrakenTier), Logger: log.With("exchange", "kraken"),
			WSURL: cfg.KrakenWSURL, WSAuthURL: cfg.KrakenWSAuthURL, WSReadTimeout: cfg.KrakenWSReadTimeout,
		}),
		exgate.ExchangeGateio: gateio.New(gateio.Options{
			BaseURL: cfg.GateioURL, HTTPClient: upstream(exgate.ExchangeGateio), Limiter: limiter, Logger: log.With("exchange", "gateio"),
			WSURL: cfg.GateioWSURL, WSPingInterval: cfg.GateioWSPing,
		}),
	}
	for name, ex := range cfg.Adapters {
		adapters[name] = ex
	}
	exchanges := make(map[string]exgate.Exchange, len(adapters))
	for name, ex := range adapters {
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
	// wallet to the simulation on the sim ledger and only its market
	// data, through the coalescer, to the exchange.
	var watchers []*paper.Exchange
	for name, ex := range exchanges {
		if name == exgate.ExchangeSim {
			continue
		}
		p := paper.New(paper.Options{Live: ex, Wallet: simulated, Store: st, Logger: log.With("exchange", name, "paper", true)})
		exchanges[name] = p
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
	if cfg.NoAudit {
		audit = nil
	}
	// One stream hub for the instance: one upstream subscription per
	// exchange, channel and pair however many clients listen.
	// A key revoked or removed while a stream is open ends the stream at
	// its next ping.
	hub := stream.New(stream.Options{Exchanges: exchanges, Journal: jr, Logger: log,
		Revalidate: func(ctx context.Context, cred exgate.Credential) error { return stillValid(ctx, st, cred) }})
	if m != nil {
		m.Streams(hub)
	}
	// The risk controls: limits and halts from the store, halts and
	// resumes announced on the orders channel (docs/risk.md).
	var eng *risk.Engine
	eng = risk.New(risk.Options{Store: st, Logger: log,
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
	srv := httpapi.New(httpapi.Config{
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
		Controls:       st,
		Audit:          audit,
		TrustedProxies: trusted,
		RouteLimits:    routeLimits,
		Metrics:        observer,
		OpenAPI:        api.Spec(),
		Logger:         log,
		Stream:         hub,
		Risk:           eng,
		RiskMetrics:    riskMetrics,
	})
	return &Gateway{API: srv, Journal: jr, Exchanges: exchanges, Hub: hub, Risk: eng, paper: watchers}
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
