package record

import (
	"errors"
	"fmt"
	"strconv"
)

// Aggregations of a metric over a range.
const (
	AggP     = "p" // a percentile, p(N)
	AggMed   = "med"
	AggAvg   = "avg"
	AggMin   = "min"
	AggMax   = "max"
	AggCount = "count"
	AggRate  = "rate"
	AggSum   = "sum"
	// AggValue is a gauge's last value (k6's "value").
	AggValue = "value"
)

// Agg is an aggregation: a function name and, for p(N), N.
type Agg struct {
	Func string
	// P is the percentile of p(N), 0 ≤ P ≤ 100.
	P float64
}

// String writes the aggregation as a check spells it.
func (a Agg) String() string {
	if a.Func == AggP {
		return "p(" + strconv.FormatFloat(a.P, 'f', -1, 64) + ")"
	}
	return a.Func
}

// Quantile is the percentile the aggregation reads from histograms: N for
// p(N), 50 for med; ok is false for the others.
func (a Agg) Quantile() (q float64, ok bool) {
	switch a.Func {
	case AggP:
		return a.P, true
	case AggMed:
		return 50, true
	}
	return 0, false
}

// AllowedAggs lists the aggregations defined for a kind of metric.
func AllowedAggs(k Kind) string {
	return allowedAggs[k]
}

var allowedAggs = map[Kind]string{
	Trend:   "p(N), med, avg, min, max, count, sum, rate",
	Counter: "count, sum, rate, avg",
	Rate:    "rate, avg, count, sum",
	Gauge:   "value, min, max, count",
}

// Why Acc.Value has no value.
var (
	// ErrNoSamples: no series was added, or none held a sample (a gauge
	// needs only a series).
	ErrNoSamples = errors.New("no samples")
	// ErrNoSeconds: a per-second rate over a range without a whole second.
	ErrNoSeconds = errors.New("no whole second")
	// ErrNoHistogram: a quantile, but no histogram was added.
	ErrNoHistogram = errors.New("no histogram")
)

// NotDefinedError is an aggregation the metric's kind does not define
// (or a kind that is not known).
type NotDefinedError struct {
	Agg  Agg
	Kind Kind
}

func (e *NotDefinedError) Error() string {
	if _, ok := allowedAggs[e.Kind]; !ok {
		return fmt.Sprintf("series of unknown kind %q", e.Kind)
	}
	return fmt.Sprintf("%s is not defined for a %s metric (allowed: %s)", e.Agg, e.Kind, allowedAggs[e.Kind])
}

// MixedKindsError is a series of another kind than those added before.
type MixedKindsError struct{ Have, Got Kind }

func (e *MixedKindsError) Error() string {
	return fmt.Sprintf("series of kinds %s and %s", e.Have, e.Got)
}

// Acc accumulates the series one selector matches over a range (a second,
// a block of seconds, a fault's window) and gives any aggregation of them:
//
//	trend:   p(N), med from the merged histograms, bounded by the exact
//	         min and max; avg = sum/count; min; max; count = samples;
//	         sum; rate = samples per second
//	counter: count = sum = total added; rate = total per second;
//	         avg = total per sample
//	rate:    rate = avg = non-zero/samples; count = samples; sum = non-zero
//	gauge:   value = the last value of the series added last; min,
//	         max, count = samples
//
// The zero Acc is empty and keeps no histograms: set Quantiles to keep
// them, for p(N) and med.
type Acc struct {
	// Quantiles makes Add and Merge keep trend series' histograms.
	Quantiles bool

	kind           Kind
	seen           bool
	count, nonZero int64
	sum            float64
	min, max       float64
	last           float64
	haveMinMax     bool
	hist           HistSum
}

// Add adds a series. A series of another kind than those before is
// refused with a *MixedKindsError. A trend series with samples whose
// histogram is bad or missing gives the histogram's error, its other
// figures added.
func (a *Acc) Add(s Series) error {
	one := Acc{kind: s.Kind, seen: true, count: s.Count, sum: s.Sum, nonZero: s.NonZero, last: s.Last}
	if s.Count > 0 || s.Kind == Gauge {
		one.widen(s.Min, s.Max)
	}
	if err := a.mergeFigures(&one); err != nil {
		return err
	}
	if a.Quantiles && s.Kind == Trend && s.Count > 0 {
		return a.hist.AddEncoded(s.Hist)
	}
	return nil
}

// Merge adds what b accumulated; b is left as it was. Its histograms are
// added when a keeps them.
func (a *Acc) Merge(b *Acc) error {
	if err := a.mergeFigures(b); err != nil {
		return err
	}
	if a.Quantiles && b.seen {
		return a.hist.Merge(&b.hist)
	}
	return nil
}

// mergeFigures adds b's figures, all but its histograms.
func (a *Acc) mergeFigures(b *Acc) error {
	if !b.seen {
		return nil
	}
	if a.seen && b.kind != a.kind {
		return &MixedKindsError{a.kind, b.kind}
	}
	a.seen, a.kind, a.last = true, b.kind, b.last
	a.count += b.count
	a.sum += b.sum
	a.nonZero += b.nonZero
	if b.haveMinMax {
		a.widen(b.min, b.max)
	}
	return nil
}

func (a *Acc) widen(lo, hi float64) {
	if !a.haveMinMax || lo < a.min {
		a.min = lo
	}
	if !a.haveMinMax || hi > a.max {
		a.max = hi
	}
	a.haveMinMax = true
}

// Kind is the kind of the series added; "" before any.
func (a *Acc) Kind() Kind { return a.kind }

// Samples is how many samples the series added hold.
func (a *Acc) Samples() int64 { return a.count }

// NonZero is how many of a rate metric's samples were non-zero.
func (a *Acc) NonZero() int64 { return a.nonZero }

// Value is agg over what was added; per-second rates divide by seconds.
// It fails with ErrNoSamples, ErrNoSeconds, ErrNoHistogram or a
// *NotDefinedError.
func (a *Acc) Value(agg Agg, seconds float64) (float64, error) {
	if !a.seen || (a.count == 0 && a.kind != Gauge) {
		return 0, ErrNoSamples
	}
	perSecond := func(n float64) (float64, error) {
		if seconds == 0 {
			return 0, ErrNoSeconds
		}
		return n / seconds, nil
	}
	count := float64(a.count)
	switch a.kind {
	case Trend:
		switch agg.Func {
		case AggP, AggMed:
			q, _ := agg.Quantile()
			v, ok := a.hist.Quantile(q)
			if !ok {
				return 0, ErrNoHistogram
			}
			// HDR reports the top of a bucket; the exact extremes bound it.
			return min(max(float64(v)/1000, a.min), a.max), nil
		case AggAvg:
			return a.sum / count, nil
		case AggMin:
			return a.min, nil
		case AggMax:
			return a.max, nil
		case AggCount:
			return count, nil
		case AggSum:
			return a.sum, nil
		case AggRate:
			return perSecond(count)
		}
	case Counter:
		switch agg.Func {
		case AggCount, AggSum:
			return a.sum, nil
		case AggRate:
			return perSecond(a.sum)
		case AggAvg:
			return a.sum / count, nil
		}
	case Rate:
		switch agg.Func {
		case AggRate, AggAvg:
			return float64(a.nonZero) / count, nil
		case AggCount:
			return count, nil
		case AggSum:
			return float64(a.nonZero), nil
		}
	case Gauge:
		switch agg.Func {
		case AggValue:
			return a.last, nil
		case AggMin:
			return a.min, nil
		case AggMax:
			return a.max, nil
		case AggCount:
			return count, nil
		}
	}
	return 0, &NotDefinedError{agg, a.kind}
}
