package bybit

import (
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
)

// Adapter is Bybit as the gateway registers it (package exchange):
// --bybit-url / EXGATE_BYBIT_URL (REST), --bybit-ws-url and
// --bybit-ws-private-url (the public spot and the private WebSocket v5),
// --bybit-ws-ping, and --bybit-ip-budget (requests per 5 s the adapter
// allows itself of Bybit's per-IP 600).
func Adapter() exchange.Adapter {
	return exchange.Adapter{
		Name: Name,
		// New WebSocket connections per IP address, the stream hub's pace:
		// Bybit: 500 per 5 minutes per domain (its WebSocket guide).
		StreamConnectLimit: exgate.RateLimit{Rate: 500, Period: 5 * time.Minute, Burst: 20},
		Settings: []exchange.Setting{
			{Name: "url", Default: DefaultBaseURL, Help: "Bybit REST base URL (API v5)"},
			{Name: "ws-url", Default: DefaultWSURL, Help: "Bybit public spot WebSocket v5 URL of the book and kline streams", Check: exchange.CheckWebSocketURL},
			{Name: "ws-private-url", Default: DefaultWSPrivateURL, Help: "Bybit private WebSocket v5 URL of the order stream", Check: exchange.CheckWebSocketURL},
			{Name: "ws-ping", Default: "20s", Help: "how often a Bybit stream pings; one silent for twice as long is reconnected", Check: exchange.CheckDuration},
			{Name: "ip-budget", Default: "500", Help: "requests per 5 s this instance sends to Bybit, of its per-IP limit of 600 (an IP over it is banned for 10 minutes)", Check: exchange.CheckInt},
		},
		Build: func(env exchange.Env) (exgate.Exchange, error) {
			return New(Options{
				BaseURL: env.Settings["url"], HTTPClient: env.HTTPClient, Limiter: env.Limiter, Logger: env.Logger,
				WSURL: env.Settings["ws-url"], WSPrivateURL: env.Settings["ws-private-url"], WSPingInterval: env.Settings.Duration("ws-ping"),
				IPBudget: env.Settings.Int("ip-budget"),
			}), nil
		},
	}
}
