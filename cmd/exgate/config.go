package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/internal/secretbox"
	"github.com/exgate/exgate/postgres"
	"github.com/exgate/exgate/sqlite"
)

// config is every setting of DESIGN.md section 1: flag, else environment
// variable, else default.
type config struct {
	addr             string
	dataDir          string
	databaseURL      string
	redisURL         string
	masterKey        string
	binanceURL       string
	krakenURL        string
	gateioURL        string
	requireTimestamp bool
	clientRate       int
	clientBurst      int
	pprofAddr        string
	coalesce         bool
	requestTimeout   time.Duration
	marketDataMaxAge time.Duration
	logFormat        string
	krakenTier       string
	trustedProxies   string
	// klineMemory is binance.Options.KlineMemory; no flag sets it (bench
	// compare turns it off to measure full conversions).
	klineMemory int
	// envErrs are the environment variables whose values could not be
	// read; validate reports them rather than running on a default.
	envErrs []error
}

// newFlagSet returns a flag set for cmd with the storage flags every
// command takes; server adds the serve flags.
func newFlagSet(cmd string, getenv func(string) string, stderr io.Writer, server bool) (*flag.FlagSet, *config) {
	fs := flag.NewFlagSet("exgate "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{masterKey: getenv("EXGATE_MASTER_KEY")}
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	// parsed reads a typed variable; a value that does not parse is an
	// error (reported by validate), never a silent default.
	parsed := func(name string, err error) {
		if err != nil {
			c.envErrs = append(c.envErrs, fmt.Errorf("%s=%q: %w", name, getenv(name), err))
		}
	}
	envBool := func(name string, def bool) bool {
		v, err := strconv.ParseBool(env(name, strconv.FormatBool(def)))
		parsed(name, err)
		return v
	}
	envInt := func(name string, def int) int {
		v, err := strconv.Atoi(env(name, strconv.Itoa(def)))
		parsed(name, err)
		return v
	}
	envDuration := func(name string, def time.Duration) time.Duration {
		v, err := time.ParseDuration(env(name, def.String()))
		parsed(name, err)
		return v
	}
	fs.StringVar(&c.dataDir, "data-dir", env("EXGATE_DATA_DIR", "./exgate-data"), "directory of the embedded store and master key (env EXGATE_DATA_DIR)")
	fs.StringVar(&c.databaseURL, "database-url", env("EXGATE_DATABASE_URL", ""), "postgres://… to use PostgreSQL instead of SQLite (env EXGATE_DATABASE_URL)")
	if server {
		fs.StringVar(&c.addr, "addr", env("EXGATE_ADDR", "127.0.0.1:8080"), "listen address (env EXGATE_ADDR)")
		fs.StringVar(&c.redisURL, "redis-url", env("EXGATE_REDIS_URL", ""), "redis://… to share limits, replay guard and nonces between instances (env EXGATE_REDIS_URL)")
		fs.StringVar(&c.binanceURL, "binance-url", env("EXGATE_BINANCE_URL", "https://api.binance.com"), "Binance REST base URL (env EXGATE_BINANCE_URL)")
		fs.StringVar(&c.krakenURL, "kraken-url", env("EXGATE_KRAKEN_URL", "https://api.kraken.com"), "Kraken REST base URL (env EXGATE_KRAKEN_URL)")
		fs.StringVar(&c.gateioURL, "gateio-url", env("EXGATE_GATEIO_URL", "https://api.gateio.ws"), "Gate.io REST base URL (env EXGATE_GATEIO_URL)")
		fs.BoolVar(&c.requireTimestamp, "require-timestamp", envBool("EXGATE_REQUIRE_TIMESTAMP", false), "refuse signed requests without a timestamp parameter (env EXGATE_REQUIRE_TIMESTAMP)")
		fs.IntVar(&c.clientRate, "client-rate-limit", envInt("EXGATE_CLIENT_RATE_LIMIT", 50), "requests per second allowed to each client key, 0 for none (env EXGATE_CLIENT_RATE_LIMIT)")
		fs.IntVar(&c.clientBurst, "client-burst", envInt("EXGATE_CLIENT_BURST", 100), "burst allowed to each client key (env EXGATE_CLIENT_BURST)")
		fs.StringVar(&c.pprofAddr, "pprof-addr", env("EXGATE_PPROF_ADDR", ""), "serve net/http/pprof on this address; off when empty (env EXGATE_PPROF_ADDR)")
		fs.DurationVar(&c.requestTimeout, "request-timeout", envDuration("EXGATE_REQUEST_TIMEOUT", 10*time.Second), "deadline of a request's exchange work; pacing that would wait longer answers 503 (env EXGATE_REQUEST_TIMEOUT)")
		fs.BoolVar(&c.coalesce, "market-data-coalescing", envBool("EXGATE_MARKET_DATA_COALESCING", true), "identical concurrent klines and order-book requests share one exchange call (env EXGATE_MARKET_DATA_COALESCING)")
		fs.DurationVar(&c.marketDataMaxAge, "market-data-max-age", envDuration("EXGATE_MARKET_DATA_MAX_AGE", 0), "reuse a klines or order-book answer for this long; 0 shares only overlapping calls (env EXGATE_MARKET_DATA_MAX_AGE)")
		fs.StringVar(&c.krakenTier, "kraken-tier", env("EXGATE_KRAKEN_TIER", string(kraken.TierStarter)), "the Kraken account's verification tier, which sets the call counter exgate paces for: starter, intermediate or pro (env EXGATE_KRAKEN_TIER)")
		fs.StringVar(&c.trustedProxies, "trusted-proxies", env("EXGATE_TRUSTED_PROXIES", ""), "comma-separated CIDR prefixes of reverse proxies whose X-Forwarded-For names the client; empty: none (env EXGATE_TRUSTED_PROXIES)")
		fs.StringVar(&c.logFormat, "log-format", env("EXGATE_LOG_FORMAT", "text"), "log format: text or json (env EXGATE_LOG_FORMAT)")
	}
	return fs, c
}

func (c *config) validate() error {
	errs := append([]error(nil), c.envErrs...)
	if c.databaseURL != "" && !isPostgresURL(c.databaseURL) {
		errs = append(errs, fmt.Errorf("--database-url must be a postgres:// or postgresql:// URL"))
	}
	if isPostgresURL(c.databaseURL) && c.masterKey == "" {
		errs = append(errs, errors.New("EXGATE_MASTER_KEY (base64 of 32 bytes) is required with PostgreSQL: every instance must share it"))
	}
	if c.masterKey != "" {
		if k, err := base64.StdEncoding.DecodeString(c.masterKey); err != nil || len(k) != 32 {
			errs = append(errs, errors.New("EXGATE_MASTER_KEY must be the base64 encoding of 32 bytes (e.g. openssl rand -base64 32)"))
		}
	}
	if c.clientRate < 0 || c.clientBurst < 0 {
		errs = append(errs, errors.New("--client-rate-limit and --client-burst must not be negative"))
	}
	switch kraken.Tier(c.krakenTier) {
	case "", kraken.TierStarter, kraken.TierIntermediate, kraken.TierPro:
	default:
		errs = append(errs, fmt.Errorf("--kraken-tier must be starter, intermediate or pro, not %q", c.krakenTier))
	}
	if c.requestTimeout < 0 || c.marketDataMaxAge < 0 {
		errs = append(errs, errors.New("--request-timeout and --market-data-max-age must not be negative"))
	}
	if err := c.checkSharedState(); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseTrustedProxies(c.trustedProxies); err != nil {
		errs = append(errs, err)
	}
	if c.logFormat != "" && c.logFormat != "text" && c.logFormat != "json" {
		errs = append(errs, errors.New("--log-format must be text or json"))
	}
	return errors.Join(errs...)
}

func isPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// openStore opens PostgreSQL or the SQLite file in the data dir, with the
// master key from the environment or, for SQLite, the data dir.
func openStore(ctx context.Context, c *config) (exgate.Store, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	var key []byte
	var err error
	if c.masterKey != "" {
		key, err = secretbox.ParseKey(c.masterKey)
		if err != nil {
			return nil, fmt.Errorf("EXGATE_MASTER_KEY: %w", err)
		}
	}
	if isPostgresURL(c.databaseURL) {
		st, err := postgres.Open(ctx, c.databaseURL, key)
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL store: %w", err)
		}
		if err := checkMasterKey(ctx, st); err != nil {
			return nil, errors.Join(fmt.Errorf("open PostgreSQL store: %w", err), st.Close())
		}
		return st, nil
	}
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if key == nil {
		key, err = secretbox.LoadOrCreateKeyFile(filepath.Join(c.dataDir, "master.key"))
		if err != nil {
			return nil, fmt.Errorf("master key: %w", err)
		}
	}
	st, err := sqlite.Open(ctx, filepath.Join(c.dataDir, "exgate.db"), key)
	if err != nil {
		return nil, fmt.Errorf("open SQLite store in %s: %w", c.dataDir, err)
	}
	if err := checkMasterKey(ctx, st); err != nil {
		return nil, errors.Join(fmt.Errorf("open SQLite store in %s: %w", c.dataDir, err), st.Close())
	}
	return st, nil
}
