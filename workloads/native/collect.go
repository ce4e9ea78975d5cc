package native

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/record"
)

// The metrics the engine writes, with k6's names and kinds.
const (
	mReqs = iota
	mDuration
	mFailed
	mChecks
	mIterations
	mDropped
	mResRequests
	mResAttempts
	mResRetries
	mResBackpressure
	mResGiveups
	mResRejections
	mResAmplification
	mResGoodput
	mGRPCDuration
	mCustom // custom metric i is mCustom+i
)

var builtin = [mCustom]struct {
	name string
	kind record.Kind
}{
	mReqs:             {"http_reqs", record.Counter},
	mDuration:         {"http_req_duration", record.Trend},
	mFailed:           {"http_req_failed", record.Rate},
	mChecks:           {"checks", record.Rate},
	mIterations:       {"iterations", record.Counter},
	mDropped:          {"dropped_iterations", record.Counter},
	mResRequests:      {client.MetricRequests, record.Counter},
	mResAttempts:      {client.MetricAttempts, record.Counter},
	mResRetries:       {client.MetricRetries, record.Counter},
	mResBackpressure:  {client.MetricBackpressure, record.Counter},
	mResGiveups:       {client.MetricGiveups, record.Counter},
	mResRejections:    {client.MetricRejections, record.Counter},
	mResAmplification: {client.MetricAmplification, record.Trend},
	mResGoodput:       {client.MetricGoodput, record.Rate},
	mGRPCDuration:     {"grpc_req_duration", record.Trend},
}

// MetricNames are the metrics the engine emits for every stream (a
// stream's own metrics: aside).
func MetricNames() []string {
	out := make([]string, len(builtin))
	for i, b := range builtin {
		out[i] = b.name
	}
	return out
}

// maxSeriesPerWindow caps one second's series, as the k6 output does.
const maxSeriesPerWindow = 10000

// skey identifies a series: metric, stream, tag variant and (HTTP
// metrics) status.
type skey struct {
	metric  uint8
	stream  uint16
	variant uint16
	status  uint16
}

// agg is one series over one window.
type agg struct {
	count    int64
	sum      float64
	min, max float64
	nonzero  int64
	hist     *hdrhistogram.Histogram
}

type window struct {
	sec    int64
	series map[skey]*agg
}

// collector folds the workers' events into one-second windows and writes
// the windows that are complete. It runs on one goroutine.
type collector struct {
	lanes   []*lane
	out     Output
	windows map[int64]*window
	tags    map[skey]map[string]string
	free    []*hdrhistogram.Histogram
	spare   []event
	// lost counts samples not aggregated (series cap) or not written.
	lost     int64
	writeErr error
	tap      func(stream string, status int, d time.Duration)
}

func newCollector(lanes []*lane, out Output) *collector {
	return &collector{lanes: lanes, out: out, windows: map[int64]*window{}, tags: map[skey]map[string]string{}}
}

// gather takes every recorder's events and folds them in.
func (c *collector) gather(recs []*recorder) {
	for _, r := range recs {
		evs := r.take(c.spare)
		for i := range evs {
			c.fold(&evs[i])
		}
		c.spare = evs
	}
}

func (c *collector) fold(e *event) {
	sec := e.t / int64(time.Second)
	w := c.windows[sec]
	if w == nil {
		w = &window{sec: sec, series: map[skey]*agg{}}
		c.windows[sec] = w
	}
	st := c.lanes[e.stream]
	k := skey{stream: e.stream, variant: e.variant}
	switch e.kind {
	case evAttempt:
		ms := float64(e.dur) / 1e6
		hk := k
		hk.status = e.status
		if st.grpc != nil {
			c.add(w, hk, mGRPCDuration, ms)
			if c.tap != nil {
				c.tap(st.Name, int(e.status), time.Duration(e.dur))
			}
			return
		}
		c.add(w, hk, mReqs, 1)
		c.add(w, hk, mDuration, ms)
		c.add(w, hk, mFailed, b2f(e.status < 200 || e.status > 399))
		if c.tap != nil {
			c.tap(st.Name, int(e.status), time.Duration(e.dur))
		}
	case evDrop:
		c.add(w, k, mDropped, 1)
	case evRequest:
		c.add(w, k, mIterations, 1)
		if len(st.Expect) > 0 {
			c.add(w, k, mChecks, b2f(e.flags&flCheck != 0))
		}
		for i := range st.Metrics {
			c.add(w, k, mCustom+i, b2f(e.marks&(1<<i) != 0))
		}
		if st.Client != nil {
			c.foldClient(w, k, e)
		}
	}
}

// foldClient adds a logical request's resilience_* samples; counters that
// stay zero are left out, as the extension does.
func (c *collector) foldClient(w *window, k skey, e *event) {
	c.add(w, k, mResRequests, 1)
	c.add(w, k, mResAttempts, float64(e.attempts))
	c.add(w, k, mResAmplification, float64(e.attempts))
	c.add(w, k, mResGoodput, b2f(e.flags&flGoodput != 0))
	if e.retries > 0 {
		c.add(w, k, mResRetries, float64(e.retries))
	}
	if e.bp > 0 {
		c.add(w, k, mResBackpressure, float64(e.bp))
	}
	if e.flags&flGaveUp != 0 {
		c.add(w, k, mResGiveups, 1)
	}
	if e.flags&flRejected != 0 {
		c.add(w, k, mResRejections, 1)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// add folds one sample of metric into series k of w.
func (c *collector) add(w *window, k skey, metric int, v float64) {
	k.metric = uint8(metric)
	g := w.series[k]
	if g == nil {
		if len(w.series) >= maxSeriesPerWindow {
			c.lost++
			return
		}
		g = &agg{min: v, max: v}
		if c.kind(k) == record.Trend {
			g.hist = c.hist()
		}
		w.series[k] = g
	}
	g.count++
	g.min, g.max = min(g.min, v), max(g.max, v)
	switch c.kind(k) {
	case record.Trend:
		g.sum += v
		_ = g.hist.RecordValue(toMicro(v))
	case record.Counter:
		g.sum += v
	case record.Rate:
		if v != 0 {
			g.nonzero++
		}
	}
}

// kind is the kind of series k.
func (c *collector) kind(k skey) record.Kind {
	if int(k.metric) < mCustom {
		return builtin[k.metric].kind
	}
	if c.lanes[k.stream].Metrics[int(k.metric)-mCustom].Kind == "rate" {
		return record.Rate
	}
	return record.Counter
}

// toMicro converts a value to the histogram's microunits, within its range.
func toMicro(v float64) int64 {
	m := math.Round(v * 1000)
	switch {
	case m < 0:
		return 0
	case m > record.HistHighest:
		return record.HistHighest
	}
	return int64(m)
}

func (c *collector) hist() *hdrhistogram.Histogram {
	if n := len(c.free); n > 0 {
		h := c.free[n-1]
		c.free = c.free[:n-1]
		return h
	}
	return record.NewHist()
}

// flush writes, oldest first, the windows that ended at or before cut
// (every window when cut is 0).
func (c *collector) flush(cut int64) {
	var secs []int64
	for s := range c.windows {
		if cut == 0 || (s+1)*int64(time.Second) <= cut {
			secs = append(secs, s)
		}
	}
	slices.Sort(secs)
	for _, s := range secs {
		w := c.windows[s]
		delete(c.windows, s)
		rw, samples, err := c.encode(w)
		if err == nil && c.writeErr == nil {
			err = c.out.Window(rw)
			if err != nil {
				c.writeErr = err
			}
		}
		if err != nil || c.writeErr != nil {
			c.lost += samples
		}
	}
}

// encode turns a window into a record window, its series sorted by metric
// and tags, and frees its histograms.
func (c *collector) encode(w *window) (record.Window, int64, error) {
	out := record.Window{Start: time.Unix(w.sec, 0).UTC(), Series: make([]record.Series, 0, len(w.series))}
	var samples int64
	var err error
	for k, g := range w.series {
		s := record.Series{Metric: c.name(k), Kind: c.kind(k), Tags: c.tagsOf(k), Count: g.count}
		samples += g.count
		switch s.Kind {
		case record.Trend:
			s.Sum, s.Min, s.Max = g.sum, g.min, g.max
			var e error
			if s.Hist, e = record.EncodeHist(g.hist); e != nil && err == nil {
				err = fmt.Errorf("window %d: %s: %w", w.sec, s.Metric, e)
			}
			g.hist.Reset()
			c.free = append(c.free, g.hist)
		case record.Counter:
			s.Sum = g.sum
		case record.Rate:
			s.NonZero = g.nonzero
		}
		out.Series = append(out.Series, s)
	}
	slices.SortFunc(out.Series, func(a, b record.Series) int {
		return cmp.Or(cmp.Compare(a.Metric, b.Metric), cmp.Compare(tagString(a.Tags), tagString(b.Tags)))
	})
	return out, samples, err
}

func tagString(t map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(t)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(t[k])
		b.WriteByte(0)
	}
	return b.String()
}

func (c *collector) name(k skey) string {
	if int(k.metric) < mCustom {
		return builtin[k.metric].name
	}
	return c.lanes[k.stream].Metrics[int(k.metric)-mCustom].Name
}

// tagsOf returns series k's tags (shared: do not change them): the
// stream's, the scenario tag, and for HTTP metrics method, name, status
// and expected_response, for grpc_req_duration method, name and status,
// for resilience_* the model.
func (c *collector) tagsOf(k skey) map[string]string {
	if t, ok := c.tags[k]; ok {
		return t
	}
	st := c.lanes[k.stream]
	t := st.tagsFor(k.variant)
	switch {
	case k.metric == mReqs || k.metric == mDuration || k.metric == mFailed:
		t["method"] = st.Method
		t["status"] = strconv.Itoa(int(k.status))
		t["expected_response"] = strconv.FormatBool(k.status >= 200 && k.status <= 399)
		if _, ok := t["name"]; !ok {
			t["name"] = st.Path
		}
	case k.metric == mGRPCDuration:
		// k6's k6/net/grpc tags: the method's own name as method, the full
		// method as name, the code's number as status.
		t["method"] = st.grpc.method
		t["status"] = strconv.Itoa(int(k.status))
		if _, ok := t["name"]; !ok {
			t["name"] = st.grpc.full
		}
	case k.metric >= mResRequests && k.metric <= mResGoodput:
		t["model"] = st.Client.Model
	}
	c.tags[k] = t
	return t
}
