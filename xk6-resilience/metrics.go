package resilience

import (
	"fmt"
	"time"

	"go.k6.io/k6/metrics"

	"github.com/chaosrun/chaosrun/models/client"
)

// Metric names the extension emits: a logical request's outcome (the
// models' names, shared with the native engine) and fault events.
const (
	MetricRequests      = client.MetricRequests
	MetricAttempts      = client.MetricAttempts
	MetricRetries       = client.MetricRetries
	MetricBackpressure  = client.MetricBackpressure
	MetricGiveups       = client.MetricGiveups
	MetricRejections    = client.MetricRejections
	MetricAmplification = client.MetricAmplification
	MetricGoodput       = client.MetricGoodput
	MetricFaultEvents   = "resilience_fault_events"
)

// extMetrics are the extension's k6 metrics.
type extMetrics struct {
	requests, attempts, retries, backpressure, giveups, rejections *metrics.Metric
	amplification, goodput, faultEvents                            *metrics.Metric
}

func registerMetrics(reg *metrics.Registry) (*extMetrics, error) {
	m := &extMetrics{}
	for _, d := range []struct {
		to   **metrics.Metric
		name string
		typ  metrics.MetricType
	}{
		{&m.requests, MetricRequests, metrics.Counter},
		{&m.attempts, MetricAttempts, metrics.Counter},
		{&m.retries, MetricRetries, metrics.Counter},
		{&m.backpressure, MetricBackpressure, metrics.Counter},
		{&m.giveups, MetricGiveups, metrics.Counter},
		{&m.rejections, MetricRejections, metrics.Counter},
		{&m.amplification, MetricAmplification, metrics.Trend},
		{&m.goodput, MetricGoodput, metrics.Rate},
		{&m.faultEvents, MetricFaultEvents, metrics.Counter},
	} {
		mt, err := reg.NewMetric(d.name, d.typ)
		if err != nil {
			return nil, fmt.Errorf("xk6-resilience: register metric %s: %w", d.name, err)
		}
		*d.to = mt
	}
	return m, nil
}

// tagCache remembers the VU's tag set with one more tag, so that the common
// case (the VU's tags did not change) skips the shared tag tree's lock.
type tagCache struct {
	base, with *metrics.TagSet
}

func (c *tagCache) get(base *metrics.TagSet, name, value string) *metrics.TagSet {
	if base != c.base || c.with == nil {
		c.base, c.with = base, base.With(name, value)
	}
	return c.with
}

// pushRequest emits one logical request's metrics, tagged with the model.
// Counters that stay zero are left out, except requests and attempts.
func (mi *ModuleInstance) pushRequest(model string, tc *tagCache, r client.Result) {
	state := mi.vu.State()
	if state == nil || mi.metrics == nil {
		return
	}
	tm := state.Tags.GetCurrentValues()
	tags := tc.get(tm.Tags, "model", model)
	now := time.Now()
	m := mi.metrics
	s := make([]metrics.Sample, 0, 8)
	add := func(mt *metrics.Metric, v float64) {
		s = append(s, metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: mt, Tags: tags}, Time: now, Value: v, Metadata: tm.Metadata})
	}
	add(m.requests, 1)
	add(m.attempts, float64(r.Attempts))
	add(m.amplification, float64(r.Attempts))
	add(m.goodput, b2f(r.Goodput))
	if r.Retries > 0 {
		add(m.retries, float64(r.Retries))
	}
	if r.BackPressure > 0 {
		add(m.backpressure, float64(r.BackPressure))
	}
	if r.GaveUp {
		add(m.giveups, 1)
	}
	if r.Rejected {
		add(m.rejections, 1)
	}
	metrics.PushIfNotDone(mi.vu.Context(), state.Samples, metrics.ConnectedSamples{Samples: s, Tags: tags, Time: now})
}

// pushFault emits one resilience_fault_events sample tagged proxy, toxic, action.
func (mi *ModuleInstance) pushFault(e FaultEvent) {
	state := mi.vu.State()
	if state == nil || mi.metrics == nil {
		return
	}
	tm := state.Tags.GetCurrentValues()
	tags := tm.Tags.With("proxy", e.Proxy).With("toxic", e.Toxic).With("action", e.Action)
	now := time.Now()
	metrics.PushIfNotDone(mi.vu.Context(), state.Samples, metrics.Sample{
		TimeSeries: metrics.TimeSeries{Metric: mi.metrics.faultEvents, Tags: tags}, Time: now, Value: 1, Metadata: tm.Metadata})
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
