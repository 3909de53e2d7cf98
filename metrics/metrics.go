// Package metrics owns exgate's Prometheus registry and collectors. The
// other packages never import it: each takes a small interface (or an
// optional hook) in its options, nil meaning no metrics, and
// cmd/internal/gateway passes a *Metrics when --metrics-addr is set.
//
// Label values are bounded: route patterns, exchange names, endpoint
// classes, status codes, intent kinds and states. Never a client key, a
// symbol from a request or an id.
package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/exgate/exgate"
)

// Metrics holds the registry (its own, never the global default one) and
// every collector.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	latency         *prometheus.HistogramVec
	upstream        *prometheus.CounterVec
	upstreamLimited *prometheus.CounterVec
	weightUsed      *prometheus.GaugeVec
	weightLimit     *prometheus.GaugeVec
	clockSkew       *prometheus.GaugeVec
	pacing          *prometheus.CounterVec
	coalesced       *prometheus.CounterVec
	intents         *prometheus.CounterVec
	reconciled      *prometheus.CounterVec
	backlog         prometheus.Gauge
}

// New builds the registry with every collector registered, plus the Go
// runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exgate_http_requests_total",
			Help: "API requests answered, by route pattern, exchange (none before the exchange key is known) and status.",
		}, []string{"route", "exchange", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "exgate_http_request_duration_seconds",
			Help:    "API request latency, by route pattern, exchange and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "exchange", "status"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exgate_upstream_requests_total",
			Help: "Calls to the exchanges, by exchange, endpoint class (market, orders, wallet, account, other) and status (error when no answer came).",
		}, []string{"exchange", "class", "status"}),
		upstreamLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exgate_upstream_rate_limited_total",
			Help: "Answers 429 (rate limited) and 418 (banned) received from the exchanges.",
		}, []string{"exchange", "status"}),
		weightUsed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "exgate_upstream_weight_used",
			Help: "Request weight used in the exchange's current window, as the exchange last reported it in an answer's headers.",
		}, []string{"exchange"}),
		weightLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "exgate_upstream_weight_limit",
			Help: "Request weight allowed in the exchange's window (the limit exgate paces for, or the exchange's reported limit).",
		}, []string{"exchange"}),
		clockSkew: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "exgate_upstream_clock_skew_seconds",
			Help: "The exchange's clock minus this host's, from the Date header of its last answer (whole seconds, so within about 0.5 s).",
		}, []string{"exchange"}),
		pacing: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exgate_pacing_total",
			Help: "Calls the gateway's pacing held back, by exchange, budget and outcome: wait (sent after waiting) or refused (answered 503, nothing sent).",
		}, []string{"exchange", "budget", "outcome"}),
		coalesced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exgate_coalesce_hits_total",
			Help: "Market-data requests answered by another request's exchange call (shared in flight or reused within --market-data-max-age).",
		}, []string{"exchange", "kind"}),
		intents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exgate_journal_intents_total",
			Help: "Journal intents recorded in each state (submitting, accepted, unknown, final), by kind.",
		}, []string{"kind", "state"}),
		reconciled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exgate_journal_reconciliations_total",
			Help: "Reconciliation reads of unfinished intents, by kind and outcome (final, unfinished, error).",
		}, []string{"kind", "outcome"}),
		backlog: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "exgate_journal_reconcile_backlog",
			Help: "Intents the last reconciliation pass left unfinished.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.upstream, m.upstreamLimited, m.weightUsed, m.weightLimit, m.clockSkew,
		m.pacing, m.coalesced, m.intents, m.reconciled, m.backlog,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry the collectors are in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveRequest records one API request: route is the ServeMux pattern
// ("GET /v1/order"), never the raw path.
func (m *Metrics) ObserveRequest(route, exchange string, status int, d time.Duration) {
	if route == "" {
		route = "none"
	}
	if exchange == "" {
		exchange = "none"
	}
	code := strconv.Itoa(status)
	m.requests.WithLabelValues(route, exchange, code).Inc()
	if status == http.StatusSwitchingProtocols {
		// A stream's handshake: d is the connection's lifetime, not a
		// request's latency (exgate_stream_* count the streams).
		return
	}
	m.latency.WithLabelValues(route, exchange, code).Observe(d.Seconds())
}

// SetWeightLimit records the request weight exgate paces an exchange for.
func (m *Metrics) SetWeightLimit(exchange string, limit int) {
	m.weightLimit.WithLabelValues(exchange).Set(float64(limit))
}

// CoalesceHit records a market-data request that shared another's call.
func (m *Metrics) CoalesceHit(exchange, kind string) {
	m.coalesced.WithLabelValues(exchange, kind).Inc()
}

// IntentState records an intent entering state.
func (m *Metrics) IntentState(kind, state string) {
	m.intents.WithLabelValues(kind, state).Inc()
}

// Reconciled records one reconciliation read and its outcome.
func (m *Metrics) Reconciled(kind, outcome string) {
	m.reconciled.WithLabelValues(kind, outcome).Inc()
}

// ReconcileBacklog records how many intents the last pass left unfinished.
func (m *Metrics) ReconcileBacklog(n int) { m.backlog.Set(float64(n)) }

// ReplayGuardSize exports size (signatures held) as a gauge read at each
// scrape; for a guard that knows its size cheaply (in process).
func (m *Metrics) ReplayGuardSize(size func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "exgate_replay_guard_signatures",
		Help: "Signatures held by the in-process replay guard.",
	}, func() float64 { return float64(size()) }))
}

// WeightReader reads the request weight an exchange reports in an
// answer's headers: used, and its limit when the exchange reports that
// too (else 0); ok is false when the answer carries none. The adapter
// knows its exchange's headers (exchange.Adapter.Weight).
type WeightReader func(h http.Header) (used, limit float64, ok bool)

// Transport counts next's calls to exchange by endpoint class and status,
// the 429 and 418 answers, and the weight the exchange reports used
// (read by weight; nil: the exchange reports none).
func (m *Metrics) Transport(exchange string, next http.RoundTripper, weight WeightReader) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{m: m, exchange: exchange, next: next, weight: weight}
}

type transport struct {
	m        *Metrics
	exchange string
	next     http.RoundTripper
	weight   WeightReader
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	now := time.Now()
	class := EndpointClass(req.URL.Path)
	if err != nil {
		t.m.upstream.WithLabelValues(t.exchange, class, "error").Inc()
		return resp, err
	}
	code := strconv.Itoa(resp.StatusCode)
	t.m.upstream.WithLabelValues(t.exchange, class, code).Inc()
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusTeapot {
		t.m.upstreamLimited.WithLabelValues(t.exchange, code).Inc()
	}
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		// Date is truncated to the second: its middle is the estimate.
		t.m.clockSkew.WithLabelValues(t.exchange).Set(d.Add(500 * time.Millisecond).Sub(now).Seconds())
	}
	if t.weight != nil {
		if used, limit, ok := t.weight(resp.Header); ok {
			if limit > 0 {
				t.m.weightLimit.WithLabelValues(t.exchange).Set(limit)
			}
			t.m.weightUsed.WithLabelValues(t.exchange).Set(used)
		}
	}
	return resp, nil
}

// EndpointClass maps an exchange URL path to one of a few classes, so the
// label never carries an id a path may hold (Gate.io's /spot/orders/{id}).
func EndpointClass(path string) string {
	p := strings.ToLower(path)
	switch {
	case strings.Contains(p, "withdraw"), strings.Contains(p, "deposit"), strings.Contains(p, "wallet"), strings.Contains(p, "capital"),
		strings.Contains(p, "transfer"), strings.Contains(p, "funding-asset"):
		return "wallet"
	case strings.Contains(p, "order"), strings.Contains(p, "trade"), strings.Contains(p, "fill"), strings.Contains(p, "cancel"):
		if strings.Contains(p, "order_book") || strings.Contains(p, "orderbook") || strings.Contains(p, "/public/") {
			return "market"
		}
		return "orders"
	case strings.Contains(p, "balance"), strings.Contains(p, "account"), strings.Contains(p, "apirestrictions"), strings.Contains(p, "getapikeyinfo"):
		return "account"
	case strings.Contains(p, "kline"), strings.Contains(p, "candle"), strings.Contains(p, "depth"), strings.Contains(p, "ohlc"),
		strings.Contains(p, "ticker"), strings.Contains(p, "exchangeinfo"), strings.Contains(p, "assetpairs"), strings.Contains(p, "currency_pairs"),
		strings.Contains(p, "/public/"), strings.HasSuffix(p, "/time"):
		return "market"
	}
	return "other"
}

// Limiter wraps l so that the adapters' pacing reports through it the
// calls it held back (ObservePace, found by the pacer with a type
// assertion).
func (m *Metrics) Limiter(l exgate.Limiter) exgate.Limiter { return &limiter{Limiter: l, m: m} }

type limiter struct {
	exgate.Limiter
	m *Metrics
}

// ObservePace records a call held back by pacing: refused when it was
// answered 503 without being sent, else it waited.
func (l *limiter) ObservePace(exchange, budget string, refused bool) {
	outcome := "wait"
	if refused {
		outcome = "refused"
	}
	l.m.pacing.WithLabelValues(exchange, budget, outcome).Inc()
}

// ClockSkewGauge is the clock-skew gauge of exchange (for tests).
func (m *Metrics) ClockSkewGauge(exchange string) prometheus.Gauge {
	return m.clockSkew.WithLabelValues(exchange)
}

// Headroom is one exchange's pacing as the collectors last saw it, for the
// console's health page: the request weight the exchange reported against
// its limit, the calls pacing held back, and the clock skew.
type Headroom struct {
	Exchange string
	// WeightUsed and WeightLimit are set when HasWeight.
	WeightUsed, WeightLimit float64
	HasWeight               bool
	// Waited and Refused count the calls pacing held back since start.
	Waited, Refused float64
	// ClockSkew is the exchange's clock minus ours, in seconds, when
	// HasSkew.
	ClockSkew float64
	HasSkew   bool
}

// Headroom reads the pacing collectors, one entry per exchange seen.
func (m *Metrics) Headroom() []Headroom {
	families, err := m.reg.Gather()
	if err != nil {
		return nil
	}
	by := map[string]*Headroom{}
	var order []string
	get := func(exchange string) *Headroom {
		h := by[exchange]
		if h == nil {
			h = &Headroom{Exchange: exchange}
			by[exchange] = h
			order = append(order, exchange)
		}
		return h
	}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			ex := labels["exchange"]
			if ex == "" {
				continue
			}
			switch f.GetName() {
			case "exgate_upstream_weight_used":
				h := get(ex)
				h.WeightUsed, h.HasWeight = mt.GetGauge().GetValue(), true
			case "exgate_upstream_weight_limit":
				get(ex).WeightLimit = mt.GetGauge().GetValue()
			case "exgate_upstream_clock_skew_seconds":
				h := get(ex)
				h.ClockSkew, h.HasSkew = mt.GetGauge().GetValue(), true
			case "exgate_pacing_total":
				h := get(ex)
				if labels["outcome"] == "refused" {
					h.Refused += mt.GetCounter().GetValue()
				} else {
					h.Waited += mt.GetCounter().GetValue()
				}
			}
		}
	}
	out := make([]Headroom, 0, len(order))
	for _, ex := range order {
		out = append(out, *by[ex])
	}
	return out
}
