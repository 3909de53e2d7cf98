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

	"github.com/exgate/exgate/cmd/internal/gateway"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/metrics"
)

// runServe runs the gateway until ctx is done; demo first ensures the demo
// keys and prints how to call them.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, demo bool) error {
	name := "serve"
	if demo {
		name = "demo"
	}
	fs, cfg := gateway.NewFlagSet(name, getenv, stderr, true)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", name, fs.Arg(0))
	}
	if demo && cfg.ConsoleAddr == "" && !flagSet(fs, "console-addr") && getenv("EXGATE_CONSOLE_ADDR") == "" {
		// The demo shows the console unless told otherwise
		// (docs/contract.md 2.7).
		cfg.ConsoleAddr = demoConsoleAddr
	}
	log := gateway.NewLogger(cfg, stderr)
	st, err := gateway.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	state, err := gateway.OpenState(ctx, cfg)
	if err != nil {
		return err
	}
	defer state.Close()
	// The instance's heartbeat in the store: PostgreSQL without Redis
	// starts only with --single-instance, and an instance in process only
	// while no other is live on the store (docs/contract.md section 4).
	stopInstance, err := gateway.StartInstance(ctx, cfg, st, log)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer stopInstance()

	var m *metrics.Metrics
	if cfg.MetricsAddr != "" || cfg.ConsoleAddr != "" {
		// The console's health page reads the pacing collectors; they
		// are served at /metrics only on --metrics-addr.
		m = metrics.New()
	}
	g, err := gateway.Build(cfg, st, state, log, gateway.WithMetrics(m))
	if err != nil {
		return err
	}
	handler, jr := g.API, g.Journal

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on --addr %s: %w (another process holds it, perhaps another exgate: stop it or move the API with --addr or EXGATE_ADDR)", cfg.Addr, err)
	}
	var mln net.Listener
	if cfg.MetricsAddr != "" {
		// Listened on before serving, so that a taken port stops the start.
		if mln, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			ln.Close()
			return fmt.Errorf("listen on --metrics-addr %s: %w (move it with --metrics-addr or EXGATE_METRICS_ADDR)", cfg.MetricsAddr, err)
		}
		if sameAddr(mln.Addr(), ln.Addr()) {
			ln.Close()
			mln.Close()
			return fmt.Errorf("--metrics-addr %s is the API's address: metrics are served apart from the API", cfg.MetricsAddr)
		}
	}
	var cln net.Listener
	var consoleHandler http.Handler
	if cfg.ConsoleAddr != "" {
		if cln, err = net.Listen("tcp", cfg.ConsoleAddr); err != nil {
			ln.Close()
			closeListener(mln)
			return fmt.Errorf("listen on --console-addr %s: %w (another process holds it, perhaps another exgate demo: stop it or move the console with --console-addr or EXGATE_CONSOLE_ADDR)", cfg.ConsoleAddr, err)
		}
		if sameAddr(cln.Addr(), ln.Addr()) {
			ln.Close()
			cln.Close()
			closeListener(mln)
			return fmt.Errorf("--console-addr %s is the API's address: the console is served apart from the API", cfg.ConsoleAddr)
		}
		// The console's own origin is its configured address (the one it
		// listens on, when --console-url is unset), never a request's Host.
		ccfg := *cfg
		if ccfg.ConsoleURL == "" {
			ccfg.ConsoleAddr = cln.Addr().String()
			if ccfg.ConsoleURL, err = ccfg.ConsoleBaseURL(); err != nil {
				ln.Close()
				cln.Close()
				closeListener(mln)
				return err
			}
		}
		if consoleHandler, err = gateway.BuildConsole(&ccfg, st, g, m, log); err != nil {
			ln.Close()
			cln.Close()
			closeListener(mln)
			return err
		}
	}
	if demo {
		err := printDemo(ctx, st, g.Exchanges[sim.Name], stdout, "http://"+ln.Addr().String(), time.Now)
		if err == nil && cln != nil {
			err = printConsoleLogin(ctx, st, cfg, cln.Addr(), stdout)
		}
		if err != nil {
			ln.Close()
			closeListener(mln)
			closeListener(cln)
			return err
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go jr.Run(ctx)
	go g.Risk.Run(ctx)
	go g.RunPaper(ctx)
	if cfg.PprofAddr != "" {
		go servePprof(ctx, cfg.PprofAddr, log)
	}
	if mln != nil {
		go serveMetrics(ctx, mln, m, log)
	}
	if cln != nil {
		go serveConsole(ctx, cln, consoleHandler, log)
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
	// The outcomes and audit records of the last answers, before the
	// store closes.
	if err := jr.Drain(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := handler.Drain(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

func storeName(c *gateway.Config) string {
	if gateway.IsPostgresURL(c.DatabaseURL) {
		return "postgres"
	}
	return "sqlite:" + c.DataDir
}

func stateName(c *gateway.Config) string {
	mode, _ := c.SharedStateMode()
	return mode
}

// sameAddr reports whether two listeners' addresses are the same.
func sameAddr(a, b net.Addr) bool { return a.String() == b.String() }

// serveMetrics serves Prometheus metrics at /metrics on their own
// listener, apart from the API.
func serveMetrics(ctx context.Context, ln net.Listener, m *metrics.Metrics, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("metrics", "err", err)
	}
}

// serveConsole serves the web console on its own listener, apart from
// the API (docs/contract.md 2.7).
func serveConsole(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 40 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	log.Info("console listening", "addr", ln.Addr().String())
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("console", "err", err)
	}
}

func closeListener(ln net.Listener) {
	if ln != nil {
		_ = ln.Close()
	}
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
