package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/api"
	"github.com/exgate/exgate/coalesce"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/journal"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/redis"
)

// sharedState is what instances must share: in process by default, in
// Redis when EXGATE_REDIS_URL is set.
type sharedState struct {
	limiter exgate.Limiter
	nonces  kraken.Nonces
	// keyLocks serializes the calls on one Kraken API key across
	// instances; nil in process, where the adapter does it itself.
	keyLocks kraken.KeyLocks
	// metadata shares Binance's exchangeInfo between instances; nil in
	// process, where the adapter keeps its own.
	metadata binance.MetadataCache
	replay   interface {
		FirstUse(ctx context.Context, key string, expiry time.Time) (bool, error)
	}
	ping  func(ctx context.Context) error
	close func() error
}

func openState(ctx context.Context, c *config) (*sharedState, error) {
	if c.redisURL == "" {
		return &sharedState{
			limiter: localstate.NewLimiter(nil),
			nonces:  localstate.NewNonces(),
			replay:  localstate.NewReplayGuard(nil),
			ping:    func(context.Context) error { return nil },
			close:   func() error { return nil },
		}, nil
	}
	rc, err := redis.Open(ctx, c.redisURL)
	if err != nil {
		return nil, fmt.Errorf("open Redis: %w", err)
	}
	const prefix = "exgate:"
	return &sharedState{
		limiter:  redis.NewLimiter(rc, prefix),
		nonces:   redis.NewNonces(rc, prefix),
		keyLocks: redis.NewLocks(rc, prefix),
		metadata: redis.NewCache(rc, prefix),
		replay:   redis.NewReplayGuard(rc, prefix),
		ping:     rc.Ping,
		close:    rc.Close,
	}, nil
}

func newLogger(c *config, w io.Writer) *slog.Logger {
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// runServe runs the gateway until ctx is done; demo first ensures the demo
// keys and prints how to call them.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, demo bool) error {
	name := "serve"
	if demo {
		name = "demo"
	}
	fs, cfg := newFlagSet(name, getenv, stderr, true)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", name, fs.Arg(0))
	}
	log := newLogger(cfg, stderr)
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	state, err := openState(ctx, cfg)
	if err != nil {
		return err
	}
	defer state.close()

	handler, jr, exchanges := buildGateway(cfg, st, state, log)

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	if demo {
		if err := printDemo(ctx, st, exchanges[exgate.ExchangeSim], stdout, "http://"+ln.Addr().String()); err != nil {
			ln.Close()
			return err
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go jr.Run(ctx)
	if cfg.pprofAddr != "" {
		go servePprof(ctx, cfg.pprofAddr, log)
	}

	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		// Long enough for an order submission (15 s) and its record.
		WriteTimeout:   40 * time.Second,
		IdleTimeout:    120 * time.Second,
		MaxHeaderBytes: 16 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("exgate listening", "addr", ln.Addr().String(), "store", storeName(cfg), "sharedState", stateName(cfg))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

func storeName(c *config) string {
	if isPostgresURL(c.databaseURL) {
		return "postgres"
	}
	return "sqlite:" + c.dataDir
}

func stateName(c *config) string {
	if c.redisURL != "" {
		return "redis"
	}
	return "in-process"
}

// servePprof serves the profiler on its own listener, only when asked for.
func servePprof(ctx context.Context, addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	log.Info("pprof listening", "addr", addr)
	if err := hs.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("pprof", "err", err)
	}
}

// buildGateway wires the exchanges, the journal and the HTTP API over a
// store and shared state.
func buildGateway(cfg *config, st appStore, state *sharedState, log *slog.Logger) (http.Handler, *journal.Service, map[string]exgate.Exchange) {
	adapters := map[string]exgate.Exchange{
		exgate.ExchangeSim: sim.New(sim.Options{Ledger: st}),
		exgate.ExchangeBinance: binance.New(binance.Options{
			BaseURL: cfg.binanceURL, HTTPClient: newUpstreamClient(), Limiter: state.limiter, MetadataCache: state.metadata, KlineMemory: cfg.klineMemory, Logger: log.With("exchange", "binance"),
		}),
		exgate.ExchangeKraken: kraken.New(kraken.Options{
			BaseURL: cfg.krakenURL, HTTPClient: newUpstreamClient(), Limiter: state.limiter, Nonces: state.nonces, KeyLocks: state.keyLocks, Tier: kraken.Tier(cfg.krakenTier), Logger: log.With("exchange", "kraken"),
		}),
		exgate.ExchangeGateio: gateio.New(gateio.Options{
			BaseURL: cfg.gateioURL, HTTPClient: newUpstreamClient(), Limiter: state.limiter, Logger: log.With("exchange", "gateio"),
		}),
	}
	exchanges := make(map[string]exgate.Exchange, len(adapters))
	for name, ex := range adapters {
		if cfg.coalesce {
			ex = coalesce.New(ex, coalesce.Options{MaxAge: cfg.marketDataMaxAge})
		}
		exchanges[name] = ex
	}
	jr := journal.New(journal.Options{Store: st, Exchanges: exchanges, Logger: log})
	srv := httpapi.New(httpapi.Config{
		Keys:             st,
		Exchanges:        exchanges,
		Ledger:           jr,
		Replay:           state.replay,
		Limiter:          state.limiter,
		ClientLimit:      exgate.RateLimit{Rate: cfg.clientRate, Period: time.Second, Burst: max(cfg.clientBurst, cfg.clientRate)},
		RequireTimestamp: cfg.requireTimestamp,
		RequestTimeout:   cfg.requestTimeout,
		Ready: func(ctx context.Context) error {
			if err := st.Ping(ctx); err != nil {
				return fmt.Errorf("store: %w", err)
			}
			if err := state.ping(ctx); err != nil {
				return fmt.Errorf("redis: %w", err)
			}
			return nil
		},
		OpenAPI: api.Spec(),
		Logger:  log,
	})
	return srv, jr, exchanges
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
