package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/exgate/exgate/stream"
)

// StreamHub is the stream hub of GET /v1/stream (package stream), read at
// each scrape.
type StreamHub interface {
	Stats() stream.Stats
}

// Streams exports the hub's subscribers, upstream subscriptions, restarts
// and slow-client closes, read from hub at each scrape: the hub's hot
// path (a message fanned out to a thousand clients) carries no metric
// call.
func (m *Metrics) Streams(hub StreamHub) {
	m.reg.MustRegister(streamCollector{hub: hub})
}

var (
	streamConnectionsDesc = prometheus.NewDesc("exgate_stream_connections",
		"Stream subscribers connected: WebSocket clients of GET /v1/stream (kind websocket) and in-process watchers such as the console's market page (kind in_process).",
		[]string{"kind"}, nil)
	streamSubscriptionsDesc = prometheus.NewDesc("exgate_stream_subscriptions",
		"Stream subscriptions held by subscribers, by exchange and channel (orders, book, klines).",
		[]string{"exchange", "channel"}, nil)
	streamUpstreamsDesc = prometheus.NewDesc("exgate_stream_upstreams",
		"Upstream subscriptions to the exchanges live (one per exchange, channel and pair, and credential for orders, however many subscribers), by exchange and channel.",
		[]string{"exchange", "channel"}, nil)
	streamRestartsDesc = prometheus.NewDesc("exgate_stream_upstream_restarts_total",
		"Upstream subscriptions restarted after a failure (the exchange's socket dropped or went silent), by exchange and channel.",
		[]string{"exchange", "channel"}, nil)
	streamSlowDesc = prometheus.NewDesc("exgate_stream_slow_closes_total",
		"Stream subscribers closed for reading too slowly (more than the queue limit of messages pending).",
		nil, nil)
)

type streamCollector struct{ hub StreamHub }

func (c streamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{streamConnectionsDesc, streamSubscriptionsDesc, streamUpstreamsDesc, streamRestartsDesc, streamSlowDesc} {
		ch <- d
	}
}

func (c streamCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.hub.Stats()
	ch <- prometheus.MustNewConstMetric(streamConnectionsDesc, prometheus.GaugeValue, float64(st.Connections), "websocket")
	ch <- prometheus.MustNewConstMetric(streamConnectionsDesc, prometheus.GaugeValue, float64(st.Watchers), "in_process")
	type key struct{ exchange, channel string }
	subs, ups := map[key]int{}, map[key]int{}
	for _, t := range st.Topics {
		k := key{t.Exchange, t.Channel}
		subs[k] += t.Subscribers
		ups[k]++
	}
	for k, n := range subs {
		ch <- prometheus.MustNewConstMetric(streamSubscriptionsDesc, prometheus.GaugeValue, float64(n), k.exchange, k.channel)
		ch <- prometheus.MustNewConstMetric(streamUpstreamsDesc, prometheus.GaugeValue, float64(ups[k]), k.exchange, k.channel)
	}
	for _, r := range st.Restarts {
		ch <- prometheus.MustNewConstMetric(streamRestartsDesc, prometheus.CounterValue, float64(r.Restarts), r.Exchange, r.Channel)
	}
	ch <- prometheus.MustNewConstMetric(streamSlowDesc, prometheus.CounterValue, float64(st.SlowClosed))
}
