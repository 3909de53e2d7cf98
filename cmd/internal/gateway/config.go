package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
	"github.com/exgate/exgate/httpapi"
	"github.com/exgate/exgate/internal/secretbox"
	"github.com/exgate/exgate/postgres"
	"github.com/exgate/exgate/sqlite"
)

// Config is every setting of docs/contract.md section 1: flag, else environment
// variable, else default.
type Config struct {
	Addr        string
	DataDir     string
	DatabaseURL string
	RedisURL    string
	// SingleInstance: this is the only instance on its store, its replay
	// guard and limits in process (PostgreSQL without Redis needs it).
	SingleInstance bool
	MasterKey      string
	// ExchangeSettings are each adapter's settings by exchange and
	// setting name (exchange.Setting): --<exchange>-<setting>, else
	// EXGATE_<EXCHANGE>_<SETTING>, else its default. A setting left out
	// is its default.
	ExchangeSettings map[string]exchange.Settings
	RequireTimestamp bool
	// StreamConnectionsPerKey bounds the stream connections one client
	// key holds open, across instances.
	StreamConnectionsPerKey int
	ClientRate              int
	ClientBurst             int
	PprofAddr               string
	Coalesce                bool
	RequestTimeout          time.Duration
	MarketDataMaxAge        time.Duration
	LogFormat               string
	TrustedProxies          string
	// MetricsAddr serves Prometheus metrics when set (never the API's
	// address).
	MetricsAddr string
	// ConsoleAddr serves the web console when set (never the API's
	// address); ConsoleURL is its public origin when it is reached
	// through a proxy or over https (docs/contract.md 2.7).
	ConsoleAddr string
	ConsoleURL  string
	// MarketDataLimit, OrderLimit and WithdrawalLimit are the per-route
	// client limits, "N/period" ("200/10s") or "0" for none.
	MarketDataLimit string
	OrderLimit      string
	WithdrawalLimit string
	// envErrs are the environment variables whose values could not be
	// read; Validate reports them rather than running on a default.
	envErrs []error
	// warn receives warnings that do not stop the command (stderr).
	warn io.Writer
}

// DemoConsoleAddr is where `exgate demo` serves the console unless
// --console-addr or EXGATE_CONSOLE_ADDR says otherwise (docs/contract.md
// 2.7).
const DemoConsoleAddr = "127.0.0.1:8090"

// NewFlagSet returns a flag set for cmd with the storage flags every
// command takes; server adds the serve flags.
func NewFlagSet(cmd string, getenv func(string) string, stderr io.Writer, server bool) (*flag.FlagSet, *Config) {
	fs := flag.NewFlagSet("exgate "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &Config{MasterKey: getenv("EXGATE_MASTER_KEY"), warn: stderr}
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
	fs.StringVar(&c.DataDir, "data-dir", env("EXGATE_DATA_DIR", "./exgate-data"), "directory of the embedded store and master key (env EXGATE_DATA_DIR)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("EXGATE_DATABASE_URL", ""), "postgres://… to use PostgreSQL instead of SQLite (env EXGATE_DATABASE_URL)")
	if server || cmd == "console-login" {
		consoleHelp := "serve the web console on this address, apart from the API; off when empty (env EXGATE_CONSOLE_ADDR)"
		if cmd == "demo" {
			consoleHelp = "serve the web console on this address, apart from the API; empty: " + DemoConsoleAddr + " (env EXGATE_CONSOLE_ADDR)"
		}
		fs.StringVar(&c.ConsoleAddr, "console-addr", env("EXGATE_CONSOLE_ADDR", ""), consoleHelp)
		fs.StringVar(&c.ConsoleURL, "console-url", env("EXGATE_CONSOLE_URL", ""), "the console's public URL when it is reached through a proxy or over https; empty: http://<console-addr> (env EXGATE_CONSOLE_URL)")
	}
	if server {
		fs.StringVar(&c.Addr, "addr", env("EXGATE_ADDR", "127.0.0.1:8080"), "listen address (env EXGATE_ADDR)")
		fs.StringVar(&c.RedisURL, "redis-url", env("EXGATE_REDIS_URL", ""), "redis://… to share limits, replay guard and nonces between instances (env EXGATE_REDIS_URL)")
		fs.BoolVar(&c.SingleInstance, "single-instance", envBool("EXGATE_SINGLE_INSTANCE", false), "this is the only instance on its PostgreSQL store: run without Redis, refusing to start while another instance is live there (env EXGATE_SINGLE_INSTANCE)")
		c.ExchangeSettings = map[string]exchange.Settings{}
		for _, a := range adapters() {
			values := exchange.Settings{}
			c.ExchangeSettings[a.Name] = values
			for _, st := range a.Settings {
				name := a.EnvVar(st)
				if v := getenv(name); v != "" && st.Check != nil {
					parsed(name, st.Check(v))
				}
				values[st.Name] = env(name, st.Default)
				fs.Var(settingFlag{values, st.Name}, a.Flag(st), st.Help+" (env "+name+")")
			}
		}
		fs.BoolVar(&c.RequireTimestamp, "require-timestamp", envBool("EXGATE_REQUIRE_TIMESTAMP", true), "refuse signed requests without a timestamp parameter; false lets GETs go without one, so a captured GET reads forever (env EXGATE_REQUIRE_TIMESTAMP)")
		fs.IntVar(&c.StreamConnectionsPerKey, "stream-connections-per-key", envInt("EXGATE_STREAM_CONNECTIONS_PER_KEY", httpapi.DefaultStreamConnectionsPerKey), "stream connections one client key may hold open, across instances; one more handshake is 429 (env EXGATE_STREAM_CONNECTIONS_PER_KEY)")
		fs.IntVar(&c.ClientRate, "client-rate-limit", envInt("EXGATE_CLIENT_RATE_LIMIT", 50), "requests per second allowed to each client key, 0 for none (env EXGATE_CLIENT_RATE_LIMIT)")
		fs.IntVar(&c.ClientBurst, "client-burst", envInt("EXGATE_CLIENT_BURST", 100), "burst allowed to each client key (env EXGATE_CLIENT_BURST)")
		fs.StringVar(&c.PprofAddr, "pprof-addr", env("EXGATE_PPROF_ADDR", ""), "serve net/http/pprof on this address; off when empty (env EXGATE_PPROF_ADDR)")
		fs.DurationVar(&c.RequestTimeout, "request-timeout", envDuration("EXGATE_REQUEST_TIMEOUT", 10*time.Second), "deadline of a request's exchange work; pacing that would wait longer answers 503 (env EXGATE_REQUEST_TIMEOUT)")
		fs.BoolVar(&c.Coalesce, "market-data-coalescing", envBool("EXGATE_MARKET_DATA_COALESCING", true), "identical concurrent klines and order-book requests share one exchange call (env EXGATE_MARKET_DATA_COALESCING)")
		fs.DurationVar(&c.MarketDataMaxAge, "market-data-max-age", envDuration("EXGATE_MARKET_DATA_MAX_AGE", 0), "reuse a klines or order-book answer for this long; 0 shares only overlapping calls (env EXGATE_MARKET_DATA_MAX_AGE)")
		fs.StringVar(&c.TrustedProxies, "trusted-proxies", env("EXGATE_TRUSTED_PROXIES", ""), "comma-separated CIDR prefixes of reverse proxies whose X-Forwarded-For names the client; empty: none (env EXGATE_TRUSTED_PROXIES)")
		fs.StringVar(&c.MetricsAddr, "metrics-addr", env("EXGATE_METRICS_ADDR", ""), "serve Prometheus metrics at /metrics on this address, apart from the API; off when empty (env EXGATE_METRICS_ADDR)")
		fs.StringVar(&c.MarketDataLimit, "market-data-limit", env("EXGATE_MARKET_DATA_LIMIT", rateText(httpapi.DefaultRouteLimits().MarketData)), "market-data requests allowed to each client key, N/period, 0 for none (env EXGATE_MARKET_DATA_LIMIT)")
		fs.StringVar(&c.OrderLimit, "order-limit", env("EXGATE_ORDER_LIMIT", rateText(httpapi.DefaultRouteLimits().Orders)), "order and cancel requests allowed to each client key, N/period, 0 for none (env EXGATE_ORDER_LIMIT)")
		fs.StringVar(&c.WithdrawalLimit, "withdrawal-limit", env("EXGATE_WITHDRAWAL_LIMIT", rateText(httpapi.DefaultRouteLimits().Withdrawals)), "withdrawal requests allowed to each client key, N/period, 0 for none (env EXGATE_WITHDRAWAL_LIMIT)")
		fs.StringVar(&c.LogFormat, "log-format", env("EXGATE_LOG_FORMAT", "text"), "log format: text or json (env EXGATE_LOG_FORMAT)")
	}
	return fs, c
}

func (c *Config) Validate() error {
	errs := append([]error(nil), c.envErrs...)
	if c.DatabaseURL != "" && !IsPostgresURL(c.DatabaseURL) {
		errs = append(errs, fmt.Errorf("--database-url must be a postgres:// or postgresql:// URL"))
	}
	if IsPostgresURL(c.DatabaseURL) && c.MasterKey == "" {
		errs = append(errs, errors.New("EXGATE_MASTER_KEY (base64 of 32 bytes) is required with PostgreSQL: every instance must share it"))
	}
	if c.MasterKey != "" {
		if k, err := base64.StdEncoding.DecodeString(c.MasterKey); err != nil || len(k) != 32 {
			errs = append(errs, errors.New("EXGATE_MASTER_KEY must be the base64 encoding of 32 bytes (e.g. openssl rand -base64 32)"))
		}
	}
	if c.StreamConnectionsPerKey < 0 {
		errs = append(errs, errors.New("--stream-connections-per-key must not be negative"))
	}
	if c.ClientRate < 0 || c.ClientBurst < 0 {
		errs = append(errs, errors.New("--client-rate-limit and --client-burst must not be negative"))
	}
	errs = append(errs, c.checkExchangeSettings()...)
	if c.RequestTimeout < 0 || c.MarketDataMaxAge < 0 {
		errs = append(errs, errors.New("--request-timeout and --market-data-max-age must not be negative"))
	}
	if c.LogFormat != "" && c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, errors.New("--log-format must be text or json"))
	}
	if err := c.checkSharedState(); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseTrustedProxies(c.TrustedProxies); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.routeLimits(); err != nil {
		errs = append(errs, err)
	}
	if c.MetricsAddr != "" && c.MetricsAddr == c.Addr && !strings.HasSuffix(c.Addr, ":0") {
		errs = append(errs, errors.New("--metrics-addr must differ from --addr: metrics are never served on the API's address"))
	}
	if c.ConsoleAddr != "" && !strings.HasSuffix(c.ConsoleAddr, ":0") && (c.ConsoleAddr == c.Addr || c.ConsoleAddr == c.MetricsAddr) {
		errs = append(errs, errors.New("--console-addr must differ from --addr and --metrics-addr: the console has an address of its own"))
	}
	if _, err := c.ConsoleBaseURL(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkExchangeSettings checks each adapter's settings by its own rules,
// naming the flag and the variable.
func (c *Config) checkExchangeSettings() []error {
	var errs []error
	for _, a := range adapters() {
		for _, st := range a.Settings {
			if st.Check == nil {
				continue
			}
			if err := st.Check(c.ExchangeSettings[a.Name][st.Name]); err != nil {
				errs = append(errs, fmt.Errorf("--%s (env %s): %w", a.Flag(st), a.EnvVar(st), err))
			}
		}
	}
	return errs
}

// settingFlag is one adapter setting as a flag.
type settingFlag struct {
	values exchange.Settings
	name   string
}

func (f settingFlag) String() string     { return f.values[f.name] }
func (f settingFlag) Set(v string) error { f.values[f.name] = v; return nil }

// ConsoleBaseURL is the URL the console's login links start with:
// --console-url, else http:// and --console-addr (a wildcard host, such as
// :8090 or 0.0.0.0:8090, is written as 127.0.0.1). Empty when the console
// is off and no URL is set.
func (c *Config) ConsoleBaseURL() (string, error) {
	if c.ConsoleURL != "" {
		u, err := url.Parse(c.ConsoleURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return "", fmt.Errorf("--console-url (EXGATE_CONSOLE_URL) %q must be an http(s) URL of the console's origin, such as https://console.example", c.ConsoleURL)
		}
		return u.Scheme + "://" + u.Host, nil
	}
	if c.ConsoleAddr == "" {
		return "", nil
	}
	host, port, err := net.SplitHostPort(c.ConsoleAddr)
	if err != nil {
		return "", fmt.Errorf("--console-addr (EXGATE_CONSOLE_ADDR) %q is not host:port: %w", c.ConsoleAddr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// OpenStore opens PostgreSQL or the SQLite file in the data dir, with the
// master key from the environment or, for SQLite, the data dir.
func OpenStore(ctx context.Context, c *Config) (exgate.Store, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var key []byte
	var err error
	if c.MasterKey != "" {
		key, err = secretbox.ParseKey(c.MasterKey)
		if err != nil {
			return nil, fmt.Errorf("EXGATE_MASTER_KEY: %w", err)
		}
	}
	if IsPostgresURL(c.DatabaseURL) {
		st, err := postgres.Open(ctx, c.DatabaseURL, key)
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL store: %w", err)
		}
		if err := checkMasterKey(ctx, st); err != nil {
			return nil, errors.Join(fmt.Errorf("open PostgreSQL store: %w", err), st.Close())
		}
		return st, nil
	}
	if fi, err := os.Stat(c.DataDir); err == nil && fi.IsDir() && fi.Mode().Perm()&0o077 != 0 && runtime.GOOS != "windows" && c.warn != nil {
		fmt.Fprintf(c.warn, "exgate: warning: data dir %s is open to group or others (mode %04o); it holds the store and the master key: run chmod 700 %s\n",
			c.DataDir, fi.Mode().Perm(), c.DataDir)
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if key == nil {
		key, err = secretbox.LoadOrCreateKeyFile(filepath.Join(c.DataDir, "master.key"))
		if err != nil {
			return nil, fmt.Errorf("master key: %w", err)
		}
	}
	st, err := sqlite.Open(ctx, filepath.Join(c.DataDir, "exgate.db"), key)
	if err != nil {
		return nil, fmt.Errorf("open SQLite store in %s: %w", c.DataDir, err)
	}
	if err := checkMasterKey(ctx, st); err != nil {
		return nil, errors.Join(fmt.Errorf("open SQLite store in %s: %w", c.DataDir, err), st.Close())
	}
	return st, nil
}
