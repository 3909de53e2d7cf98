package gateway

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/httpapi"
)

// The per-route limit flags: defaults, environment, flags, off, and bad
// values named.
func TestRouteLimitFlags(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    httpapi.RouteLimits
		wantErr string
	}{
		{"defaults", nil, nil, httpapi.DefaultRouteLimits(), ""},
		{"environment and flags", map[string]string{"EXGATE_MARKET_DATA_LIMIT": "50/1s", "EXGATE_ORDER_LIMIT": "7/1m"}, []string{"--withdrawal-limit", "0"},
			httpapi.RouteLimits{
				MarketData: exgate.RateLimit{Rate: 50, Period: time.Second, Burst: 50},
				Orders:     exgate.RateLimit{Rate: 7, Period: time.Minute, Burst: 7},
			}, ""},
		{"bad number", map[string]string{"EXGATE_ORDER_LIMIT": "lots/10s"}, nil, httpapi.RouteLimits{}, "EXGATE_ORDER_LIMIT"},
		{"bad period", nil, []string{"--market-data-limit", "10/soon"}, httpapi.RouteLimits{}, "--market-data-limit"},
		{"no period", nil, []string{"--withdrawal-limit", "10"}, httpapi.RouteLimits{}, "--withdrawal-limit"},
		{"metrics on the API's address", nil, []string{"--metrics-addr", "127.0.0.1:8080"}, httpapi.RouteLimits{}, "--metrics-addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, c := NewFlagSet("serve", func(n string) string { return tt.env[n] }, io.Discard, true)
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
				t.Fatal(err)
			}
			got, err := c.routeLimits()
			if err != nil || got != tt.want {
				t.Fatalf("routeLimits = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
