// Package gateio is the exgate adapter for Gate (Gate.io) Spot over its REST
// API v4 (api.gateio.ws/api/v4): market orders, the order lifecycle
// (limit orders, cancels, open and recent orders, fills, symbols, recent
// withdrawals: exgate.OrderManager), candlesticks, order books,
// balances, deposits, deposit addresses and withdrawals, live streams of
// books, klines and orders over its Spot WebSocket v4 (exgate.Streamer,
// stream.go), with Gate's
// HMAC-SHA512 request signing, its per-endpoint rate limits and the clock
// correction its 60-second Timestamp window needs.
//
// Facts about the API come from Gate's public documentation; each table in
// convert.go names its source. docs/exchanges/gateio.md describes the
// mapping, the conversions against the order book, the limits and what
// differs from the other exchanges. Package gateiofake is a fake of the
// API for tests.
package gateio

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// DefaultBaseURL is Gate's production REST host; the adapter appends
// /api/v4 itself.
const DefaultBaseURL = "https://api.gateio.ws"

// Options configure the adapter. Every field is optional.
type Options struct {
	// BaseURL is the REST host without /api/v4; default DefaultBaseURL.
	// The gateway sets it from EXGATE_GATEIO_URL.
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
	// MarketsTTL is how old the currency pair list may get before a
	// background refresh; default 10 minutes. ChainsTTL is the same for
	// the chains of each currency; default 10 minutes.
	MarketsTTL time.Duration
	ChainsTTL  time.Duration
	// MaxWait is the longest the adapter waits for its request budget
	// when the ctx has no deadline; default 10 s.
	MaxWait time.Duration
	// RetryBackoff is the first pause before a read is retried (doubled,
	// with jitter, each time); default 200 ms.
	RetryBackoff time.Duration

	// WSURL is Gate's Spot WebSocket v4 endpoint of the live streams;
	// default DefaultWSURL. The gateway sets it from EXGATE_GATEIO_WS_URL.
	WSURL string
	// WSPingInterval is how often a stream sends spot.ping; a stream that
	// hears nothing (not even spot.pong) for twice as long is dropped and
	// reconnected. Default 10 s; the gateway sets it from
	// EXGATE_GATEIO_WS_PING.
	WSPingInterval time.Duration
	// WSBackoffMin and WSBackoffMax bound the wait between reconnects
	// (doubled per failure, with jitter); defaults 250 ms and 30 s.
	WSBackoffMin, WSBackoffMax time.Duration
	// KlineCloseGrace is how long after a kline's interval has ended,
	// with no later kline pushed, the stream emits it closed; default
	// 10 s (Gate pushes candlesticks every 2 s).
	KlineCloseGrace time.Duration
}

// Exchange is the Gate Spot adapter. It is safe for concurrent use; one
// Exchange serves every credential.
type Exchange struct {
	c       *client
	log     *slog.Logger
	markets *rest.Markets[*pair]
	chains  *chainCache
	stream  streamOptions
}

var _ exgate.Exchange = (*Exchange)(nil)

// New returns an adapter configured by opts.
func New(opts Options) *Exchange {
	t := rest.Transport{Exchange: "gateio", BaseURL: opts.BaseURL, HTTP: opts.HTTPClient, Now: opts.Now, Log: opts.Logger,
		Limiter: opts.Limiter, MaxWait: opts.MaxWait, Backoff: opts.RetryBackoff}.WithDefaults(DefaultBaseURL)
	// The API prefix is part of every request path.
	t.BaseURL = strings.TrimRight(strings.TrimSuffix(t.BaseURL, apiPrefix), "/")
	c := &client{Transport: t}
	return &Exchange{
		c:       c,
		log:     t.Log,
		markets: newMarkets(c, rest.PositiveOr(opts.MarketsTTL, 10*time.Minute)),
		chains:  &chainCache{c: c, ttl: rest.PositiveOr(opts.ChainsTTL, 10*time.Minute), entries: map[string]*chainEntry{}},
		stream:  newStreamOptions(opts),
	}
}

// Name returns "gateio".
func (e *Exchange) Name() string { return Name }
