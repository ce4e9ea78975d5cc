package assertions

import (
	"errors"
	"fmt"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// Evaluate checks every assertion against the run record and returns one
// verdict per check, in order. A check that cannot be evaluated (malformed,
// a fault never applied, no samples) fails with Error set; it never passes
// silently.
//
// Aggregations over the series matching the selector in the windows of the
// range (see Resolve and Range.Contains) are record.Acc's; per-second rates
// divide by the range's whole seconds (Range.Seconds).
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
	if c.Duration || (res.kind == record.Trend && record.IsTimeMetric(m.Name) && c.Agg.Func != record.AggCount && c.Agg.Func != record.AggRate) {
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

// result is an aggregate over a range.
type result struct {
	value   float64
	samples int64
	kind    record.Kind
}

// aggregate applies agg to what m selects in rng: k6 series, /metrics
// readings or end-of-run checks.
func aggregate(run *record.Run, m Metric, rng Range, agg record.Agg) (result, error) {
	switch {
	case m.Source == "scrape":
		return aggregateScrapes(run, m, rng, agg)
	case m.Name == EndCheckMetric:
		return aggregateEndChecks(run, m, agg)
	case m.Name == RecoveryMetric:
		return aggregateRecoveries(run, m, agg)
	}
	return aggregateWindows(run, m, rng, agg)
}

// aggregateWindows applies agg to the series matching m in the windows of rng.
func aggregateWindows(run *record.Run, m Metric, rng Range, agg record.Agg) (result, error) {
	_, quantile := agg.Quantile()
	acc := record.Acc{Quantiles: quantile}
	var histErr error
	werr := run.EachWindow(func(w record.Window) error {
		if !rng.Contains(w.Start) {
			return nil
		}
		for _, s := range w.Series {
			if !m.Matches(s) {
				continue
			}
			if err := acc.Add(s); err != nil {
				var mixed *record.MixedKindsError
				if errors.As(err, &mixed) {
					return fmt.Errorf("%s matches %w; narrow the tag filter", m, err)
				}
				histErr = errors.Join(histErr, fmt.Errorf("%s at %s: %w", m, w.Start.Format("15:04:05"), err))
			}
		}
		return nil
	})
	if werr != nil {
		return result{}, werr
	}
	res := result{samples: acc.Samples(), kind: acc.Kind()}
	v, err := acc.Value(agg, float64(rng.Seconds()))
	var undefined *record.NotDefinedError
	switch {
	case errors.Is(err, record.ErrNoSamples):
		return res, fmt.Errorf("no samples of %s in %s", m, rng.Desc)
	case histErr != nil:
		return res, histErr
	case errors.Is(err, record.ErrNoSeconds):
		return res, fmt.Errorf("rate of %s: %s holds no whole second", m, rng.Desc)
	case errors.Is(err, record.ErrNoHistogram):
		return res, fmt.Errorf("%s: no histogram in %s", m, rng.Desc)
	case errors.As(err, &undefined) && record.AllowedAggs(undefined.Kind) == "":
		return res, fmt.Errorf("%s has series of unknown kind %q", m, undefined.Kind)
	case errors.As(err, &undefined):
		return res, fmt.Errorf("%s is not defined for %s, a %s metric (allowed: %s)", agg, m.Name, undefined.Kind, record.AllowedAggs(undefined.Kind))
	case err != nil:
		return res, fmt.Errorf("%s: %w", m, err)
	}
	res.value = v
	return res, nil
}
