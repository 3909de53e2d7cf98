package binance

import (
	"net/http"
	"strconv"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
)

// Name is the exchange's name in configuration and credentials.
const Name = "binance"

// Adapter is Binance as the gateway registers it (package exchange).
func Adapter() exchange.Adapter { return AdapterWith(Options{}) }

// AdapterWith is Adapter building on base: the fields no setting covers
// (the bench's KlineMemory) are taken from it.
func AdapterWith(base Options) exchange.Adapter {
	return exchange.Adapter{
		Name: Name,
		// New WebSocket connections per IP address, the stream hub's pace:
		// Binance: 300 per 5 minutes (its WebSocket Streams documentation).
		StreamConnectLimit: exgate.RateLimit{Rate: 300, Period: 5 * time.Minute, Burst: 20},
		Settings: []exchange.Setting{
			{Name: "url", Default: DefaultBaseURL, Help: "Binance REST base URL"},
			{Name: "ws-url", Default: DefaultStreamURL, Help: "Binance WebSocket market streams base URL", Check: exchange.CheckWebSocketURL},
			{Name: "ws-api-url", Default: DefaultWSAPIURL, Help: "Binance WebSocket API URL, for the order stream", Check: exchange.CheckWebSocketURL},
		},
		// Binance's published request-weight limit per minute
		// (convert.go), which the adapter paces for.
		WeightLimit: 6000,
		// Every answer reports the IP's weight used in the current
		// minute (client.go, rest-api.md "IP Limits").
		Weight: func(h http.Header) (used, limit float64, ok bool) {
			n, err := strconv.Atoi(h.Get("X-Mbx-Used-Weight-1m"))
			return float64(n), 0, err == nil
		},
		Build: func(env exchange.Env) (exgate.Exchange, error) {
			o := base
			o.BaseURL = env.Settings["url"]
			o.StreamURL = env.Settings["ws-url"]
			o.WSAPIURL = env.Settings["ws-api-url"]
			o.HTTPClient, o.Limiter, o.Logger = env.HTTPClient, env.Limiter, env.Logger
			o.MetadataCache = env.Shared.Cache
			return New(o), nil
		},
	}
}
