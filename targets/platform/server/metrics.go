package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the platform's Prometheus series, registered on one registry.
type Metrics struct {
	reg *prometheus.Registry

	Inflight        prometheus.Gauge
	QueueWait       prometheus.Histogram
	Rejected        *prometheus.CounterVec // reason
	Requests        *prometheus.CounterVec // route, code
	RequestDuration *prometheus.HistogramVec
	BulkInflight    *prometheus.GaugeVec   // bulkhead
	BulkRejected    *prometheus.CounterVec // bulkhead

	server *ServerMetrics // admission path series, see metrics_server.go
}

// NewMetrics creates the platform series on a fresh registry (never the global one),
// with the Go and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	buckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m := &Metrics{
		reg: reg,
		Inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_inflight", Help: "Requests executing on a worker now.",
		}),
		QueueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "platform_queue_wait_seconds", Help: "Time requests waited for a worker.", Buckets: buckets,
		}),
		Rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_rejected_total", Help: "Requests rejected by the server, by reason.",
		}, []string{"reason"}),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_requests_total", Help: "Requests answered, by route and status code.",
		}, []string{"route", "code"}),
		RequestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "platform_request_duration_seconds", Help: "Time from arrival to answer, queue wait included.", Buckets: buckets,
		}, []string{"route"}),
		BulkInflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_bulkhead_inflight", Help: "Calls holding a bulkhead permit now.",
		}, []string{"bulkhead"}),
		BulkRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_bulkhead_rejected_total", Help: "Calls a full bulkhead refused.",
		}, []string{"bulkhead"}),
	}
	reg.MustRegister(m.Inflight, m.QueueWait, m.Rejected, m.Requests, m.RequestDuration,
		m.BulkInflight, m.BulkRejected,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	m.server = newServerMetrics(reg)
	return m
}

// ext returns the admission path series.
func (m *Metrics) ext() *ServerMetrics { return m.server }

// Server returns the admission path series (queue, back pressure, deadlines,
// quotas, bulkheads).
func (m *Metrics) Server() *ServerMetrics { return m.server }

// Registry returns the registry the series live on, for a target's own series.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
