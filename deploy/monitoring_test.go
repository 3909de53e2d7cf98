package deploy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/metrics"
)

// TestAlertRulesWithPromtool checks the rules and runs their unit tests
// (alerts_test.yml) where promtool is installed.
func TestAlertRulesWithPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (apt-get install prometheus); TestAlertSeriesExist still checks the series names")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestAlertSeriesExist: every exgate series an alert expression or the
// scrape configuration names is one the gateway exports.
func TestAlertSeriesExist(t *testing.T) {
	exported := exportedSeries(t)
	exprs := regexp.MustCompile(`(?m)^\s*expr:\s*(.+)$`).FindAllStringSubmatch(readFile(t, "alerts.yml"), -1)
	if len(exprs) < 4 {
		t.Fatalf("%d alert expressions in alerts.yml, want the backlog, 429, pacing and clock-skew alerts", len(exprs))
	}
	name := regexp.MustCompile(`\bexgate_[a-z_]+`)
	for _, e := range exprs {
		names := name.FindAllString(e[1], -1)
		if len(names) == 0 {
			t.Errorf("expr %q names no exgate series", e[1])
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("expr %q names %s, which the gateway does not export", e[1], n)
			}
		}
	}
	if !strings.Contains(readFile(t, "exgate@.service"), "EXGATE_METRICS_ADDR=127.0.0.1:1%i") {
		t.Error("exgate@.service does not set EXGATE_METRICS_ADDR to the ports prometheus.yml scrapes")
	}
	if !strings.Contains(readFile(t, "prometheus.yml"), "127.0.0.1:18081") {
		t.Error("prometheus.yml does not scrape exgate@8081's metrics address")
	}
}

// exportedSeries exercises every metrics hook once and returns the names
// of the series a scrape then holds.
func exportedSeries(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New()
	m.ObserveRequest("GET /v1/order", "sim", 200, time.Millisecond)
	m.CoalesceHit("binance", "book")
	m.IntentState("order", "submitting")
	m.Reconciled("order", "final")
	m.ReconcileBacklog(0)
	m.SetWeightLimit("binance", 6000)
	m.ReplayGuardSize(func() int { return 0 })
	m.Limiter(localstate.NewLimiter(nil)).(interface {
		ObservePace(exchange, budget string, refused bool)
	}).ObservePace("binance", "request budget", true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-MBX-USED-WEIGHT-1M", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/api/v3/time", nil)
	resp, err := (&http.Client{Transport: m.Transport("binance", nil, binance.Adapter().Weight)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, mf := range mfs {
		out[mf.GetName()] = true
	}
	return out
}
