package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the platform's Prometheus series, registered on one registry.
type Metrics struct {
	reg *prometheus.Registry

	inflight        prometheus.Gauge
	queueWait       prometheus.Histogram
	rejected        *prometheus.CounterVec // reason
	requests        *prometheus.CounterVec // route, code
	requestDuration *prometheus.HistogramVec
	bulkInflight    *prometheus.GaugeVec   // bulkhead
	bulkRejected    *prometheus.CounterVec // bulkhead

	server *admissionMetrics // admission path series, see metrics_server.go
}

// NewMetrics creates the platform series on a fresh registry (never the global one),
// with the Go and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	buckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m := &Metrics{
		reg: reg,
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_inflight", Help: "Requests executing on a worker now.",
		}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "platform_queue_wait_seconds", Help: "Time requests waited for a worker.", Buckets: buckets,
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_rejected_total", Help: "Requests rejected by the server, by reason.",
		}, []string{"reason"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_requests_total", Help: "Requests answered, by route and status code.",
		}, []string{"route", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "platform_request_duration_seconds", Help: "Time from arrival to answer, queue wait included.", Buckets: buckets,
		}, []string{"route"}),
		bulkInflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_bulkhead_inflight", Help: "Calls holding a bulkhead permit now.",
		}, []string{"bulkhead"}),
		bulkRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_bulkhead_rejected_total", Help: "Calls a full bulkhead refused.",
		}, []string{"bulkhead"}),
	}
	reg.MustRegister(m.inflight, m.queueWait, m.rejected, m.requests, m.requestDuration,
		m.bulkInflight, m.bulkRejected,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	m.server = newAdmissionMetrics(reg)
	return m
}

// Registry returns the registry the series live on, for a target's own series.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// handler serves the registry in the Prometheus text format.
func (m *Metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
