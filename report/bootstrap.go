package report

import (
	"fmt"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
)

// stat names an aggregation over a run's seconds: an assertion's, or
// "okrate" (samples of a rate metric that were zero, per second: goodput
// from http_req_failed).
type stat struct {
	record.Agg
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
	return !s.OKRate && (s.Func == record.AggMax || s.Func == record.AggP && s.P >= 90)
}

// needsHists says the statistic reads histograms.
func (s stat) needsHists() bool {
	_, q := s.Quantile()
	return !s.OKRate && q
}

// cellsIn accumulates, for every one-second window of r that lies wholly
// inside [from, to) (offsets from r.Start), the series matching m: one
// cell per second, empty when the second saw none.
func cellsIn(r *record.Run, m assertions.Metric, from, to time.Duration, st stat) ([]record.Acc, error) {
	rng := assertions.Range{From: r.Start.Add(from), To: r.Start.Add(to)}
	var (
		out  []record.Acc
		kind record.Kind
	)
	err := r.EachWindow(func(w record.Window) error {
		if !rng.Contains(w.Start) {
			return nil
		}
		c := record.Acc{Quantiles: st.needsHists()}
		for _, s := range w.Series {
			if !m.Matches(s) {
				continue
			}
			if kind != "" && s.Kind != kind {
				return fmt.Errorf("%s matches %w", m, &record.MixedKindsError{Have: kind, Got: s.Kind})
			}
			kind = s.Kind
			if err := c.Add(s); err != nil {
				return fmt.Errorf("%s at %s: %w", m, w.Start.Format("15:04:05"), err)
			}
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// aggregate computes st over cells, as assertions.Evaluate does over a
// window, but rates per second divide by the number of cells (seconds).
// ok is false when there is nothing to aggregate.
func aggregate(cells []record.Acc, st stat) (v float64, ok bool) {
	acc := record.Acc{Quantiles: st.needsHists()}
	for i := range cells {
		if err := acc.Merge(&cells[i]); err != nil {
			return 0, false
		}
	}
	secs := float64(len(cells))
	switch {
	case st.OKRate && secs == 0:
		return 0, false
	case st.OKRate:
		return float64(acc.Samples()-acc.NonZero()) / secs, true
	}
	v, err := acc.Value(st.Agg, secs)
	return v, err == nil
}

// blockValues splits a run's cells into blocks of n consecutive seconds
// (the last, shorter block is dropped unless it is the only one) and computes
// the statistic of each block; blocks without samples are left out.
func blockValues(cells []record.Acc, st stat, n int) []float64 {
	var out []float64
	for i := 0; i < len(cells); i += n {
		j := i + n
		if j > len(cells) {
			if i > 0 {
				break
			}
			j = len(cells)
		}
		if v, ok := aggregate(cells[i:j], st); ok {
			out = append(out, v)
		}
	}
	return out
}
