package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/localstate"
	"github.com/exgate/exgate/metrics"
	"github.com/exgate/exgate/stream"
)

func TestEndpointClass(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v3/klines":                     "market",
		"/api/v3/depth":                      "market",
		"/api/v3/exchangeInfo":               "market",
		"/api/v3/time":                       "market",
		"/api/v3/order":                      "orders",
		"/api/v3/myTrades":                   "orders",
		"/api/v3/account":                    "account",
		"/sapi/v1/capital/withdraw/apply":    "wallet",
		"/sapi/v1/asset/transfer":            "wallet",
		"/sapi/v1/asset/get-funding-asset":   "wallet",
		"/sapi/v1/account/apiRestrictions":   "account",
		"/0/public/OHLC":                     "market",
		"/0/private/AddOrder":                "orders",
		"/0/private/Balance":                 "account",
		"/0/private/Withdraw":                "wallet",
		"/api/v4/spot/order_book":            "market",
		"/api/v4/spot/orders/123456789":      "orders",
		"/api/v4/spot/candlesticks":          "market",
		"/api/v4/wallet/deposit_address":     "wallet",
		"/api/v4/something/else/entirely/42": "other",
	} {
		if got := metrics.EndpointClass(path); got != want {
			t.Errorf("EndpointClass(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestTransport counts calls by class and status, the 429 and 418
// answers, and the weight an exchange reports.
func TestTransport(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v3/") {
			w.Header().Set("X-MBX-USED-WEIGHT-1M", "42")
		} else {
			w.Header().Set("X-Gate-RateLimit-Limit", "900")
			w.Header().Set("X-Gate-RateLimit-Requests-Remain", "880")
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	m := metrics.New()
	c := &http.Client{Transport: m.Transport("binance", nil, binance.Adapter().Weight)}
	get := func(path string) {
		t.Helper()
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("/api/v3/klines")
	status = http.StatusTooManyRequests
	get("/api/v3/klines")
	status = http.StatusTeapot
	get("/api/v3/order")

	gate := &http.Client{Transport: m.Transport("gateio", nil, gateio.Adapter().Weight)}
	resp, err := gate.Get(srv.URL + "/api/v4/spot/orders/1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	want := `
# HELP exgate_upstream_rate_limited_total Answers 429 (rate limited) and 418 (banned) received from the exchanges.
# TYPE exgate_upstream_rate_limited_total counter
exgate_upstream_rate_limited_total{exchange="binance",status="418"} 1
exgate_upstream_rate_limited_total{exchange="binance",status="429"} 1
exgate_upstream_rate_limited_total{exchange="gateio",status="418"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "exgate_upstream_rate_limited_total"); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		name, text string
	}{
		{"exgate_upstream_requests_total", `exgate_upstream_requests_total{class="market",exchange="binance",status="200"} 1`},
		{"exgate_upstream_requests_total", `exgate_upstream_requests_total{class="orders",exchange="gateio",status="418"} 1`},
		{"exgate_upstream_weight_used", `exgate_upstream_weight_used{exchange="binance"} 42`},
		{"exgate_upstream_weight_used", `exgate_upstream_weight_used{exchange="gateio"} 20`},
		{"exgate_upstream_weight_limit", `exgate_upstream_weight_limit{exchange="gateio"} 900`},
	} {
		if got := scrape(t, m); !strings.Contains(got, c.text+"\n") {
			t.Errorf("no %s in:\n%s", c.text, grep(got, c.name))
		}
	}
}

// TestLimiterObservesPace: the limiter the adapters get reports pacing.
func TestLimiterObservesPace(t *testing.T) {
	m := metrics.New()
	l := m.Limiter(localstate.NewLimiter(nil))
	o, ok := l.(interface {
		ObservePace(exchange, budget string, refused bool)
	})
	if !ok {
		t.Fatal("the metrics limiter does not observe pacing")
	}
	o.ObservePace("binance", "request budget", false)
	o.ObservePace("binance", "request budget", true)
	o.ObservePace("binance", "request budget", true)
	got := scrape(t, m)
	for _, s := range []string{
		`exgate_pacing_total{budget="request budget",exchange="binance",outcome="refused"} 2`,
		`exgate_pacing_total{budget="request budget",exchange="binance",outcome="wait"} 1`,
	} {
		if !strings.Contains(got, s+"\n") {
			t.Errorf("no %s in:\n%s", s, grep(got, "exgate_pacing"))
		}
	}
}

func TestRequestsAndJournal(t *testing.T) {
	m := metrics.New()
	m.ObserveRequest("GET /v1/order", "", 401, time.Millisecond)
	m.ObserveRequest("GET /v1/order", "sim", 200, 2*time.Millisecond)
	m.IntentState("order", "submitting")
	m.Reconciled("order", "final")
	m.ReconcileBacklog(3)
	m.CoalesceHit("sim", "book")
	m.ReplayGuardSize(func() int { return 7 })
	got := scrape(t, m)
	for _, s := range []string{
		`exgate_http_requests_total{exchange="none",route="GET /v1/order",status="401"} 1`,
		`exgate_http_request_duration_seconds_count{exchange="sim",route="GET /v1/order",status="200"} 1`,
		`exgate_journal_intents_total{kind="order",state="submitting"} 1`,
		`exgate_journal_reconciliations_total{kind="order",outcome="final"} 1`,
		`exgate_journal_reconcile_backlog 3`,
		`exgate_coalesce_hits_total{exchange="sim",kind="book"} 1`,
		`exgate_replay_guard_signatures 7`,
	} {
		if !strings.Contains(got, s+"\n") {
			t.Errorf("no %s in:\n%s", s, got)
		}
	}
}

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d", rec.Code)
	}
	return rec.Body.String()
}

func grep(text, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestClockSkew: the Date header of an answer sets the exchange's skew.
func TestClockSkew(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(5*time.Second).UTC().Format(http.TimeFormat))
	}))
	defer srv.Close()
	m := metrics.New()
	resp, err := (&http.Client{Transport: m.Transport("kraken", nil, nil)}).Get(srv.URL + "/0/public/Time")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := testutil.ToFloat64(m.ClockSkewGauge("kraken"))
	if got < 4 || got > 6 {
		t.Errorf("skew = %v s, want about 5", got)
	}
}

// BenchmarkObserveRequest is what metrics add to one API request.
func BenchmarkObserveRequest(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRequest("GET /v1/market/recent-klines", "binance", 200, 3*time.Millisecond)
	}
}

// BenchmarkTransport is what metrics add to one exchange call: the
// counters, the weight and the Date header read, over a transport that
// answers at once.
func BenchmarkTransport(b *testing.B) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{
		"Date": {time.Now().UTC().Format(http.TimeFormat)}, "X-Mbx-Used-Weight-1m": {"12"}}}
	rt := metrics.New().Transport("binance", roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil }), binance.Adapter().Weight)
	req := httptest.NewRequest("GET", "http://x/api/v3/klines", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.RoundTrip(req); err != nil {
			b.Fatal(err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHeadroom: the console's health page reads pacing per exchange from
// the same collectors /metrics serves.
func TestHeadroom(t *testing.T) {
	m := metrics.New()
	if got := m.Headroom(); len(got) != 0 {
		t.Fatalf("Headroom of a new registry = %+v, want none", got)
	}
	m.SetWeightLimit("binance", 6000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-MBX-USED-WEIGHT-1M", "1500")
	}))
	defer srv.Close()
	resp, err := (&http.Client{Transport: m.Transport("binance", nil, binance.Adapter().Weight)}).Get(srv.URL + "/api/v3/klines")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	o := m.Limiter(localstate.NewLimiter(nil)).(interface {
		ObservePace(exchange, budget string, refused bool)
	})
	o.ObservePace("binance", "weight", false)
	o.ObservePace("kraken", "counter", true)
	o.ObservePace("kraken", "counter", true)

	got := map[string]metrics.Headroom{}
	for _, h := range m.Headroom() {
		got[h.Exchange] = h
	}
	b := got["binance"]
	if !b.HasWeight || b.WeightUsed != 1500 || b.WeightLimit != 6000 || b.Waited != 1 || b.Refused != 0 {
		t.Errorf("binance headroom = %+v", b)
	}
	k := got["kraken"]
	if k.HasWeight || k.Refused != 2 || k.Waited != 0 {
		t.Errorf("kraken headroom = %+v", k)
	}
}

// fakeHub reports fixed stream stats.
type fakeHub struct{ st stream.Stats }

func (h fakeHub) Stats() stream.Stats { return h.st }

func TestStreams(t *testing.T) {
	m := metrics.New()
	m.Streams(fakeHub{stream.Stats{
		Connections: 3, Watchers: 1,
		Topics: []stream.TopicStats{
			{Exchange: "binance", Channel: "book", Subscribers: 2},
			{Exchange: "binance", Channel: "book", Subscribers: 1},
			{Exchange: "sim", Channel: "orders", Subscribers: 1},
		},
		Restarts:   []stream.RestartStats{{Exchange: "kraken", Channel: "klines", Restarts: 4}},
		SlowClosed: 2,
	}})
	// A stream's handshake counts as a request (101) but its lifetime
	// is no latency.
	m.ObserveRequest("GET /v1/stream", "binance", 101, time.Hour)
	got := scrape(t, m)
	for _, s := range []string{
		`exgate_stream_connections{kind="websocket"} 3`,
		`exgate_stream_connections{kind="in_process"} 1`,
		`exgate_stream_subscriptions{channel="book",exchange="binance"} 3`,
		`exgate_stream_upstreams{channel="book",exchange="binance"} 2`,
		`exgate_stream_subscriptions{channel="orders",exchange="sim"} 1`,
		`exgate_stream_upstream_restarts_total{channel="klines",exchange="kraken"} 4`,
		`exgate_stream_slow_closes_total 2`,
		`exgate_http_requests_total{exchange="binance",route="GET /v1/stream",status="101"} 1`,
	} {
		if !strings.Contains(got, s+"\n") {
			t.Errorf("no %s in:\n%s", s, got)
		}
	}
	if h := grep(got, `exgate_http_request_duration_seconds_count{exchange="binance",route="GET /v1/stream"`); h != "" {
		t.Errorf("a stream's lifetime in the latency histogram: %s", h)
	}
}
