// Package binance is the exgate adapter for Binance Spot: market orders,
// klines, order books, balances, deposits and withdrawals over Binance's
// REST API (api.binance.com /api/v3 and /sapi/v1), with HMAC-SHA256
// signing, request-weight pacing and the clock-offset correction Binance's
// timestamp window needs.
//
// Facts about the API come from Binance's public documentation; each table
// in convert.go names its source. docs/exchanges/binance.md describes the
// mapping and what differs from the other exchanges.
package binance

import (
	"cmp"
	"log/slog"
	"net/http"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// DefaultBaseURL is Binance's production REST endpoint.
const DefaultBaseURL = "https://api.binance.com"

// Options configure the adapter. Every field is optional.
type Options struct {
	// BaseURL is the REST endpoint; default DefaultBaseURL. The gateway
	// sets it from EXGATE_BINANCE_URL.
	BaseURL string
	// HTTPClient sends the requests; default a client with a 30 s timeout.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives warnings and errors; default discards them.
	Logger *slog.Logger
	// Limiter paces calls; default localstate.NewLimiter(Now), which
	// keeps the budgets in this process only.
	Limiter exgate.Limiter
	// RecvWindow is sent with signed calls; default 5 s, at most 60 s.
	RecvWindow time.Duration
	// MarketsTTL is how old exchangeInfo may get before a background
	// refresh; default 10 minutes. CoinsTTL is the same for the coin and
	// network configuration (withdrawal fees, minimums); default 10
	// minutes.
	MarketsTTL time.Duration
	CoinsTTL   time.Duration
	// MetadataCache, when set, shares the exchangeInfo answer between the
	// instances that use it (the redis package's Cache), so that one fetch
	// per MarketsTTL serves them all: exchangeInfo costs 20 of the IP's
	// request weight. Without it each process fetches its own.
	MetadataCache MetadataCache
	// KlineMemory bounds the memory that keeps the last klines answer to
	// each request, so that AppendRecentKlinesJSON converts only the rows
	// that changed (klinejson.go); default 32 MiB, negative keeps none.
	KlineMemory int
	// MaxWait is the longest the adapter waits for its request budget
	// when the ctx has no deadline; default 10 s.
	MaxWait time.Duration
	// RetryBackoff is the first pause before a read is retried (doubled,
	// with jitter, each time); default 200 ms.
	RetryBackoff time.Duration

	// StreamURL is the WebSocket market streams endpoint; default
	// DefaultStreamURL. The gateway sets it from EXGATE_BINANCE_WS_URL.
	StreamURL string
	// WSAPIURL is the WebSocket API endpoint that carries the order
	// updates; default DefaultWSAPIURL. The gateway sets it from
	// EXGATE_BINANCE_WS_API_URL.
	WSAPIURL string
	// StreamIdle is how long a stream connection may stay silent (no
	// message, no ping) before it is dropped and reconnected; default
	// DefaultStreamIdle.
	StreamIdle time.Duration
	// StreamBackoffMin and StreamBackoffMax bound the wait between two
	// stream connection attempts (doubled per failure, with jitter);
	// defaults 250 ms and 30 s.
	StreamBackoffMin, StreamBackoffMax time.Duration
}

// Exchange is the Binance Spot adapter. It is safe for concurrent use; one
// Exchange serves every credential.
type Exchange struct {
	c       *client
	log     *slog.Logger
	markets *markets
	coins   *coins
	// klines keeps the last klines answer per request and its encoding,
	// for AppendRecentKlinesJSON.
	klines *klineMemo
	stream streamConfig
}

var _ exgate.Exchange = (*Exchange)(nil)

// New returns an adapter configured by opts.
func New(opts Options) *Exchange {
	t := rest.Transport{Exchange: "binance", BaseURL: opts.BaseURL, HTTP: opts.HTTPClient, Now: opts.Now, Log: opts.Logger,
		Limiter: opts.Limiter, MaxWait: opts.MaxWait, Backoff: opts.RetryBackoff}.WithDefaults(DefaultBaseURL)
	recvWindow := min(rest.PositiveOr(opts.RecvWindow, 5*time.Second), 60*time.Second)
	c := &client{Transport: t, recvWindow: recvWindow.Milliseconds()}
	return &Exchange{
		c:       c,
		log:     t.Log,
		markets: &markets{c: c, ttl: rest.PositiveOr(opts.MarketsTTL, 10*time.Minute), cache: opts.MetadataCache, cacheKey: "binance:exchangeInfo:" + t.BaseURL},
		coins:   &coins{c: c, ttl: rest.PositiveOr(opts.CoinsTTL, 10*time.Minute)},
		klines:  newKlineMemo(cmp.Or(opts.KlineMemory, klineMemoBytes)),
		stream:  newStreamConfig(opts),
	}
}

// Name returns "binance".
func (e *Exchange) Name() string { return Name }

var _ exgate.OrderManager = (*Exchange)(nil)
