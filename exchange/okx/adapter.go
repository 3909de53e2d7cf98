package okx

import (
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
)

// Adapter is OKX as the gateway registers it (package exchange): its
// settings --okx-url, --okx-ws-url, --okx-ws-ping and --okx-simulated
// (EXGATE_OKX_URL, …), its credential rule (a key, its secret and its
// passphrase) and how it is built.
func Adapter() exchange.Adapter {
	return exchange.Adapter{
		Name: Name,
		// New WebSocket connections per IP address, the stream hub's pace:
		// OKX: 3 connection attempts a second (its WebSocket rate limits).
		StreamConnectLimit: exgate.RateLimit{Rate: 3, Period: time.Second, Burst: 3},
		Settings: []exchange.Setting{
			{Name: "url", Default: DefaultBaseURL, Help: "OKX REST base URL (the adapter appends /api/v5)"},
			{Name: "ws-url", Default: DefaultWSURL, Help: "base of OKX's WebSocket API v5 of the live streams (the adapter appends /public, /private and /business)", Check: exchange.CheckWebSocketURL},
			{Name: "ws-ping", Default: "20s", Help: "how often a quiet OKX stream pings; one silent for twice as long is reconnected", Check: exchange.CheckDuration},
			{Name: "simulated", Default: "false", Help: "send x-simulated-trading: 1 on every OKX call (OKX's demo trading, with demo keys)", Check: exchange.OneOf("true", "false")},
		},
		CheckCredential: CheckCredential,
		Build: func(env exchange.Env) (exgate.Exchange, error) {
			return New(Options{
				BaseURL: env.Settings["url"], HTTPClient: env.HTTPClient, Limiter: env.Limiter, Logger: env.Logger,
				WSURL: env.Settings["ws-url"], WSPingInterval: env.Settings.Duration("ws-ping"),
				Simulated: env.Settings["simulated"] == "true",
			}), nil
		},
	}
}

// CheckCredential refuses an OKX credential without its key, secret or
// passphrase (OKX signs every private call with all three), naming the
// field.
func CheckCredential(c exgate.Credential) error {
	if err := exchange.RequireKeyAndSecret(c); err != nil {
		return err
	}
	if c.Passphrase == "" {
		return exgate.ParamError("passphrase", "an okx key has a passphrase: give it with --passphrase, or on the second line of standard input with --secret-stdin")
	}
	return nil
}
