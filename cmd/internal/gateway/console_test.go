package gateway

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/console"
	"github.com/exgate/exgate/exchange/sim"
	"github.com/exgate/exgate/metrics"
	"github.com/exgate/exgate/sqlite"
)

// clockStub is an exchange whose clock is off by skew, or unreachable.
type clockStub struct {
	exgate.Exchange
	skew time.Duration
	err  error
}

func (c clockStub) ServerTime(context.Context) (time.Time, error) {
	return time.Now().Add(c.skew), c.err
}

// TestConsoleHealth: the health page checks each exchange an exchange key
// uses, as doctor does, and reports pacing from the metrics.
func TestConsoleHealth(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "exgate.db"), make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "k1", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []exgate.Credential{
		{ClientAPIKey: "k1", Name: "b", Exchange: exgate.ExchangeBinance, Key: "k", Secret: "s"},
		{ClientAPIKey: "k1", Name: "g", Exchange: exgate.ExchangeGateio, Key: "k", Secret: "s"},
	} {
		if _, err := st.AddCredential(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	exchanges := map[string]exgate.Exchange{
		exgate.ExchangeSim:     sim.New(sim.Options{Ledger: st}),
		exgate.ExchangeBinance: clockStub{skew: 3 * time.Second},
		exgate.ExchangeGateio:  clockStub{err: errors.New("connection refused")},
		exgate.ExchangeKraken:  clockStub{},
	}
	m := metrics.New()
	m.Limiter(nil).(interface {
		ObservePace(exchange, budget string, refused bool)
	}).ObservePace("binance", "weight", true)

	got := map[string]console.HealthCheck{}
	for _, c := range consoleHealth(ctx, st, exchanges, m) {
		got[c.Name] = c
	}
	tests := []struct {
		name, state, detail string
	}{
		{"sim reachability", console.HealthOK, "simulated"},
		{"binance reachability", console.HealthWarn, "clock skew 3"},
		{"gateio reachability", console.HealthFail, "connection refused"},
		{"kraken reachability", console.HealthOK, "no exchange key uses it"},
		{"binance pacing headroom", console.HealthWarn, "1 refused"},
	}
	for _, tc := range tests {
		c, ok := got[tc.name]
		if !ok || c.State != tc.state || !strings.Contains(c.Detail, tc.detail) {
			t.Errorf("%s = %+v, want %s with %q", tc.name, c, tc.state, tc.detail)
		}
	}
	noMetrics := consoleHealth(ctx, st, exchanges, nil)
	if last := noMetrics[len(noMetrics)-1]; last.Name != "pacing headroom" || last.State != console.HealthWarn {
		t.Errorf("without metrics: %+v", last)
	}
}
