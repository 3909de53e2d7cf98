package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/console"
	"github.com/exgate/exgate/exchange/binance/binancefake"
	"github.com/exgate/exgate/exchange/bybit/bybitfake"
	"github.com/exgate/exgate/exchange/gateio/gateiofake"
	"github.com/exgate/exgate/exchange/kraken/krakenfake"
	"github.com/exgate/exgate/exchange/okx/okxfake"
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
		{ClientAPIKey: "k1", Name: "b", Exchange: "binance", Key: "k", Secret: "s"},
		{ClientAPIKey: "k1", Name: "g", Exchange: "gateio", Key: "k", Secret: "s"},
	} {
		if _, err := st.AddCredential(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	exchanges := map[string]exgate.Exchange{
		"sim":     sim.New(sim.Options{Ledger: st}),
		"binance": clockStub{skew: 3 * time.Second},
		"gateio":  clockStub{err: errors.New("connection refused")},
		"kraken":  clockStub{},
	}
	m := metrics.New()
	m.Limiter(nil).(interface {
		ObservePace(exchange, budget string, refused bool)
	}).ObservePace("binance", "weight", true)

	got := map[string]console.HealthCheck{}
	g := &Gateway{Adapters: adapters(), Exchanges: exchanges}
	for _, c := range consoleHealth(ctx, st, g, m) {
		got[c.Name] = c
	}
	tests := []struct {
		name, state, detail string
	}{
		{"sim reachability", console.HealthOK, "simulated"},
		{"binance reachability", console.HealthWarn, "clock skew 3"},
		{"gateio reachability", console.HealthFail, "connection refused"},
		// Not checked is not a green light (issue 25).
		{"kraken reachability", console.HealthUnchecked, "no exchange key uses it"},
		{"binance pacing headroom", console.HealthWarn, "1 refused"},
	}
	for _, tc := range tests {
		c, ok := got[tc.name]
		if !ok || c.State != tc.state || !strings.Contains(c.Detail, tc.detail) {
			t.Errorf("%s = %+v, want %s with %q", tc.name, c, tc.state, tc.detail)
		}
	}
	noMetrics := consoleHealth(ctx, st, g, nil)
	if last := noMetrics[len(noMetrics)-1]; last.Name != "pacing headroom" || last.State != console.HealthWarn {
		t.Errorf("without metrics: %+v", last)
	}
	nothingPaced := consoleHealth(ctx, st, g, metrics.New())
	if last := nothingPaced[len(nothingPaced)-1]; last.Name != "pacing headroom" || last.State != console.HealthUnchecked {
		t.Errorf("before any call was paced: %+v, want unchecked", last)
	}
}

// TestConsoleHealthCoalesced: the health page reads each exchange's clock
// through the gateway as Build makes it, coalescing on (the default),
// against the fakes: a wrapper must not hide the adapter's ServerTime
// (issue 24: every exchange "cannot read the exchange's clock").
func TestConsoleHealthCoalesced(t *testing.T) {
	ctx := t.Context()
	bf := binancefake.New(binancefake.Options{})
	t.Cleanup(bf.Close)
	kf := krakenfake.New(krakenfake.Options{})
	t.Cleanup(kf.Close)
	gf := gateiofake.New(gateiofake.Options{})
	t.Cleanup(gf.Close)
	of := okxfake.New(okxfake.Options{})
	t.Cleanup(of.Close)
	yf := bybitfake.New(bybitfake.Options{})
	t.Cleanup(yf.Close)
	fs, cfg := NewFlagSet("serve", func(name string) string {
		return map[string]string{"EXGATE_DATA_DIR": t.TempDir(), "EXGATE_BINANCE_URL": bf.URL, "EXGATE_KRAKEN_URL": kf.URL, "EXGATE_GATEIO_URL": gf.URL,
			"EXGATE_OKX_URL": of.URL, "EXGATE_BYBIT_URL": yf.URL}[name]
	}, io.Discard, true)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if !cfg.Coalesce {
		t.Fatal("coalescing is off by default; this test is about it on")
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	state, err := OpenState(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { state.Close() })
	if err := st.CreateClientKey(ctx, exgate.ClientKey{APIKey: "k1", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range adapters() {
		if _, err := st.AddCredential(ctx, exgate.Credential{ClientAPIKey: "k1", Name: a.Name, Exchange: a.Name, Key: "k", Secret: "c2VjcmV0"}); err != nil {
			t.Fatal(err)
		}
	}
	g, err := Build(cfg, st, state, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]console.HealthCheck{}
	for _, c := range consoleHealth(ctx, st, g, nil) {
		got[c.Name] = c
	}
	for _, a := range adapters() {
		want := "clock skew"
		if a.InProcess {
			want = "simulated"
		}
		c := got[a.Name+" reachability"]
		if c.State != console.HealthOK || !strings.Contains(c.Detail, want) {
			t.Errorf("%s reachability = %+v, want ok with %q", a.Name, c, want)
		}
	}
}
