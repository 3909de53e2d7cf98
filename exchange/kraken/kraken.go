// Package kraken is the exgate adapter for Kraken Spot's REST API: market
// and limit orders, cancels, open and recent orders, fills, klines, order
// books, balances, deposits and withdrawals, and the live streams
// (exgate.Streamer) over Kraken's WebSocket API v2 (stream.go), with
// Kraken's asset and pair names mapped to common codes (XXBT and XBT are
// BTC) and Kraken's nonce, signature and rate-limit rules handled.
//
// Private calls are signed with API-Sign (HMAC-SHA512 over the path and
// SHA256(nonce + body)) and carry a nonce from Options.Nonces that is
// strictly increasing per Kraken API key. Calls on one key are serialized
// in this process (nonce taken, request sent and answered under one lock)
// so that Kraken never sees a smaller nonce after a larger one from here;
// see docs/exchanges/kraken.md for the multi-instance case.
//
// Orders and withdrawals are never re-sent. Kraken has no client
// withdrawal id, so withdrawals are found again by Kraken's refid, or by
// matching asset, key, amount and time (see QueryWithdrawal).
package kraken

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
	"github.com/exgate/exgate/localstate"
)

// DefaultBaseURL is Kraken's REST API.
const DefaultBaseURL = "https://api.kraken.com"

// Options configure an Exchange. The zero value of every field has a
// documented default.
type Options struct {
	// BaseURL is Kraken's REST root without the /0 version; default
	// DefaultBaseURL. It must be a host root: the signed path is always
	// /0/private/<Method>.
	BaseURL string
	// HTTPClient sends the requests; default a client with a 30 s timeout
	// (every call also honours its ctx deadline).
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives warnings; default discards.
	Logger *slog.Logger
	// Limiter paces calls; default localstate.NewLimiter(Now), which is
	// per process. Use a shared limiter when instances share API keys.
	Limiter exgate.Limiter
	// Nonces hands out nonces per API key; default localstate.NewNonces(),
	// per process. Instances that share a Kraken API key must share it.
	Nonces Nonces
	// KeyLocks, when set, also serializes the calls on one API key across
	// the instances that share it (the redis package's Locks); without it
	// calls are serialized within this process only, and a call of another
	// instance can reach Kraken with a larger nonce first and make this
	// one's refused (EAPI:Invalid nonce).
	KeyLocks KeyLocks
	// Tier is the Kraken account tier the call counters are paced for;
	// default TierStarter (the most conservative).
	Tier Tier
	// MarketsTTL is how long asset and pair metadata is cached; default
	// one hour.
	MarketsTTL time.Duration
	// RetryDelay is the base backoff between attempts of a read; default
	// 200 ms (jittered, growing with each attempt).
	RetryDelay time.Duration
	// MaxWait bounds how long a call without a ctx deadline waits for the
	// rate limit before giving up with EXCHANGE_UNAVAILABLE; default 10 s.
	MaxWait time.Duration

	// WSURL and WSAuthURL are Kraken's public and authenticated WebSocket
	// v2 endpoints (the streams of exgate.Streamer); default DefaultWSURL
	// and DefaultWSAuthURL.
	WSURL, WSAuthURL string
	// WSReadTimeout is how long a stream connection may stay silent
	// before it is taken for dead and replaced; Kraken sends a heartbeat
	// every second, default 5 s.
	WSReadTimeout time.Duration
	// WSPingInterval is how often a stream connection sends Kraken's
	// ping; default 30 s.
	WSPingInterval time.Duration
	// WSBackoffMin and WSBackoffMax bound the wait between two stream
	// connection attempts (doubling, with jitter); default 250 ms and
	// 30 s.
	WSBackoffMin, WSBackoffMax time.Duration
}

// Exchange is the Kraken adapter. It is safe for concurrent use; one
// Exchange serves every credential.
type Exchange struct {
	c          *client
	now        func() time.Time
	log        *slog.Logger
	marketsTTL time.Duration

	mu      sync.Mutex
	markets *markets
	flight  singleflight.Group

	sent withdrawalLog

	ws streamOptions
}

var _ exgate.Exchange = (*Exchange)(nil)

// New returns a Kraken adapter.
func New(opts Options) *Exchange {
	t := rest.Transport{Exchange: "kraken", BaseURL: opts.BaseURL, HTTP: opts.HTTPClient, Now: opts.Now, Log: opts.Logger,
		Limiter: opts.Limiter, MaxWait: opts.MaxWait, Backoff: opts.RetryDelay}.WithDefaults(DefaultBaseURL)
	if opts.Nonces == nil {
		opts.Nonces = localstate.NewNonces()
	}
	if _, ok := restCounter[opts.Tier]; !ok {
		opts.Tier = TierStarter
	}
	return &Exchange{
		c: &client{Transport: t, nonces: opts.Nonces, shared: opts.KeyLocks, tier: opts.Tier},

		now:        t.Now,
		log:        t.Log,
		marketsTTL: rest.PositiveOr(opts.MarketsTTL, defaultMarketsTTL),
		ws:         newStreamOptions(opts),
	}
}

// Name returns "kraken".
func (e *Exchange) Name() string { return Name }

var _ exgate.OrderManager = (*Exchange)(nil)
