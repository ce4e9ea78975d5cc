package server

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// admissionMetrics are the series of the server's admission path (queue, back
// pressure, deadlines, quotas, bulkheads), on the same registry as Metrics.
type admissionMetrics struct {
	// QueueMode is 1 for the active mode ("codel" or "fifo"), 0 for the other.
	QueueMode *prometheus.GaugeVec
	// Overloaded is 1 while the CoDel queue is judged overloaded.
	Overloaded prometheus.Gauge
	// Backpressure is 1 while arrivals are refused with back pressure.
	Backpressure prometheus.Gauge
	// QueueLength is the requests waiting for a worker.
	QueueLength prometheus.Gauge
	// CodelMinDelay is the smallest queueing delay seen in the current interval.
	CodelMinDelay prometheus.Gauge
	// Decisions counts every admission decision by stage and outcome.
	Decisions *prometheus.CounterVec // stage, decision
	// WastedWork counts requests started after their caller's deadline.
	WastedWork prometheus.Counter
	// BulkLimit is each bulkhead's current limit.
	BulkLimit *prometheus.GaugeVec // bulkhead
	// BulkDecisions counts each bulkhead's decisions (admit, reject, shed, would-reject).
	BulkDecisions *prometheus.CounterVec // bulkhead, decision
	// ShadowRejections counts what limits in shadow mode let through that
	// enforcing would have rejected.
	ShadowRejections *prometheus.CounterVec // limit, name, reason
	// QuotaDecisions counts quota decisions by caller (configured callers by
	// name, others as "other") and decision (admit, reject).
	QuotaDecisions *prometheus.CounterVec // caller, decision
	// QuotaErrors counts requests let through because the quota counter failed.
	QuotaErrors prometheus.Counter

	bulkheads bulkheadSet
}

func newAdmissionMetrics(reg *prometheus.Registry) *admissionMetrics {
	x := &admissionMetrics{
		QueueMode: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_queue_mode", Help: "1 for the queue discipline in use (codel or fifo).",
		}, []string{"mode"}),
		Overloaded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_queue_overloaded", Help: "1 while the CoDel queue is judged overloaded.",
		}),
		Backpressure: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_backpressure_active", Help: "1 while arrivals get the back-pressure answer.",
		}),
		QueueLength: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_queue_length", Help: "Requests waiting for a worker.",
		}),
		CodelMinDelay: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_codel_min_delay_seconds", Help: "Smallest queueing delay seen in the current CoDel interval.",
		}),
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_decisions_total", Help: "Admission decisions by stage (deadline, quota, bulkhead, queue) and outcome.",
		}, []string{"stage", "decision"}),
		WastedWork: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "platform_wasted_work_total", Help: "Requests whose work started after the caller's deadline.",
		}),
		BulkLimit: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_bulkhead_limit", Help: "Current limit of each bulkhead.",
		}, []string{"bulkhead"}),
		BulkDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_bulkhead_decisions_total", Help: "Bulkhead decisions: admit, reject, shed, would-reject (shadow mode).",
		}, []string{"bulkhead", "decision"}),
		ShadowRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_shadow_rejections_total",
			Help: "Requests a limit in shadow mode let through that enforcing would have rejected, by limit (bulkhead, quota), name (the bulkhead, or the caller: unconfigured callers as other) and reason (full, shed, over-quota).",
		}, []string{"limit", "name", "reason"}),
		QuotaDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_quota_decisions_total", Help: "Quota decisions by caller (unconfigured callers as other).",
		}, []string{"caller", "decision"}),
		QuotaErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "platform_quota_errors_total", Help: "Requests let through because the quota counter failed (fail open).",
		}),
	}
	reg.MustRegister(x.QueueMode, x.Overloaded, x.Backpressure, x.QueueLength, x.CodelMinDelay, x.Decisions,
		x.WastedWork, x.BulkLimit, x.BulkDecisions, x.ShadowRejections, x.QuotaDecisions, x.QuotaErrors)
	return x
}

// Limits of platform_shadow_rejections_total.
const (
	limitBulkhead = "bulkhead"
	limitQuota    = "quota"
)

// resizable is a bulkhead whose limit the admin endpoint can change.
type resizable interface {
	Name() string
	Limit() int
	setLimit(n int) error
	setMode(m BulkheadMode)
}

// bulkheadSet is the bulkheads registered on one Metrics, by name.
type bulkheadSet struct {
	mu sync.Mutex
	m  map[string]resizable
}

func (s *bulkheadSet) add(b resizable) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]resizable{}
	}
	s.m[b.Name()] = b
}

func (s *bulkheadSet) get(name string) (resizable, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[name]
	return b, ok
}

func (s *bulkheadSet) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.m))
	for n := range s.m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
