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
			return c.ClientRate == 50 && c.Coalesce && c.RequestTimeout == 10*time.Second && c.ExchangeSettings["kraken"]["tier"] == "starter" && c.MarketDataMaxAge == 0
		}, ""},
		{"environment", map[string]string{"EXGATE_CLIENT_RATE_LIMIT": "7", "EXGATE_MARKET_DATA_COALESCING": "false", "EXGATE_KRAKEN_TIER": "pro", "EXGATE_MARKET_DATA_MAX_AGE": "250ms"}, nil,
			func(c *Config) bool {
				return c.ClientRate == 7 && !c.Coalesce && c.ExchangeSettings["kraken"]["tier"] == "pro" && c.MarketDataMaxAge == 250*time.Millisecond
			}, ""},
		{"flag over environment", map[string]string{"EXGATE_CLIENT_RATE_LIMIT": "7"}, []string{"--client-rate-limit", "9"},
			func(c *Config) bool { return c.ClientRate == 9 }, ""},
		{"bad integer", map[string]string{"EXGATE_CLIENT_RATE_LIMIT": "fifty"}, nil, nil, `EXGATE_CLIENT_RATE_LIMIT="fifty"`},
		{"bad boolean", map[string]string{"EXGATE_REQUIRE_TIMESTAMP": "yes please"}, nil, nil, "EXGATE_REQUIRE_TIMESTAMP"},
		{"bad duration", map[string]string{"EXGATE_REQUEST_TIMEOUT": "10"}, nil, nil, "EXGATE_REQUEST_TIMEOUT"},
		{"bad environment is an error even when a flag overrides it", map[string]string{"EXGATE_CLIENT_BURST": "x"}, []string{"--client-burst", "5"}, nil, "EXGATE_CLIENT_BURST"},
		{"unknown Kraken tier", nil, []string{"--kraken-tier", "gold"}, nil, "--kraken-tier"},
		{"negative timeout", nil, []string{"--request-timeout", "-1s"}, nil, "--request-timeout"},
		{"Binance WebSocket URLs", map[string]string{"EXGATE_BINANCE_WS_URL": "ws://127.0.0.1:9000"}, []string{"--binance-ws-api-url", "wss://ws.example/ws-api/v3"},
			func(c *Config) bool {
				return c.ExchangeSettings["binance"]["ws-url"] == "ws://127.0.0.1:9000" && c.ExchangeSettings["binance"]["ws-api-url"] == "wss://ws.example/ws-api/v3"
			}, ""},
		{"Binance WebSocket URL defaults", nil, nil, func(c *Config) bool {
			return c.ExchangeSettings["binance"]["ws-url"] == "wss://stream.binance.com:9443" && c.ExchangeSettings["binance"]["ws-api-url"] == "wss://ws-api.binance.com:443/ws-api/v3"
		}, ""},
		{"Binance WebSocket URL not a WebSocket URL", map[string]string{"EXGATE_BINANCE_WS_URL": "https://stream.binance.com"}, nil, nil, "--binance-ws-url"},
		{"Binance WebSocket API URL without a host", nil, []string{"--binance-ws-api-url", "wss://"}, nil, "--binance-ws-api-url"},
		{"Gate.io stream defaults", nil, nil, func(c *Config) bool {
			return c.ExchangeSettings["gateio"]["ws-url"] == "wss://api.gateio.ws/ws/v4/" && c.ExchangeSettings["gateio"].Duration("ws-ping") == 10*time.Second
		}, ""},
		{"Gate.io stream environment", map[string]string{"EXGATE_GATEIO_WS_URL": "ws://127.0.0.1:9000/ws/v4/", "EXGATE_GATEIO_WS_PING": "3s"}, nil,
			func(c *Config) bool {
				return c.ExchangeSettings["gateio"]["ws-url"] == "ws://127.0.0.1:9000/ws/v4/" && c.ExchangeSettings["gateio"].Duration("ws-ping") == 3*time.Second
			}, ""},
		{"Gate.io stream URL not a WebSocket", map[string]string{"EXGATE_GATEIO_WS_URL": "https://api.gateio.ws/ws/v4/"}, nil, nil, "--gateio-ws-url"},
		{"Gate.io stream URL unparsable", nil, []string{"--gateio-ws-url", "wss://%zz"}, nil, "--gateio-ws-url"},
		{"Gate.io ping unparsable", map[string]string{"EXGATE_GATEIO_WS_PING": "often"}, nil, nil, "EXGATE_GATEIO_WS_PING"},
		{"console off by default", nil, nil, func(c *Config) bool {
			u, err := c.ConsoleBaseURL()
			return c.ConsoleAddr == "" && u == "" && err == nil
		}, ""},
		{"console from the environment", map[string]string{"EXGATE_CONSOLE_ADDR": "0.0.0.0:8090"}, nil,
			func(c *Config) bool {
				u, _ := c.ConsoleBaseURL()
				return c.ConsoleAddr == "0.0.0.0:8090" && u == "http://127.0.0.1:8090"
			}, ""},
		{"console URL", nil, []string{"--console-addr", ":8090", "--console-url", "https://console.example/"},
			func(c *Config) bool { u, _ := c.ConsoleBaseURL(); return u == "https://console.example" }, ""},
		{"unparsable console address", map[string]string{"EXGATE_CONSOLE_ADDR": "8090"}, nil, nil, "EXGATE_CONSOLE_ADDR"},
		{"console URL with a path", nil, []string{"--console-url", "https://x.example/console"}, nil, "--console-url"},
		{"console on the API's address", nil, []string{"--console-addr", "127.0.0.1:8080"}, nil, "--console-addr"},
		{"Kraken stream settings", map[string]string{"EXGATE_KRAKEN_WS_URL": "ws://127.0.0.1:9/v2", "EXGATE_KRAKEN_WS_READ_TIMEOUT": "3s"}, nil,
			func(c *Config) bool {
				return c.ExchangeSettings["kraken"]["ws-url"] == "ws://127.0.0.1:9/v2" && c.ExchangeSettings["kraken"]["ws-auth-url"] == "wss://ws-auth.kraken.com/v2" && c.ExchangeSettings["kraken"].Duration("ws-read-timeout") == 3*time.Second
			}, ""},
		{"Kraken stream URL not a WebSocket URL", map[string]string{"EXGATE_KRAKEN_WS_AUTH_URL": "https://ws-auth.kraken.com/v2"}, nil, nil, "--kraken-ws-auth-url"},
		{"Kraken stream URL unparsable", nil, []string{"--kraken-ws-url", "ws://%zz"}, nil, "--kraken-ws-url"},
		{"Kraken stream read timeout negative", nil, []string{"--kraken-ws-read-timeout", "-1s"}, nil, "--kraken-ws-read-timeout"},
		{"Kraken stream read timeout unparsable", map[string]string{"EXGATE_KRAKEN_WS_READ_TIMEOUT": "10"}, nil, nil, "EXGATE_KRAKEN_WS_READ_TIMEOUT"},
		{"bad adapter setting in the environment is an error even when a flag overrides it", map[string]string{"EXGATE_GATEIO_WS_PING": "often"}, []string{"--gateio-ws-ping", "5s"}, nil, "EXGATE_GATEIO_WS_PING"},
		{"every adapter setting has its flag and variable", map[string]string{"EXGATE_BINANCE_URL": "http://127.0.0.1:1"}, []string{"--kraken-url", "http://127.0.0.1:2", "--gateio-ws-ping", "4s"},
			func(c *Config) bool {
				return c.ExchangeSettings["binance"]["url"] == "http://127.0.0.1:1" && c.ExchangeSettings["kraken"]["url"] == "http://127.0.0.1:2" &&
					c.ExchangeSettings["gateio"]["url"] == "https://api.gateio.ws" && c.ExchangeSettings["gateio"].Duration("ws-ping") == 4*time.Second
			}, ""},
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
