package metrics

import (
	"math"
	"sort"
	"strings"
	"time"
)

// StaleNaN is Prometheus' staleness marker: a sample with this value ends a
// series, so that a query does not carry its last value forward for the
// lookback period (5 minutes by default).
var StaleNaN = math.Float64frombits(0x7ff0000000000002)

// IsStale reports whether v is the staleness marker.
func IsStale(v float64) bool { return math.Float64bits(v) == 0x7ff0000000000002 }

// Kind is what a series' values mean to a monitoring system.
type Kind int

// Series kinds.
const (
	// Gauge values stand alone (a quantile, a per-second rate, a verdict).
	Gauge Kind = iota
	// Counter values only grow from the run's start (OTLP: a cumulative sum).
	Counter
)

// Label is one name=value pair of a series.
type Label struct{ Name, Value string }

// Point is one value at an instant.
type Point struct {
	T time.Time
	V float64
}

// Series is one exported time series: a name, its labels in name order and
// its points in time order. A point whose value IsStale ends the series.
type Series struct {
	Name   string
	Labels []Label
	Kind   Kind
	// Unit is the OTLP unit ("s", "1") or empty.
	Unit   string
	Points []Point
}

// Label returns the value of the label name, or "".
func (s *Series) Label(name string) string {
	for _, l := range s.Labels {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// gap is what a series holds for a window it was not observed in.
type gap int

const (
	gapNone  gap = iota // nothing (verdicts, faults, scrapes)
	gapStale            // one staleness marker, then nothing
	gapZero             // 0: nothing happened (counts per second)
	gapCarry            // the last value (cumulative counters)
)

// builder collects series by identity and fills the windows a series
// missed as its gap says.
type builder struct {
	base   []Label
	series map[string]*entry
	order  []*entry
}

type entry struct {
	Series
	gap  gap
	seen bool // observed in the current window
}

func newBuilder(base []Label) *builder {
	return &builder{base: base, series: map[string]*entry{}}
}

// add appends a point to the series (name, base labels + labels); labels
// need not be sorted.
func (b *builder) add(name string, labels []Label, kind Kind, unit string, g gap, t time.Time, v float64) {
	all := make([]Label, 0, len(b.base)+len(labels))
	all = append(append(all, b.base...), labels...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	key := seriesKey(name, all)
	e := b.series[key]
	if e == nil {
		e = &entry{Series: Series{Name: name, Labels: all, Kind: kind, Unit: unit}, gap: g}
		b.series[key] = e
		b.order = append(b.order, e)
	}
	e.Points = append(e.Points, Point{t, v})
	e.seen = true
}

func seriesKey(name string, labels []Label) string {
	var sb strings.Builder
	sb.WriteString(name)
	for _, l := range labels {
		sb.WriteByte(0)
		sb.WriteString(l.Name)
		sb.WriteByte(1)
		sb.WriteString(l.Value)
	}
	return sb.String()
}

// endWindow fills every windowed series not observed since the last call
// at t, as its gap says.
func (b *builder) endWindow(t time.Time) {
	for _, e := range b.order {
		if e.seen || e.gap == gapNone || len(e.Points) == 0 {
			e.seen = false
			continue
		}
		last := e.Points[len(e.Points)-1].V
		switch e.gap {
		case gapStale:
			if !IsStale(last) {
				e.Points = append(e.Points, Point{t, StaleNaN})
			}
		case gapZero:
			e.Points = append(e.Points, Point{t, 0})
		case gapCarry:
			e.Points = append(e.Points, Point{t, last})
		}
	}
}

// finish ends every series that may be carried forward (all but verdicts)
// at end, sorts points by time, keeps one point per millisecond (the
// last: Prometheus stores milliseconds) and returns the series in name
// and label order.
func (b *builder) finish(end time.Time, keep func(*Series) bool) []Series {
	out := make([]Series, 0, len(b.order))
	for _, e := range b.order {
		s := e.Series
		sort.SliceStable(s.Points, func(i, j int) bool { return s.Points[i].T.Before(s.Points[j].T) })
		s.Points = dedupMillis(s.Points)
		if keep(&s) && len(s.Points) > 0 && !IsStale(s.Points[len(s.Points)-1].V) && end.After(s.Points[len(s.Points)-1].T) {
			s.Points = append(s.Points, Point{end, StaleNaN})
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		return seriesKey(out[i].Name, out[i].Labels) < seriesKey(out[j].Name, out[j].Labels)
	})
	return out
}

// dedupMillis keeps the last of the points that share a millisecond.
func dedupMillis(ps []Point) []Point {
	out := ps[:0]
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].T.UnixMilli() == p.T.UnixMilli() {
			out[n-1] = p
			continue
		}
		out = append(out, p)
	}
	return out
}
