package gateway

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestServeConfig: settings come from the flag, else the environment,
// else the default; a value that cannot be read is an error naming it,
// never a silent default (EXGATE_CLIENT_RATE_LIMIT=fifty must not turn the
// client rate limit off).
func TestServeConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(c *Config) bool
		wantErr string
	}{
		{"defaults", nil, nil, func(c *Config) bool {
			return c.ClientRate == 50 && c.Coalesce && c.RequestTimeout == 10*time.Second && c.KrakenTier == "starter" && c.MarketDataMaxAge == 0
		}, ""},
		{"environment", map[string]string{"EXGATE_CLIENT_RATE_LIMIT": "7", "EXGATE_MARKET_DATA_COALESCING": "false", "EXGATE_KRAKEN_TIER": "pro", "EXGATE_MARKET_DATA_MAX_AGE": "250ms"}, nil,
			func(c *Config) bool {
				return c.ClientRate == 7 && !c.Coalesce && c.KrakenTier == "pro" && c.MarketDataMaxAge == 250*time.Millisecond
			}, ""},
		{"flag over environment", map[string]string{"EXGATE_CLIENT_RATE_LIMIT": "7"}, []string{"--client-rate-limit", "9"},
			func(c *Config) bool { return c.ClientRate == 9 }, ""},
		{"bad integer", map[string]string{"EXGATE_CLIENT_RATE_LIMIT": "fifty"}, nil, nil, `EXGATE_CLIENT_RATE_LIMIT="fifty"`},
		{"bad boolean", map[string]string{"EXGATE_REQUIRE_TIMESTAMP": "yes please"}, nil, nil, "EXGATE_REQUIRE_TIMESTAMP"},
		{"bad duration", map[string]string{"EXGATE_REQUEST_TIMEOUT": "10"}, nil, nil, "EXGATE_REQUEST_TIMEOUT"},
		{"bad environment is an error even when a flag overrides it", map[string]string{"EXGATE_CLIENT_BURST": "x"}, []string{"--client-burst", "5"}, nil, "EXGATE_CLIENT_BURST"},
		{"unknown Kraken tier", nil, []string{"--kraken-tier", "gold"}, nil, "--kraken-tier"},
		{"negative timeout", nil, []string{"--request-timeout", "-1s"}, nil, "--request-timeout"},
		{"Kraken stream settings", map[string]string{"EXGATE_KRAKEN_WS_URL": "ws://127.0.0.1:9/v2", "EXGATE_KRAKEN_WS_READ_TIMEOUT": "3s"}, nil,
			func(c *Config) bool {
				return c.KrakenWSURL == "ws://127.0.0.1:9/v2" && c.KrakenWSAuthURL == "wss://ws-auth.kraken.com/v2" && c.KrakenWSReadTimeout == 3*time.Second
			}, ""},
		{"Kraken stream URL not a WebSocket URL", map[string]string{"EXGATE_KRAKEN_WS_AUTH_URL": "https://ws-auth.kraken.com/v2"}, nil, nil, "--kraken-ws-auth-url"},
		{"Kraken stream URL unparsable", nil, []string{"--kraken-ws-url", "ws://%zz"}, nil, "--kraken-ws-url"},
		{"Kraken stream read timeout not positive", nil, []string{"--kraken-ws-read-timeout", "0s"}, nil, "--kraken-ws-read-timeout"},
		{"Kraken stream read timeout unparsable", map[string]string{"EXGATE_KRAKEN_WS_READ_TIMEOUT": "10"}, nil, nil, "EXGATE_KRAKEN_WS_READ_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(name string) string { return tt.env[name] }
			fs, c := NewFlagSet("serve", getenv, io.Discard, true)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("validate = %v; want an error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("validate = %v", err)
			}
			if !tt.check(c) {
				t.Fatalf("config %+v", c)
			}
		})
	}
}
