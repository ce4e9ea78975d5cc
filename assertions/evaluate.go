package assertions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// Evaluate checks every assertion against the run record and returns one
// verdict per check, in order. A check that cannot be evaluated (malformed,
// a fault never applied, no samples) fails with Error set; it never passes
// silently.
//
// Aggregations over the series matching the selector in the windows of the
// range (see Resolve and Range.Contains):
//
//	trend:   p(N), med from the merged histograms; avg = sum/count; min;
//	         max; count = samples; sum; rate = samples per second
//	counter: count = sum = total added; rate = total per second;
//	         avg = total per sample
//	rate:    rate = avg = non-zero/samples; count = samples; sum = non-zero
//	gauge:   value = the last value of the latest second; min, max,
//	         count = samples
//
// A check with baseline compares with K × (the same aggregation over the
// assertion's Baseline window, without settle) + X; an empty Baseline means
// "before" the first fault applied.
func Evaluate(run *record.Run, defs []scenario.Assertion) []record.Verdict {
	var out []record.Verdict
	for _, def := range defs {
		if len(def.Checks) == 0 {
			out = append(out, record.Verdict{Assertion: def.Name, Metric: def.Metric, Window: def.Window,
				Error: "assertion has no checks"})
			continue
		}
		for _, chk := range def.Checks {
			out = append(out, evalCheck(run, def, chk.Threshold))
		}
	}
	return out
}

func evalCheck(run *record.Run, def scenario.Assertion, src string) record.Verdict {
	v := record.Verdict{Assertion: def.Name, Check: src, Metric: def.Metric, Window: def.Window}
	if v.Window == "" {
		v.Window = Whole
	}
	fail := func(format string, args ...any) record.Verdict {
		v.Pass = false
		v.Error = fmt.Sprintf(format, args...)
		return v
	}
	c, err := ParseCheck(src)
	if err != nil {
		return fail("check %q: %v", src, err)
	}
	m, err := ParseMetric(def.Metric)
	if err != nil {
		return fail("metric %q: %v", def.Metric, err)
	}
	w, err := ParseWindow(def.Window)
	if err != nil {
		return fail("window %q: %v", def.Window, err)
	}
	rng, err := Resolve(run, w, def.Settle.Std())
	if err != nil {
		return fail("%v", err)
	}
	v.Window = rng.Desc
	v.From, v.To = record.Duration(run.Offset(rng.From)), record.Duration(run.Offset(rng.To))
	res, err := aggregate(run, m, rng, c.Agg)
	v.Samples = res.samples
	if err != nil {
		return fail("%v", err)
	}
	v.Observed = res.value
	if c.Duration || (res.kind == record.Trend && isTimeMetric(m.Name) && c.Agg.Func != AggCount && c.Agg.Func != AggRate) {
		v.Unit = "ms"
	}
	baseline := 0.0
	if c.Baseline {
		bw, err := ParseWindow(def.Baseline)
		if err != nil {
			return fail("baseline window %q: %v", def.Baseline, err)
		}
		if def.Baseline == "" {
			bw = Window{Kind: Before}
		}
		brng, err := Resolve(run, bw, 0)
		if err != nil {
			return fail("baseline: %v", err)
		}
		bres, err := aggregate(run, m, brng, c.Agg)
		if err != nil {
			return fail("baseline: %v", err)
		}
		baseline = bres.value
	}
	v.Bound = c.Bound(baseline)
	v.Pass = c.Op.Holds(v.Observed, v.Bound)
	return v
}

// isTimeMetric says a trend's values are durations in ms (k6's built-in
// timings and any metric named *_duration).
func isTimeMetric(name string) bool {
	if strings.HasSuffix(name, "_duration") {
		return true
	}
	switch name {
	case "http_req_blocked", "http_req_connecting", "http_req_tls_handshaking",
		"http_req_sending", "http_req_waiting", "http_req_receiving":
		return true
	}
	return false
}

// result is an aggregate over a range.
type result struct {
	value   float64
	samples int64
	kind    record.Kind
}

// aggregate applies agg to what m selects in rng: k6 series, /metrics
// readings or end-of-run checks.
func aggregate(run *record.Run, m Metric, rng Range, agg Agg) (result, error) {
	switch {
	case m.Source == "scrape":
		return aggregateScrapes(run, m, rng, agg)
	case m.Name == EndCheckMetric:
		return aggregateEndChecks(run, m, agg)
	}
	return aggregateWindows(run, m, rng, agg)
}

// aggregateWindows applies agg to the series matching m in the windows of rng.
func aggregateWindows(run *record.Run, m Metric, rng Range, agg Agg) (result, error) {
	var (
		kind           record.Kind
		count, nonZero int64
		sum            float64
		minV, maxV     float64
		last           float64
		seen, haveMM   bool
		hists          stream.HistSum
		histErr        error
	)
	werr := run.EachWindow(func(w record.Window) error {
		if !rng.Contains(w.Start) {
			return nil
		}
		for _, s := range w.Series {
			if !m.Matches(s) {
				continue
			}
			if seen && s.Kind != kind {
				return fmt.Errorf("%s matches series of kinds %s and %s; narrow the tag filter", m, kind, s.Kind)
			}
			seen, kind = true, s.Kind
			last = s.Last
			count += s.Count
			sum += s.Sum
			nonZero += s.NonZero
			if s.Count > 0 || s.Kind == record.Gauge {
				if !haveMM || s.Min < minV {
					minV = s.Min
				}
				if !haveMM || s.Max > maxV {
					maxV = s.Max
				}
				haveMM = true
			}
			if s.Kind == record.Trend && s.Count > 0 && (agg.Func == AggP || agg.Func == AggMed) {
				if err := hists.AddEncoded(s.Hist); err != nil {
					histErr = errors.Join(histErr, fmt.Errorf("%s at %s: %w", m, w.Start.Format("15:04:05"), err))
				}
			}
		}
		return nil
	})
	if werr != nil {
		return result{}, werr
	}
	res := result{samples: count, kind: kind}
	if !seen || (count == 0 && kind != record.Gauge) {
		return res, fmt.Errorf("no samples of %s in %s", m, rng.Desc)
	}
	if histErr != nil {
		return res, histErr
	}
	notFor := func() error {
		return fmt.Errorf("%s is not defined for %s, a %s metric (allowed: %s)", agg, m.Name, kind, allowedAggs[kind])
	}
	secs := float64(rng.Seconds())
	perSecond := func(n float64) (float64, error) {
		if secs == 0 {
			return 0, fmt.Errorf("rate of %s: %s holds no whole second", m, rng.Desc)
		}
		return n / secs, nil
	}
	var err error
	switch kind {
	case record.Trend:
		switch agg.Func {
		case AggP, AggMed:
			q := agg.P
			if agg.Func == AggMed {
				q = 50
			}
			merged := hists.Histogram()
			if merged == nil {
				return res, fmt.Errorf("%s: no histogram in %s", m, rng.Desc)
			}
			// HDR reports the top of a bucket; the exact extremes bound it.
			res.value = min(max(float64(merged.ValueAtQuantile(q))/1000, minV), maxV)
		case AggAvg:
			res.value = sum / float64(count)
		case AggMin:
			res.value = minV
		case AggMax:
			res.value = maxV
		case AggCount:
			res.value = float64(count)
		case AggSum:
			res.value = sum
		case AggRate:
			res.value, err = perSecond(float64(count))
		}
	case record.Counter:
		switch agg.Func {
		case AggCount, AggSum:
			res.value = sum
		case AggRate:
			res.value, err = perSecond(sum)
		case AggAvg:
			res.value = sum / float64(count)
		default:
			return res, notFor()
		}
	case record.Rate:
		switch agg.Func {
		case AggRate, AggAvg:
			res.value = float64(nonZero) / float64(count)
		case AggCount:
			res.value = float64(count)
		case AggSum:
			res.value = float64(nonZero)
		default:
			return res, notFor()
		}
	case record.Gauge:
		switch agg.Func {
		case AggValue:
			res.value = last
		case AggMin:
			res.value = minV
		case AggMax:
			res.value = maxV
		case AggCount:
			res.value = float64(count)
		default:
			return res, notFor()
		}
	default:
		return res, fmt.Errorf("%s has series of unknown kind %q", m, kind)
	}
	return res, err
}

var allowedAggs = map[record.Kind]string{
	record.Trend:   "p(N), med, avg, min, max, count, sum, rate",
	record.Counter: "count, sum, rate, avg",
	record.Rate:    "rate, avg, count, sum",
	record.Gauge:   "value, min, max, count",
}
