package metrics

import "github.com/prometheus/client_golang/prometheus"

// AuditMetrics counts what the API's audit writer could not write at once
// (docs/contract.md 2.6): records of failed writes (written again when the
// store answers) and records dropped (the bounded queue full while the
// store failed).
type AuditMetrics struct {
	failed, dropped prometheus.Counter
}

// Audit registers the audit writer's metrics; queued is read at each
// scrape (the records waiting to be written).
func (m *Metrics) Audit(queued func() int) *AuditMetrics {
	a := &AuditMetrics{
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "exgate_audit_write_failures_total",
			Help: "Audit records in writes the store refused; they stay queued and are written again when it answers.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "exgate_audit_records_dropped_total",
			Help: "Audit records that could not be written: the queue was full while the store failed (each is also logged).",
		}),
	}
	m.reg.MustRegister(a.failed, a.dropped, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "exgate_audit_records_queued",
		Help: "Audit records waiting to be written.",
	}, func() float64 { return float64(queued()) }))
	return a
}

// AuditWriteFailed counts the records of one refused write.
func (a *AuditMetrics) AuditWriteFailed(records int) { a.failed.Add(float64(records)) }

// AuditDropped counts records dropped.
func (a *AuditMetrics) AuditDropped(records int) { a.dropped.Add(float64(records)) }
