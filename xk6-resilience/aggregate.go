package resilience

import (
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.k6.io/k6/metrics"

	"github.com/chaosrun/chaosrun/models/wire"
)

// Histogram parameters: values are recorded in microunits (value×1000), from
// 1 to one hour of milliseconds, with 3 significant figures.
const (
	histLowest  = 1
	histHighest = 3_600_000_000
	histSigFigs = 3
)

// DefaultTags are the sample tags a series is keyed by; every other tag
// (the raw url among them) is dropped.
var DefaultTags = []string{
	"scenario", "name", "api", "status", "expected_response", "tier",
	"caller", "method", "model", "shard", "key_class",
	"proxy", "toxic", "action", // resilience_fault_events
}

// Limits that keep memory bounded however long a run is.
const (
	// maxSeriesPerWindow caps the series of one second; samples of further
	// series are dropped and counted.
	maxSeriesPerWindow = 10000
	// maxCachedTimeSeries caps the cache from k6 time series to kept tags.
	maxCachedTimeSeries = 100000
)

// seriesDesc is a metric with its kept tags.
type seriesDesc struct {
	key    string
	metric string
	kind   wire.Kind // "" for a metric type the stream does not carry
	tags   map[string]string
}

// agg accumulates one series over one window.
type agg struct {
	desc     *seriesDesc
	count    int64
	sum      float64
	min, max float64
	last     float64
	lastTime int64
	nonzero  int64
	hist     *hdrhistogram.Histogram
}

// window is everything aggregated for one second.
type window struct {
	start   int64 // Unix seconds
	series  map[string]*agg
	samples int64
}

var histPool = sync.Pool{New: func() any { return hdrhistogram.New(histLowest, histHighest, histSigFigs) }}

func getHist() *hdrhistogram.Histogram { return histPool.Get().(*hdrhistogram.Histogram) }

func putHist(h *hdrhistogram.Histogram) {
	h.Reset()
	histPool.Put(h)
}

// aggregator folds samples into one-second windows. It is not safe for
// concurrent use.
type aggregator struct {
	keep    []string
	descs   map[metrics.TimeSeries]*seriesDesc
	windows map[int64]*window
	// dropped counts samples that were not aggregated.
	dropped int64
}

func newAggregator(keep []string) *aggregator {
	return &aggregator{
		keep:    keep,
		descs:   make(map[metrics.TimeSeries]*seriesDesc),
		windows: make(map[int64]*window),
	}
}

func kindOf(t metrics.MetricType) wire.Kind {
	switch t {
	case metrics.Counter:
		return wire.Counter
	case metrics.Gauge:
		return wire.Gauge
	case metrics.Trend:
		return wire.Trend
	case metrics.Rate:
		return wire.Rate
	}
	return ""
}

// describe maps a k6 time series to its metric and kept tags, cached.
func (a *aggregator) describe(ts metrics.TimeSeries) *seriesDesc {
	if d, ok := a.descs[ts]; ok {
		return d
	}
	d := &seriesDesc{metric: ts.Metric.Name, kind: kindOf(ts.Metric.Type)}
	var b strings.Builder
	b.WriteString(d.metric)
	for _, name := range a.keep {
		if ts.Tags == nil {
			break
		}
		v, ok := ts.Tags.Get(name)
		if !ok {
			continue
		}
		if d.tags == nil {
			d.tags = make(map[string]string, 4)
		}
		d.tags[name] = v
		b.WriteByte(0)
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(v)
	}
	d.key = b.String()
	if len(a.descs) >= maxCachedTimeSeries {
		clear(a.descs)
	}
	a.descs[ts] = d
	return d
}

// add folds one sample into its window.
func (a *aggregator) add(s metrics.Sample) {
	if s.Metric == nil || math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
		a.dropped++
		return
	}
	d := a.describe(s.TimeSeries)
	if d.kind == "" {
		a.dropped++
		return
	}
	sec := s.Time.Unix()
	w := a.windows[sec]
	if w == nil {
		w = &window{start: sec, series: make(map[string]*agg)}
		a.windows[sec] = w
	}
	g := w.series[d.key]
	if g == nil {
		if len(w.series) >= maxSeriesPerWindow {
			a.dropped++
			return
		}
		g = &agg{desc: d}
		if d.kind == wire.Trend {
			g.hist = getHist()
		}
		w.series[d.key] = g
	}
	w.samples++
	v := s.Value
	if g.count == 0 {
		g.min, g.max = v, v
	} else {
		g.min = math.Min(g.min, v)
		g.max = math.Max(g.max, v)
	}
	g.count++
	switch d.kind {
	case wire.Trend:
		g.sum += v
		_ = g.hist.RecordValue(toMicro(v))
	case wire.Counter:
		g.sum += v
	case wire.Rate:
		if v != 0 {
			g.nonzero++
		}
	case wire.Gauge:
		if t := s.Time.UnixNano(); g.count == 1 || t >= g.lastTime {
			g.last, g.lastTime = v, t
		}
	}
}

// toMicro converts a k6 value to the histogram's microunits, clamped to its range.
func toMicro(v float64) int64 {
	m := math.Round(v * 1000)
	switch {
	case m < 0:
		return 0
	case m > histHighest:
		return histHighest
	}
	return int64(m)
}

// take removes and returns, oldest first, the windows whose second ended at
// or before cut (all of them when cut is the zero time).
func (a *aggregator) take(cut time.Time) []*window {
	var out []*window
	for sec, w := range a.windows {
		if cut.IsZero() || !time.Unix(sec+1, 0).After(cut) {
			out = append(out, w)
			delete(a.windows, sec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// release returns a window's histograms to the pool.
func (w *window) release() {
	for _, g := range w.series {
		if g.hist != nil {
			putHist(g.hist)
			g.hist = nil
		}
	}
}
