// Package exchange says what an exchange adapter is to the gateway. Each
// adapter package (exchange/binance, exchange/sim, …) exports one Adapter
// value from a func (binance.Adapter()): its name, its settings, how to
// check a credential for it and how to build itself. The gateway keeps one
// list of them (cmd/internal/gateway/adapters.go) and derives the rest from
// it: the exchange names, flags, environment variables and their
// validation, usage text, `exgate doctor`'s loop and the console's health
// checks.
//
// The adapters' optional abilities (orders, streams, the exchange's clock,
// key rights, pre-encoded answers, transfers) are not declared here: they
// are the methods of the exchange built, found through any wrapper by
// exgate.Ability.
//
// This package is wiring, not domain: it holds the adapters' HTTP client,
// so it sits beside them rather than in the root package, which stays free
// of net/http.
package exchange

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
)

// Adapter is one exchange adapter as the gateway registers it.
type Adapter struct {
	// Name is the exchange's name in configuration, credentials and the
	// API ("binance"); lower-case letters and digits.
	Name string
	// Settings are the adapter's configuration. Each is the flag
	// --<name>-<setting> and the environment variable
	// EXGATE_<NAME>_<SETTING> (docs/contract.md section 1).
	Settings []Setting
	// CheckCredential refuses, before it is stored, a credential the
	// exchange would not accept: an INVALID_PARAMETER *exgate.Error whose
	// Param names the field (key, secret, passphrase). The credential's
	// name and exchange are checked before. Nil: RequireKeyAndSecret.
	CheckCredential func(c exgate.Credential) error
	// InProcess marks an exchange simulated in this process (sim): there
	// is no exchange to reach, no clock to compare and no credential to
	// check with the exchange.
	InProcess bool
	// WeightLimit is the exchange's published request-weight limit per
	// minute, which the adapter paces for and the metrics show headroom
	// against; zero when the exchange reports its own or has none.
	WeightLimit int
	// StreamConnectLimit is the exchange's published limit on new
	// WebSocket connections per IP address, which the stream hub's
	// upstream starts keep within (shared by the instances behind one
	// address); zero Rate: none.
	StreamConnectLimit exgate.RateLimit
	// Weight reads the request weight the exchange reports in an
	// answer's headers, for the metrics: used, and its limit when the
	// exchange reports that too (else 0); ok false when the answer
	// carries none. Nil: the exchange reports none.
	Weight func(h http.Header) (used, limit float64, ok bool)
	// Build builds the adapter from its settings and the gateway's
	// shared dependencies.
	Build func(env Env) (exgate.Exchange, error)
}

// Setting is one configuration value of an adapter.
type Setting struct {
	// Name follows the exchange's name in the flag and the environment
	// variable: "url", "ws-url", "tier".
	Name string
	// Default is the value when neither flag nor variable is given.
	Default string
	// Help is the flag's usage text (the variable is added to it).
	Help string
	// Check refuses a value the adapter cannot use; nil accepts any.
	Check func(value string) error
}

// Flag is the setting's flag name, without the dashes: "binance-url".
func (a Adapter) Flag(s Setting) string { return a.Name + "-" + s.Name }

// EnvVar is the setting's environment variable: "EXGATE_BINANCE_URL".
func (a Adapter) EnvVar(s Setting) string {
	return "EXGATE_" + strings.ToUpper(strings.ReplaceAll(a.Name+"-"+s.Name, "-", "_"))
}

// Check checks the credential for this exchange: the adapter's own rule,
// else RequireKeyAndSecret.
func (a Adapter) Check(c exgate.Credential) error {
	if a.CheckCredential != nil {
		return a.CheckCredential(c)
	}
	return RequireKeyAndSecret(c)
}

// CheckCredential refuses a credential no exchange of adapters would
// accept: the name's rules (exgate.Credential.Check), an exchange of the
// list, and that exchange's own rule (Adapter.Check), or, for a paper key
// (docs/contract.md 2.9), an exchange not in process and no key material.
// The error is an INVALID_PARAMETER *exgate.Error whose Param names the
// field.
func CheckCredential(adapters []Adapter, c exgate.Credential) error {
	if err := c.Check(); err != nil {
		return err
	}
	i := slices.IndexFunc(adapters, func(a Adapter) bool { return a.Name == c.Exchange })
	if i < 0 {
		names := make([]string, len(adapters))
		for i, a := range adapters {
			names[i] = a.Name
		}
		return exgate.ParamError("exchange", "the exchange must be one of %s", strings.Join(names, ", "))
	}
	a := adapters[i]
	if c.Paper {
		if a.InProcess {
			return exgate.ParamError("paper", "a %s key is simulated already; --paper takes a real exchange", a.Name)
		}
		if c.Key != "" || c.Secret != "" || c.Passphrase != "" {
			return exgate.ParamError("key", "a paper key takes no exchange key, secret or passphrase: nothing signed is sent for it")
		}
		return nil
	}
	return a.Check(c)
}

// RequireKeyAndSecret is the credential rule of most exchanges: an API
// key and its secret.
func RequireKeyAndSecret(c exgate.Credential) error {
	if c.Key == "" {
		return exgate.ParamError("key", "the exchange's key and secret are required for %s", c.Exchange)
	}
	if c.Secret == "" {
		return exgate.ParamError("secret", "the exchange's key and secret are required for %s", c.Exchange)
	}
	return nil
}

// Env is what Build gets: the adapter's settings and the gateway's
// dependencies.
type Env struct {
	// Settings are the adapter's settings by name, every one present
	// (the default when not given) and checked.
	Settings Settings
	// HTTPClient sends the adapter's requests (kept-alive connections,
	// instrumented when metrics are on).
	HTTPClient *http.Client
	// Limiter paces the adapter's calls, shared by the instances.
	Limiter exgate.Limiter
	// Logger is labelled with the exchange's name.
	Logger *slog.Logger
	// Store is the gateway's store (the simulated exchange keeps its
	// paper ledger in it).
	Store exgate.Store
	// Shared is the state the gateway's instances share.
	Shared Shared
}

// Shared is the state instances share, from one provider: in process, or
// in Redis when EXGATE_REDIS_URL is set. An adapter takes what it needs.
type Shared struct {
	// Nonces hands out strictly increasing numbers per key (Kraken's
	// nonces).
	Nonces Nonces
	// Locks serializes work on one key across instances (Kraken's calls
	// on one API key); nil in process, where an adapter locks itself.
	Locks Locks
	// Cache shares a value between instances (Binance's exchangeInfo);
	// nil in process, where an adapter keeps its own.
	Cache Cache
}

// Nonces hands out numbers that only grow, per key.
type Nonces interface {
	// Next returns a value greater than every value it returned before
	// for key and at least floor.
	Next(ctx context.Context, key string, floor int64) (int64, error)
}

// Locks are locks shared by instances.
type Locks interface {
	// Lock takes key's lock for at most ttl, waiting until ctx is done
	// while another holder has it. unlock releases it.
	Lock(ctx context.Context, key string, ttl time.Duration) (unlock func(), err error)
}

// Cache is a byte cache shared by instances.
type Cache interface {
	// Get returns key's value, or an error wrapping exgate.ErrNotFound
	// when there is none.
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// Settings are an adapter's setting values by name.
type Settings map[string]string

// Duration reads a setting checked by CheckDuration; zero when empty.
func (s Settings) Duration(name string) time.Duration {
	d, _ := time.ParseDuration(s[name])
	return d
}

// Int reads a setting checked by CheckInt; zero when empty.
func (s Settings) Int(name string) int {
	n, _ := strconv.Atoi(s[name])
	return n
}

// CheckWebSocketURL accepts an empty value (the adapter's default) or a
// ws:// or wss:// URL with a host.
func CheckWebSocketURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return fmt.Errorf("%q is not a ws:// or wss:// URL", s)
	}
	return nil
}

// CheckDuration accepts a duration that is not negative ("10s"); empty is
// the adapter's default.
func CheckDuration(s string) error {
	if s == "" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return errors.New("must not be negative")
	}
	return nil
}

// CheckInt accepts an integer; empty is the adapter's default.
func CheckInt(s string) error {
	if s == "" {
		return nil
	}
	_, err := strconv.Atoi(s)
	return err
}

// OneOf accepts one of values (or empty: the adapter's default).
func OneOf(values ...string) func(string) error {
	return func(s string) error {
		if s == "" || slices.Contains(values, s) {
			return nil
		}
		return fmt.Errorf("must be %s, not %q", orList(values), s)
	}
}

// orList writes "a, b or c".
func orList(vs []string) string {
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}
