// Package bybit is the exgate adapter for Bybit Spot over its REST API v5
// (https://bybit-exchange.github.io/docs/v5/intro), category=spot on a
// unified trading account: market orders in either asset on either side
// (Bybit's marketUnit), the order lifecycle (limit orders GTC, IOC, FOK
// and PostOnly, cancels by orderLinkId, open and recent orders, fills,
// symbols, recent withdrawals: exgate.OrderManager), klines, order books,
// the unified and funding wallets and the transfers between them
// (exgate.WalletTransfers), deposits, deposit addresses and withdrawals,
// and live streams of books, klines and orders over Bybit's WebSocket v5
// (exgate.Streamer, stream.go).
//
// Requests are signed with HMAC-SHA256 over timestamp + API key + receive
// window + query string or body (client.go), on Bybit's clock (the offset
// is learned from GET /v5/market/time), and paced within Bybit's per-UID,
// per-endpoint limits and its per-IP limit (convert.go), so that no burst
// of clients ever earns a 10006 or the IP ban (HTTP 403).
//
// Facts about the API come from Bybit's public documentation; each table in
// convert.go names its source. docs/exchanges/bybit.md describes the
// mapping, the limits and what differs from the other exchanges. Package
// bybitfake is a fake of the API for tests.
package bybit

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange/internal/rest"
)

// Name is the exchange's name in configuration and credentials.
const Name = "bybit"

// DefaultBaseURL is Bybit's production REST host
// (https://bybit-exchange.github.io/docs/v5/guide, "Base endpoint").
const DefaultBaseURL = "https://api.bybit.com"

// Options configure the adapter. Every field is optional.
type Options struct {
	// BaseURL is the REST host; default DefaultBaseURL. The gateway sets
	// it from EXGATE_BYBIT_URL.
	BaseURL string
	// HTTPClient sends the requests; default a client with a 30 s
	// timeout.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives warnings and errors; default discards them.
	Logger *slog.Logger
	// Limiter paces calls; default localstate.NewLimiter (in process).
	// Instances that share an IP address or an account must share one.
	Limiter exgate.Limiter
	// MarketsTTL is how old the instrument list may get before a
	// background refresh; default 10 minutes. CoinsTTL is the same for
	// the coin and chain list; default 10 minutes.
	MarketsTTL time.Duration
	CoinsTTL   time.Duration
	// MaxWait is the longest the adapter waits for its request budget
	// when the ctx has no deadline; default 10 s.
	MaxWait time.Duration
	// RetryBackoff is the first pause before a read is retried; default
	// 200 ms.
	RetryBackoff time.Duration
	// RecvWindow is the X-BAPI-RECV-WINDOW sent with every signed call;
	// default 5000 ms, Bybit's own default.
	RecvWindow time.Duration
	// IPBudget is how many requests the adapter lets itself send to the
	// host per 5 seconds from this process; default 500 of Bybit's 600, a
	// margin for the doctor and other tools on the same address.
	IPBudget int

	// WSURL is the public spot stream, default DefaultWSURL; WSPrivateURL
	// the private stream, default DefaultWSPrivateURL. The gateway sets
	// them from EXGATE_BYBIT_WS_URL and EXGATE_BYBIT_WS_PRIVATE_URL.
	WSURL, WSPrivateURL string
	// WSPingInterval is how often a stream sends {"op":"ping"} (Bybit
	// asks for one every 20 s); a stream that hears nothing for twice as
	// long is reconnected. Default 20 s.
	WSPingInterval time.Duration
	// WSBackoffMin and WSBackoffMax bound the wait between reconnects;
	// defaults 250 ms and 30 s.
	WSBackoffMin, WSBackoffMax time.Duration
}

// Exchange is the Bybit Spot adapter. It is safe for concurrent use; one
// Exchange serves every credential.
type Exchange struct {
	c       *client
	log     *slog.Logger
	markets *rest.Markets[*pair]
	coins   *coinCache
	stream  streamOptions

	// sent remembers the withdrawals this process sent, by requestId:
	// Bybit's withdrawal records do not carry the requestId (wallet.go,
	// QueryWithdrawal).
	sent sentWithdrawals
}

var (
	_ exgate.Exchange        = (*Exchange)(nil)
	_ exgate.OrderManager    = (*Exchange)(nil)
	_ exgate.WalletTransfers = (*Exchange)(nil)
)

// New returns an adapter configured by opts.
func New(opts Options) *Exchange {
	t := rest.Transport{Exchange: Name, BaseURL: opts.BaseURL, HTTP: opts.HTTPClient, Now: opts.Now, Log: opts.Logger,
		Limiter: opts.Limiter, MaxWait: opts.MaxWait, Backoff: opts.RetryBackoff}.WithDefaults(DefaultBaseURL)
	ipBudget := opts.IPBudget
	if ipBudget <= 0 {
		ipBudget = defaultIPBudget
	}
	c := &client{Transport: t, recvWindow: rest.PositiveOr(opts.RecvWindow, 5*time.Second), ipBudget: min(ipBudget, ipLimit)}
	return &Exchange{
		c:       c,
		log:     t.Log,
		markets: newMarkets(c, rest.PositiveOr(opts.MarketsTTL, 10*time.Minute)),
		coins:   &coinCache{c: c, ttl: rest.PositiveOr(opts.CoinsTTL, 10*time.Minute), entries: map[string]*coinEntry{}},
		stream:  newStreamOptions(opts),
	}
}

// Name returns "bybit".
func (e *Exchange) Name() string { return Name }
