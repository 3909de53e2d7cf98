// Package okx is the exgate adapter for OKX Spot over its REST API v5
// (www.okx.com/api/v5) in Spot mode (tdMode cash): market orders in the
// base or the quote currency on both sides (tgtCcy), the order lifecycle
// (limit GTC/IOC/FOK/post-only through ordType, cancels by clOrdId, open
// and recent orders, fills, symbols, recent withdrawals:
// exgate.OrderManager), candlesticks, order books, the trading and
// funding accounts and transfers between them (exgate.WalletTransfers),
// deposits, deposit addresses and withdrawals from the funding account,
// and live streams of books (with OKX's sequence ids and CRC32 checksum),
// candles and orders over its WebSocket API v5 (exgate.Streamer,
// stream.go); with OKX's HMAC-SHA256 request signing and passphrase, its
// per-endpoint rate limits and the clock correction its timestamps need.
//
// Facts about the API come from OKX's public documentation
// (https://www.okx.com/docs-v5/en/); each table in convert.go names its
// source. docs/exchanges/okx.md describes the mapping and what differs
// from the other exchanges. Package okxfake is a fake of the API for
// tests.
package okx

import (
	"cmp"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// Name is the exchange's name in configuration, credentials and the API.
const Name = "okx"

// DefaultBaseURL is OKX's production REST host; the adapter appends
// /api/v5/... itself.
const DefaultBaseURL = "https://www.okx.com"

// Options configure the adapter. Every field is optional.
type Options struct {
	// BaseURL is the REST host without /api/v5; default DefaultBaseURL.
	// The gateway sets it from EXGATE_OKX_URL.
	BaseURL string
	// HTTPClient sends the requests; default a client with a 30 s
	// timeout.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives warnings and errors; default discards them.
	Logger *slog.Logger
	// Limiter paces calls; default localstate.NewLimiter (in process).
	Limiter exgate.Limiter
	// MarketsTTL is how old the instrument list may get before a
	// background refresh; default 10 minutes. CurrenciesTTL is the same
	// for the currencies and chains of each credential; default 10
	// minutes.
	MarketsTTL    time.Duration
	CurrenciesTTL time.Duration
	// MaxWait is the longest the adapter waits for its request budget
	// when the ctx has no deadline; default 10 s.
	MaxWait time.Duration
	// RetryBackoff is the first pause before a read is retried (doubled,
	// with jitter, each time); default 200 ms.
	RetryBackoff time.Duration
	// Simulated sends x-simulated-trading: 1 on every call: OKX's demo
	// trading (its demo keys; deposits and withdrawals do not work there).
	Simulated bool

	// WSURL is the base of OKX's WebSocket API v5, to which the adapter
	// appends /public, /private and /business; default DefaultWSURL. The
	// gateway sets it from EXGATE_OKX_WS_URL.
	WSURL string
	// WSPingInterval is how often a stream sends "ping" when quiet; a
	// stream that hears nothing (not even "pong") for twice as long is
	// dropped and reconnected. Default 20 s (OKX closes a connection idle
	// for 30 s).
	WSPingInterval time.Duration
	// WSBackoffMin and WSBackoffMax bound the wait between reconnects
	// (doubled per failure, with jitter); defaults 250 ms and 30 s.
	WSBackoffMin, WSBackoffMax time.Duration
}

// Exchange is the OKX Spot adapter. It is safe for concurrent use; one
// Exchange serves every credential.
type Exchange struct {
	c          *client
	log        *slog.Logger
	markets    *rest.Markets[*pair]
	currencies *currencyCache
	stream     streamOptions
}

var (
	_ exgate.Exchange        = (*Exchange)(nil)
	_ exgate.OrderManager    = (*Exchange)(nil)
	_ exgate.WalletTransfers = (*Exchange)(nil)
)

// New returns an adapter configured by opts.
func New(opts Options) *Exchange {
	t := rest.Transport{Exchange: "okx", BaseURL: opts.BaseURL, HTTP: opts.HTTPClient, Now: opts.Now, Log: opts.Logger,
		Limiter: opts.Limiter, MaxWait: opts.MaxWait, Backoff: opts.RetryBackoff}.WithDefaults(DefaultBaseURL)
	// The API prefix is part of every endpoint's path.
	t.BaseURL = strings.TrimRight(strings.TrimSuffix(t.BaseURL, "/api/v5"), "/")
	c := &client{Transport: t, simulated: opts.Simulated}
	return &Exchange{
		c:          c,
		log:        t.Log,
		markets:    newMarkets(c, rest.PositiveOr(opts.MarketsTTL, 10*time.Minute)),
		currencies: &currencyCache{c: c, ttl: rest.PositiveOr(opts.CurrenciesTTL, 10*time.Minute), entries: map[string]*currencyEntry{}},
		stream:     newStreamOptions(opts),
	}
}

// Name returns "okx".
func (e *Exchange) Name() string { return Name }

// streamOptions are the stream settings of Options with defaults applied.
type streamOptions struct {
	url     string
	ping    time.Duration
	backoff [2]time.Duration
}

// DefaultWSURL is the base of OKX's production WebSocket API v5.
const DefaultWSURL = "wss://ws.okx.com:8443/ws/v5"

func newStreamOptions(o Options) streamOptions {
	return streamOptions{
		url:     strings.TrimRight(cmp.Or(o.WSURL, DefaultWSURL), "/"),
		ping:    rest.PositiveOr(o.WSPingInterval, 20*time.Second),
		backoff: [2]time.Duration{o.WSBackoffMin, o.WSBackoffMax},
	}
}
