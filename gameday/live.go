package gameday

import (
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/scenario"
)

// SLO states of an assertion check over the sliding window.
const (
	Green   = "green"
	Amber   = "amber"
	Red     = "red"
	Pending = "pending" // not enough data (or the check cannot be evaluated live)
)

// liveFault is the synthetic fault whose "during" window is the sliding
// window and whose "before" window is the baseline.
const liveFault = "__live__"

// Point is one second of the plots.
type Point struct {
	T   int64   `json:"t"` // seconds since load start
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	// P99W is p99 over the sliding window ending with this second (the
	// SLOs' window), from the merged histograms.
	P99W   float64 `json:"p99w"`
	Rate   float64 `json:"rate"`
	Errors float64 `json:"errors"`
	// Sheds are the targets' refusals in this second by reason, from their
	// /metrics; Ejected is the replicas their smart clients have ejected.
	Sheds   map[string]float64 `json:"sheds,omitempty"`
	Ejected float64            `json:"ejected"`
	// APIs is each API's p99 (ms) this second, by report.Group: the
	// latency plot draws one line per API rather than one mixing them.
	APIs map[string]float64 `json:"apis,omitempty"`
}

// SLO is the live state of one assertion check.
type SLO struct {
	Assertion string  `json:"assertion"`
	Check     string  `json:"check"`
	Metric    string  `json:"metric"`
	State     string  `json:"state"`
	Observed  float64 `json:"observed"`
	Bound     float64 `json:"bound"`
	Unit      string  `json:"unit,omitempty"`
	Note      string  `json:"note,omitempty"`
	Guard     bool    `json:"guard,omitempty"`
}

// live keeps the windows k6 streams and evaluates the scenario's
// assertions over the last Slide of them.
type live struct {
	slide    time.Duration
	baseline int // windows in a full baseline
	warmup   time.Duration

	mu       sync.Mutex
	start    time.Time
	windows  []record.Window // by Start, merged per second
	base     []record.Window
	frozen   bool // no more baseline windows (a fault was applied)
	lastEval []SLO
	kept     map[time.Time]Point // the plots' settled points, by window start
}

func newLive(slide time.Duration) *live {
	return &live{slide: slide, baseline: 10, warmup: 2 * time.Second, kept: map[time.Time]Point{}}
}

// setStart sets load start (the stream's hello).
func (l *live) setStart(t time.Time) {
	l.mu.Lock()
	l.start = t
	l.mu.Unlock()
}

// freeze ends baseline collection: a fault is being applied.
func (l *live) freeze() {
	l.mu.Lock()
	l.frozen = true
	l.mu.Unlock()
}

// add takes one window message (several may share a start).
func (l *live) add(w record.Window) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := sort.Search(len(l.windows), func(i int) bool { return !l.windows[i].Start.Before(w.Start) })
	if i < len(l.windows) && l.windows[i].Start.Equal(w.Start) {
		l.windows[i].Series = append(l.windows[i].Series, w.Series...)
	} else {
		l.windows = append(l.windows, record.Window{})
		copy(l.windows[i+1:], l.windows[i:])
		l.windows[i] = record.Window{Start: w.Start, Series: append([]record.Series(nil), w.Series...)}
	}
	// Keep five minutes for the plots and the sliding window.
	if n := len(l.windows); n > 300 {
		l.windows = append([]record.Window(nil), l.windows[n-300:]...)
	}
}

// updateBaseline moves completed windows into the baseline until it is full
// or frozen. Windows during warm-up are skipped; the newest window may
// still grow, so it waits.
func (l *live) updateBaseline() {
	if l.frozen || len(l.base) >= l.baseline || l.start.IsZero() {
		return
	}
	var last time.Time
	if len(l.base) > 0 {
		last = l.base[len(l.base)-1].Start
	}
	for i, w := range l.windows {
		if i == len(l.windows)-1 || len(l.base) >= l.baseline {
			break
		}
		if w.Start.Before(l.start.Add(l.warmup)) || !w.Start.After(last) {
			continue
		}
		l.base = append(l.base, w)
	}
}

// evaluate checks defs over the sliding window ending with the newest
// complete window. guards names the assertions that are stop conditions.
func (l *live) evaluate(defs []scenario.Assertion, guards map[string]bool) []SLO {
	l.mu.Lock()
	l.updateBaseline()
	run, ok := l.slidingRun()
	l.mu.Unlock()
	var out []SLO
	if !ok {
		for _, d := range defs {
			for _, c := range d.Checks {
				out = append(out, SLO{Assertion: d.Name, Check: c.Threshold, Metric: d.Metric, State: Pending, Note: "waiting for load", Guard: guards[d.Name]})
			}
		}
		return out
	}
	live := make([]scenario.Assertion, len(defs))
	for i, d := range defs {
		d.Window = "during " + liveFault
		d.Baseline = "before " + liveFault
		d.Settle = 0
		live[i] = d
	}
	for _, v := range assertions.Evaluate(run, live) {
		s := SLO{Assertion: v.Assertion, Check: v.Check, Metric: v.Metric, Observed: finite(v.Observed), Bound: finite(v.Bound), Unit: v.Unit, Guard: guards[v.Assertion]}
		s.State, s.Note = state(v)
		out = append(out, s)
	}
	l.mu.Lock()
	l.lastEval = out
	l.mu.Unlock()
	return out
}

// slidingRun builds a run record of the baseline (re-timed to lie just
// before the sliding window) and the sliding window. The newest window may
// still be filling, so the sliding window ends before it.
func (l *live) slidingRun() (*record.Run, bool) {
	if len(l.windows) < 2 {
		return nil, false
	}
	end := l.windows[len(l.windows)-1].Start // exclusive: still filling
	from := end.Add(-l.slide)
	run := &record.Run{End: end}
	n := len(l.base)
	run.Start = from.Add(-time.Duration(n) * time.Second)
	for i, b := range l.base {
		b.Start = run.Start.Add(time.Duration(i) * time.Second)
		run.Windows = append(run.Windows, b)
	}
	for _, w := range l.windows {
		if !w.Start.Before(from) && w.Start.Before(end) {
			run.Windows = append(run.Windows, w)
		}
	}
	run.Faults = []record.FaultEvent{{Fault: liveFault, Action: record.Applied, Actual: from, Scheduled: from}}
	return run, true
}

// state colours a verdict: red when failing, amber within 20% of its bound,
// green otherwise; pending when it cannot be evaluated yet.
func state(v record.Verdict) (string, string) {
	if v.Error != "" {
		msg := v.Error
		if strings.Contains(msg, "before "+liveFault) || strings.Contains(msg, "baseline") {
			msg = "waiting for the baseline: " + msg
		}
		return Pending, strings.ReplaceAll(msg, liveFault, "the sliding window")
	}
	if !v.Pass {
		return Red, ""
	}
	c, err := assertions.ParseCheck(v.Check)
	if err != nil {
		return Green, ""
	}
	near := false
	b, o := v.Bound, v.Observed
	switch c.Op {
	case assertions.OpLT, assertions.OpLE:
		near = o > b-0.2*math.Abs(b)
	case assertions.OpGT, assertions.OpGE:
		near = o < b+0.2*math.Abs(b)
	}
	if near {
		return Amber, ""
	}
	return Green, ""
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// settledWindows is how many of the newest complete windows the plots
// compute anew on each call (late results may still add to them); older
// points are kept.
const settledWindows = 3

// points are the plots' data: one point per complete second, the newest
// n of them; each with p99 over the sliding window ending with it too.
func (l *live) points(n int) []Point {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.windows) < 2 || l.start.IsZero() {
		return nil
	}
	ws := l.windows[:len(l.windows)-1]
	from := max(0, len(ws)-n)
	fresh := max(from, len(ws)-settledWindows)
	first := fresh // first point not kept from an earlier call
	for i := from; i < fresh; i++ {
		if _, ok := l.kept[ws[i].Start]; !ok {
			first = i
			break
		}
	}
	out := make([]Point, 0, len(ws)-from)
	for i := from; i < first; i++ {
		out = append(out, l.kept[ws[i].Start])
	}
	for i, p := range l.computePoints(ws, first) {
		if first+i < fresh {
			l.kept[ws[first+i].Start] = p
		}
		out = append(out, p)
	}
	if len(l.kept) > 2*len(l.windows) {
		l.kept = map[time.Time]Point{}
	}
	return out
}

// computePoints computes the points of ws[from:], each with p99 over the
// sliding window ending with it (the windows before from count there too).
func (l *live) computePoints(ws []record.Window, from int) []Point {
	k := max(1, int(l.slide/time.Second))
	lo := max(0, from-(k-1))
	hs := make([]*hdrhistogram.Histogram, len(ws)-lo)
	out := make([]Point, 0, len(ws)-from)
	acc := record.NewHist()
	for i := lo; i < len(ws); i++ {
		var p Point
		p, hs[i-lo] = point(ws[i], l.start)
		if i < from {
			continue
		}
		acc.Reset()
		for _, h := range hs[max(0, i-lo-(k-1)) : i-lo+1] {
			acc.Merge(h)
		}
		if acc.TotalCount() > 0 {
			p.P99W = float64(acc.ValueAtQuantile(99)) / 1000
		}
		out = append(out, p)
	}
	return out
}

// point is one second's plot values and its merged latency histogram:
// HTTP requests and gRPC calls alike (a gRPC call failed when its status
// is not "0", OK).
func point(w record.Window, start time.Time) (Point, *hdrhistogram.Histogram) {
	p := Point{T: int64(w.Start.Sub(start.Truncate(time.Second)) / time.Second)}
	h := record.NewHist()
	perAPI := map[string]*hdrhistogram.Histogram{}
	var n int64
	for _, s := range w.Series {
		switch s.Metric {
		case "http_req_duration", "grpc_req_duration":
			sh, err := record.DecodeHist(s.Hist)
			if s.Hist == "" || err != nil {
				continue
			}
			h.Merge(sh)
			n += s.Count
			p.Errors += float64(s.GRPCFailures())
			if api := report.Group(s); api != "" {
				if perAPI[api] == nil {
					perAPI[api] = record.NewHist()
				}
				perAPI[api].Merge(sh)
			}
		case "http_req_failed":
			p.Errors += float64(s.NonZero)
		}
	}
	p.Rate = float64(n)
	if n > 0 {
		p.P50 = float64(h.ValueAtQuantile(50)) / 1000
		p.P99 = float64(h.ValueAtQuantile(99)) / 1000
	}
	if len(perAPI) > 1 {
		p.APIs = make(map[string]float64, len(perAPI))
		for api, ah := range perAPI {
			p.APIs[api] = float64(ah.ValueAtQuantile(99)) / 1000
		}
	}
	return p, h
}
