package client

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// clientVecs are the smart client's series, shared by every client on one registry.
type clientVecs struct {
	calls         *prometheus.CounterVec // dependency, result
	attempts      *prometheus.CounterVec // dependency, outcome
	hostRequests  *prometheus.CounterVec // dependency, host
	retries       *prometheus.CounterVec // dependency
	retriesDenied *prometheus.CounterVec // dependency
	backpressure  *prometheus.CounterVec // dependency, host
	breakerState  *prometheus.GaugeVec   // dependency
	breakerReject *prometheus.CounterVec // dependency
	ejections     *prometheus.CounterVec // dependency, host, detector, signal
	ejectedHosts  *prometheus.GaugeVec   // dependency
	hostEjected   *prometheus.GaugeVec   // dependency, host
}

// Call results in platform_client_calls_total.
const (
	callOK       = "ok"
	callError    = "error"
	callBreaker  = "breaker"
	callDeadline = "deadline"
)

func newClientVecs(reg prometheus.Registerer) (*clientVecs, error) {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	v := &clientVecs{
		calls: counter("platform_client_calls_total",
			"Calls to a dependency (one per Do, retries included), by result: ok, error, breaker, deadline.", "dependency", "result"),
		attempts: counter("platform_client_attempts_total",
			"Attempts sent to a dependency, by outcome: success, failure, neutral (back pressure, canceled).", "dependency", "outcome"),
		hostRequests: counter("platform_client_host_requests_total",
			"Attempts sent to each replica of a dependency (its traffic share).", "dependency", "host"),
		retries: counter("platform_client_retries_total",
			"Retries made to a dependency.", "dependency"),
		retriesDenied: counter("platform_client_retries_denied_total",
			"Retries the retry budget refused.", "dependency"),
		backpressure: counter("platform_client_backpressure_total",
			"Back-pressure answers (503 with X-Backpressure) received, never retried by the smart client.", "dependency", "host"),
		breakerState: gauge("platform_client_breaker_state",
			"Circuit breaker state: 0 closed, 1 open, 2 half-open.", "dependency"),
		breakerReject: counter("platform_client_breaker_rejected_total",
			"Attempts failed fast by an open circuit breaker.", "dependency"),
		ejections: counter("platform_client_ejections_total",
			"Outlier ejections of a replica, by detector and signal (failures or latency).", "dependency", "host", "detector", "signal"),
		ejectedHosts: gauge("platform_client_ejected_hosts",
			"Replicas of a dependency ejected now.", "dependency"),
		hostEjected: gauge("platform_client_host_ejected",
			"1 while a replica is ejected, else 0.", "dependency", "host"),
	}
	cs := []prometheus.Collector{v.calls, v.attempts, v.hostRequests, v.retries, v.retriesDenied,
		v.backpressure, v.breakerState, v.breakerReject, v.ejections, v.ejectedHosts, v.hostEjected}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			cs[i] = are.ExistingCollector // a second client on the same registry shares the series
		}
	}
	v.calls, v.attempts, v.hostRequests = cs[0].(*prometheus.CounterVec), cs[1].(*prometheus.CounterVec), cs[2].(*prometheus.CounterVec)
	v.retries, v.retriesDenied, v.backpressure = cs[3].(*prometheus.CounterVec), cs[4].(*prometheus.CounterVec), cs[5].(*prometheus.CounterVec)
	v.breakerState, v.breakerReject = cs[6].(*prometheus.GaugeVec), cs[7].(*prometheus.CounterVec)
	v.ejections, v.ejectedHosts, v.hostEjected = cs[8].(*prometheus.CounterVec), cs[9].(*prometheus.GaugeVec), cs[10].(*prometheus.GaugeVec)
	return v, nil
}

// depMetrics are one dependency's series, resolved once so that a call costs
// no label lookups.
type depMetrics struct {
	vecs          *clientVecs
	dep           string
	calls         map[string]prometheus.Counter
	attempts      [3]prometheus.Counter // by outcome
	hostRequests  []prometheus.Counter
	backpressure  []prometheus.Counter
	hostEjected   []prometheus.Gauge
	retries       prometheus.Counter
	retriesDenied prometheus.Counter
	breakerState  prometheus.Gauge
	breakerReject prometheus.Counter
	ejectedHosts  prometheus.Gauge
}

func newDepMetrics(v *clientVecs, dep string, hosts []string) *depMetrics {
	m := &depMetrics{
		vecs: v, dep: dep, calls: map[string]prometheus.Counter{},
		retries:       v.retries.WithLabelValues(dep),
		retriesDenied: v.retriesDenied.WithLabelValues(dep),
		breakerState:  v.breakerState.WithLabelValues(dep),
		breakerReject: v.breakerReject.WithLabelValues(dep),
		ejectedHosts:  v.ejectedHosts.WithLabelValues(dep),
	}
	for _, r := range []string{callOK, callError, callBreaker, callDeadline} {
		m.calls[r] = v.calls.WithLabelValues(dep, r)
	}
	for oc, name := range []string{"success", "failure", "neutral"} {
		m.attempts[oc] = v.attempts.WithLabelValues(dep, name)
	}
	for _, h := range hosts {
		m.hostRequests = append(m.hostRequests, v.hostRequests.WithLabelValues(dep, h))
		m.backpressure = append(m.backpressure, v.backpressure.WithLabelValues(dep, h))
		m.hostEjected = append(m.hostEjected, v.hostEjected.WithLabelValues(dep, h))
	}
	return m
}

// ejectionEvents updates the series for hosts ejected or returned to service.
func (m *depMetrics) ejectionEvents(hosts []string, evs []ejection) {
	for _, e := range evs {
		if e.Detector == "" {
			m.hostEjected[e.Host].Set(0)
			m.ejectedHosts.Dec()
			continue
		}
		m.vecs.ejections.WithLabelValues(m.dep, hosts[e.Host], string(e.Detector), e.Detector.signal()).Inc()
		m.hostEjected[e.Host].Set(1)
		m.ejectedHosts.Inc()
	}
}
