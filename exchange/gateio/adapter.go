package gateio

import (
	"net/http"
	"strconv"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
)

// Name is the exchange's name in configuration and credentials.
const Name = "gateio"

// Adapter is Gate.io as the gateway registers it (package exchange).
func Adapter() exchange.Adapter {
	return exchange.Adapter{
		Name: Name,
		// New WebSocket connections per IP address, the stream hub's pace:
		// Gate.io publishes no rate of new connections; one a second is a
		// conservative pace.
		StreamConnectLimit: exgate.RateLimit{Rate: 1, Period: time.Second, Burst: 10},
		Settings: []exchange.Setting{
			{Name: "url", Default: DefaultBaseURL, Help: "Gate.io REST base URL"},
			{Name: "ws-url", Default: DefaultWSURL, Help: "Gate.io Spot WebSocket v4 URL of the live streams", Check: exchange.CheckWebSocketURL},
			{Name: "ws-ping", Default: "10s", Help: "how often a Gate.io stream pings; one silent for twice as long is reconnected", Check: exchange.CheckDuration},
		},
		// Every answer reports the endpoint's limit and what is left of
		// it (client.go reads the same headers for pacing).
		Weight: func(h http.Header) (used, limit float64, ok bool) {
			lim, err := strconv.Atoi(h.Get("X-Gate-Ratelimit-Limit"))
			if err != nil {
				return 0, 0, false
			}
			left, err := strconv.Atoi(h.Get("X-Gate-Ratelimit-Requests-Remain"))
			if err != nil {
				return 0, 0, false
			}
			return float64(lim - left), float64(lim), true
		},
		Build: func(env exchange.Env) (exgate.Exchange, error) {
			return New(Options{
				BaseURL: env.Settings["url"], HTTPClient: env.HTTPClient, Limiter: env.Limiter, Logger: env.Logger,
				WSURL: env.Settings["ws-url"], WSPingInterval: env.Settings.Duration("ws-ping"),
			}), nil
		},
	}
}
