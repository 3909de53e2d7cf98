package kraken

import (
	"encoding/base64"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
)

// Name is the exchange's name in configuration and credentials.
const Name = "kraken"

// Adapter is Kraken as the gateway registers it (package exchange).
func Adapter() exchange.Adapter {
	return exchange.Adapter{
		Name: Name,
		// New WebSocket connections per IP address, the stream hub's pace:
		// Kraken publishes no rate of new connections; one a second is a
		// conservative pace.
		StreamConnectLimit: exgate.RateLimit{Rate: 1, Period: time.Second, Burst: 10},
		Settings: []exchange.Setting{
			{Name: "url", Default: DefaultBaseURL, Help: "Kraken REST base URL"},
			{Name: "ws-url", Default: DefaultWSURL, Help: "Kraken public WebSocket v2 URL, for the book and klines streams", Check: exchange.CheckWebSocketURL},
			{Name: "ws-auth-url", Default: DefaultWSAuthURL, Help: "Kraken authenticated WebSocket v2 URL, for the orders stream", Check: exchange.CheckWebSocketURL},
			{Name: "ws-read-timeout", Default: "5s", Help: "a Kraken stream connection silent this long is replaced; Kraken heartbeats every second", Check: exchange.CheckDuration},
			{Name: "tier", Default: string(TierStarter), Help: "the Kraken account's verification tier, which sets the call counter exgate paces for: starter, intermediate or pro",
				Check: exchange.OneOf(string(TierStarter), string(TierIntermediate), string(TierPro))},
		},
		CheckCredential: checkCredential,
		Build: func(env exchange.Env) (exgate.Exchange, error) {
			return New(Options{
				BaseURL: env.Settings["url"], HTTPClient: env.HTTPClient, Limiter: env.Limiter, Logger: env.Logger,
				Nonces: env.Shared.Nonces, KeyLocks: env.Shared.Locks, Tier: Tier(env.Settings["tier"]),
				WSURL: env.Settings["ws-url"], WSAuthURL: env.Settings["ws-auth-url"], WSReadTimeout: env.Settings.Duration("ws-read-timeout"),
			}), nil
		},
	}
}

// checkCredential wants a key and a secret, and the secret (Kraken's
// private key) in base64, which signing decodes (client.go).
func checkCredential(c exgate.Credential) error {
	if err := exchange.RequireKeyAndSecret(c); err != nil {
		return err
	}
	if _, err := base64.StdEncoding.DecodeString(c.Secret); err != nil {
		return exgate.ParamError("secret", "a Kraken private key is base64; this one does not decode")
	}
	return nil
}
