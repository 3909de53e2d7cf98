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
	"github.com/exgate/exgate/cmd/internal/gateway"
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

	handler, jr, exchanges := gateway.Build(cfg, st, state, log)

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
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
	if cfg.PprofAddr != "" {
		go servePprof(ctx, cfg.PprofAddr, log)
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

func storeName(c *gateway.Config) string {
	if gateway.IsPostgresURL(c.DatabaseURL) {
		return "postgres"
	}
	return "sqlite:" + c.DataDir
}

func stateName(c *gateway.Config) string {
	if c.RedisURL != "" {
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
