package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// bar is one bucket of a histogram: Count values at most Value
// (microunits, the bucket's highest equivalent value).
type bar struct {
	Value int64
	Count int64
}

// cell is what one selector saw in one one-second window.
type cell struct {
	Kind           record.Kind
	Count, NonZero int64
	Sum, Min, Max  float64
	HaveMinMax     bool
	Bars           []bar
}

// stat names an aggregation over cells: an assertion aggregation, or
// "okrate" (samples of a rate metric that were zero, per second: goodput
// from http_req_failed).
type stat struct {
	assertions.Agg
	OKRate bool
}

func (s stat) String() string {
	if s.OKRate {
		return "ok/s"
	}
	return s.Agg.String()
}

// isTail says the statistic reads a distribution's tail.
func (s stat) isTail() bool {
	return !s.OKRate && (s.Func == assertions.AggMax || s.Func == assertions.AggP && s.P >= 90)
}

// barCache keeps decoded histograms: a comparison reads each one for
// several figures.
type barCache map[string][]bar

// bars decodes an encoded histogram into its non-empty buckets.
func (bc barCache) bars(hist string) ([]bar, error) {
	if b, ok := bc[hist]; ok {
		return b, nil
	}
	h, err := stream.DecodeHist(hist)
	if err != nil {
		return nil, err
	}
	var out []bar
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, bar{b.To, b.Count})
		}
	}
	if bc != nil {
		bc[hist] = out
	}
	return out, nil
}

// cellsIn collects, for every one-second window of r that lies wholly inside
// [from, to) (offsets from r.Start), the series matching m; bc may be nil.
func cellsIn(r *record.Run, m assertions.Metric, from, to time.Duration, needBars bool, bc barCache) ([]cell, error) {
	rng := assertions.Range{From: r.Start.Add(from), To: r.Start.Add(to)}
	var out []cell
	err := r.EachWindow(func(w record.Window) error {
		if !rng.Contains(w.Start) {
			return nil
		}
		var c cell
		seen := false
		for _, s := range w.Series {
			if !m.Matches(s) {
				continue
			}
			if seen && s.Kind != c.Kind {
				return fmt.Errorf("%s matches series of kinds %s and %s", m, c.Kind, s.Kind)
			}
			seen, c.Kind = true, s.Kind
			c.Count += s.Count
			c.NonZero += s.NonZero
			c.Sum += s.Sum
			if s.Count > 0 || s.Kind == record.Gauge {
				if !c.HaveMinMax || s.Min < c.Min {
					c.Min = s.Min
				}
				if !c.HaveMinMax || s.Max > c.Max {
					c.Max = s.Max
				}
				c.HaveMinMax = true
			}
			if needBars && s.Kind == record.Trend && s.Count > 0 && s.Hist != "" {
				bs, err := bc.bars(s.Hist)
				if err != nil {
					return fmt.Errorf("%s at %s: %w", m, w.Start.Format("15:04:05"), err)
				}
				c.Bars = append(c.Bars, bs...)
			}
		}
		// A second without a matching series still counts: it saw nothing.
		out = append(out, c)
		return nil
	})
	return out, err
}

// aggregate computes st over cells, as assertions.Evaluate does over a
// window: rates per second divide by the number of cells (seconds). ok is
// false when there is nothing to aggregate.
func aggregate(cells []cell, st stat, scratch *[]bar) (v float64, ok bool) {
	var (
		kind           record.Kind
		count, nonZero int64
		sum, mn, mx    float64
		haveMM         bool
	)
	bars := (*scratch)[:0]
	for i := range cells {
		c := &cells[i]
		if c.Kind != "" {
			kind = c.Kind
		}
		count += c.Count
		nonZero += c.NonZero
		sum += c.Sum
		if c.HaveMinMax {
			if !haveMM || c.Min < mn {
				mn = c.Min
			}
			if !haveMM || c.Max > mx {
				mx = c.Max
			}
			haveMM = true
		}
		if st.Func == assertions.AggP || st.Func == assertions.AggMed {
			bars = append(bars, c.Bars...)
		}
	}
	*scratch = bars
	secs := float64(len(cells))
	if kind == "" || secs == 0 || (count == 0 && kind != record.Gauge) {
		if st.OKRate && secs > 0 {
			return 0, true
		}
		return 0, false
	}
	if st.OKRate {
		return float64(count-nonZero) / secs, true
	}
	switch kind {
	case record.Trend:
		switch st.Func {
		case assertions.AggP, assertions.AggMed:
			q := st.P
			if st.Func == assertions.AggMed {
				q = 50
			}
			return min(max(quantile(bars, q)/1000, mn), mx), true
		case assertions.AggAvg:
			return sum / float64(count), true
		case assertions.AggMin:
			return mn, true
		case assertions.AggMax:
			return mx, true
		case assertions.AggCount:
			return float64(count), true
		case assertions.AggSum:
			return sum, true
		case assertions.AggRate:
			return float64(count) / secs, true
		}
	case record.Counter:
		switch st.Func {
		case assertions.AggCount, assertions.AggSum:
			return sum, true
		case assertions.AggRate:
			return sum / secs, true
		case assertions.AggAvg:
			return sum / float64(count), true
		}
	case record.Rate:
		switch st.Func {
		case assertions.AggRate, assertions.AggAvg:
			return float64(nonZero) / float64(count), true
		case assertions.AggCount:
			return float64(count), true
		case assertions.AggSum:
			return float64(nonZero), true
		}
	case record.Gauge:
		switch st.Func {
		case assertions.AggMin:
			return mn, true
		case assertions.AggMax:
			return mx, true
		case assertions.AggCount:
			return float64(count), true
		}
	}
	return 0, false
}

// quantile is the HDR value at percentile q of the merged bars, the way
// hdrhistogram's ValueAtQuantile picks it.
func quantile(bars []bar, q float64) float64 {
	if len(bars) == 0 {
		return 0
	}
	sort.Slice(bars, func(i, j int) bool { return bars[i].Value < bars[j].Value })
	var total int64
	for _, b := range bars {
		total += b.Count
	}
	want := int64(q/100*float64(total) + 0.5)
	if want < 1 {
		// hdrhistogram answers the value of index 0 here: zero.
		return 0
	}
	var acc int64
	for _, b := range bars {
		acc += b.Count
		if acc >= want {
			return float64(b.Value)
		}
	}
	return float64(bars[len(bars)-1].Value)
}

// blockValues splits a run's cells into blocks of n consecutive seconds
// (the last, shorter block is dropped unless it is the only one) and computes
// the statistic of each block; blocks without samples are left out.
func blockValues(cells []cell, st stat, n int) []float64 {
	var out []float64
	var scratch []bar
	for i := 0; i < len(cells); i += n {
		j := i + n
		if j > len(cells) {
			if i > 0 {
				break
			}
			j = len(cells)
		}
		if v, ok := aggregate(cells[i:j], st, &scratch); ok {
			out = append(out, v)
		}
	}
	return out
}

// side is one side of a comparison: the block values of each run.
type side [][]float64

// blocks counts the side's block values.
func (s side) blocks() int {
	n := 0
	for _, run := range s {
		n += len(run)
	}
	return n
}

// median of every block value of every run of the side.
func (s side) median() float64 {
	var all []float64
	for _, run := range s {
		all = append(all, run...)
	}
	return median(all)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// resample draws a bootstrap replicate: runs with replacement, then each
// drawn run's blocks with replacement (a hierarchical block bootstrap; with
// one run per side it is a bootstrap over the blocks of that run).
func (s side) resample(rng *rand.Rand, buf []float64) []float64 {
	buf = buf[:0]
	for range s {
		run := s[rng.IntN(len(s))]
		for range run {
			buf = append(buf, run[rng.IntN(len(run))])
		}
	}
	return buf
}

// interval bounds the change of the median block value, head−base: the
// replicates' quantiles at 1−conf and conf.
func interval(base, head side, iters int, conf float64, rng *rand.Rand) (lo, hi float64) {
	deltas := make([]float64, 0, iters)
	var bb, hb []float64
	for range iters {
		bb = base.resample(rng, bb)
		hb = head.resample(rng, hb)
		deltas = append(deltas, median(hb)-median(bb))
	}
	sort.Float64s(deltas)
	at := func(p float64) float64 {
		i := int(math.Floor(p * float64(len(deltas)-1)))
		return deltas[min(max(i, 0), len(deltas)-1)]
	}
	return at(1 - conf), at(conf)
}
