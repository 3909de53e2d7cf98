package bybit

import (
	"time"

	"github.com/exgate/exgate/exchange/internal/rest"
)

// Bybit's WebSocket v5 endpoints. Source:
// https://bybit-exchange.github.io/docs/v5/ws/connect.
const (
	DefaultWSURL        = "wss://stream.bybit.com/v5/public/spot"
	DefaultWSPrivateURL = "wss://stream.bybit.com/v5/private"
)

// streamOptions are the adapter's stream settings with defaults applied.
type streamOptions struct {
	url, privateURL        string
	ping                   time.Duration
	backoffMin, backoffMax time.Duration
}

func newStreamOptions(o Options) streamOptions {
	s := streamOptions{url: o.WSURL, privateURL: o.WSPrivateURL,
		ping:       rest.PositiveOr(o.WSPingInterval, 20*time.Second),
		backoffMin: rest.PositiveOr(o.WSBackoffMin, 250*time.Millisecond), backoffMax: rest.PositiveOr(o.WSBackoffMax, 30*time.Second)}
	if s.url == "" {
		s.url = DefaultWSURL
	}
	if s.privateURL == "" {
		s.privateURL = DefaultWSPrivateURL
	}
	return s
}
