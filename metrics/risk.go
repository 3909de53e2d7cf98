package metrics

import "github.com/prometheus/client_golang/prometheus"

// RiskMetrics counts the risk controls' refusals (docs/risk.md).
type RiskMetrics struct {
	refusals *prometheus.CounterVec
}

// Risk registers the risk controls' metrics: refusals by limit, and the
// halted keys, read from halted at each scrape (a global halt counts as
// one).
func (m *Metrics) Risk(halted func() int) *RiskMetrics {
	r := &RiskMetrics{refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "exgate_risk_refusals_total",
		Help: "Orders and withdrawals refused by the risk controls, by limit (symbols, maxOrderNotional, priceBand, maxOpenOrders, dailyNotional, dailyWithdrawal, or halted).",
	}, []string{"limit"})}
	m.reg.MustRegister(r.refusals, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "exgate_risk_halted_keys",
		Help: "Halts in force: client keys halted, plus one for a halt of every key.",
	}, func() float64 { return float64(halted()) }))
	return r
}

// RiskRefused counts one refusal of limit.
func (r *RiskMetrics) RiskRefused(limit string) { r.refusals.WithLabelValues(limit).Inc() }
