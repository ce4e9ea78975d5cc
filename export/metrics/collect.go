package metrics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// Window is the length of a run record's windows.
const Window = time.Second

// Collect turns a run record into the series the export sends: per window
// the k6 series (latency quantiles from the HDR histograms, rates, counts,
// gauges), the fault windows, the targets' scraped metrics and each
// verdict. Every series carries job="chaosrun", chaosrun_run,
// chaosrun_scenario and the extra labels.
func Collect(r *record.Run, extra map[string]string) ([]Series, error) {
	base := []Label{{LabelJob, "chaosrun"}, {LabelRun, RunID(r)}, {LabelScenario, r.Scenario}}
	for k, v := range extra {
		base = append(base, Label{k, v})
	}
	b := newBuilder(base)
	var ends []time.Time
	totals := map[string]float64{}
	err := r.EachWindow(func(w record.Window) error {
		t := w.Start.Add(Window)
		for _, s := range w.Series {
			if err := addSeries(b, s, t, totals, extra); err != nil {
				return fmt.Errorf("window +%s: %s %v: %w", w.Start.Sub(r.Start).Round(time.Millisecond), s.Metric, s.Tags, err)
			}
		}
		b.endWindow(t)
		ends = append(ends, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", r.Scenario, err)
	}
	end := r.End
	if n := len(ends); n > 0 && ends[n-1].After(end) {
		end = ends[n-1]
	}
	addFaults(b, r, ends)
	addScrapes(b, r, extra)
	addVerdicts(b, r)
	return b.finish(end.Add(Window), func(s *Series) bool {
		return !strings.HasPrefix(s.Name, Prefix+"verdict_") && s.Name != Prefix+"run_passed"
	}), nil
}

// addSeries adds one k6 series of one window.
func addSeries(b *builder, s record.Series, t time.Time, totals map[string]float64, extra map[string]string) error {
	labels := tagLabels(s.Tags, extra)
	name := k6Name(s.Metric)
	switch s.Kind {
	case record.Trend:
		return addTrend(b, s, name, labels, t)
	case record.Counter:
		key := seriesKey(name, sortedCopy(labels))
		totals[key] += s.Sum
		b.add(name+"_per_second", labels, Gauge, "", gapZero, t, s.Sum/Window.Seconds())
		b.add(name+"_total", labels, Counter, "", gapCarry, t, totals[key])
	case record.Rate:
		if s.Count > 0 {
			b.add(name+"_ratio", labels, Gauge, "1", gapStale, t, float64(s.NonZero)/float64(s.Count))
		}
		b.add(name+"_nonzero_per_second", labels, Gauge, "", gapZero, t, float64(s.NonZero)/Window.Seconds())
		b.add(name+"_samples_per_second", labels, Gauge, "", gapZero, t, float64(s.Count)/Window.Seconds())
	case record.Gauge:
		b.add(name, labels, Gauge, "", gapStale, t, s.Last)
	}
	return nil
}

// addTrend adds a trend's quantiles and maximum, from its HDR histogram
// (values in k6 units ×1000; time trends are exported in seconds).
func addTrend(b *builder, s record.Series, name string, labels []Label, t time.Time) error {
	if s.Count == 0 || s.Hist == "" {
		return nil
	}
	// The histogram codec of the run record (today in workloads/stream).
	h, err := record.DecodeHist(s.Hist)
	if err != nil {
		return err
	}
	div, unit := 1000.0, ""
	if record.IsTimeMetric(s.Metric) {
		div, unit, name = 1e6, "s", name+"_seconds"
	}
	for _, q := range Quantiles {
		ql := append(labels[:len(labels):len(labels)], Label{"quantile", strconv.FormatFloat(q, 'f', -1, 64)})
		b.add(name, ql, Gauge, unit, gapStale, t, float64(h.ValueAtQuantile(q*100))/div)
	}
	max := s.Max
	if unit == "s" {
		max /= 1000
	}
	b.add(name+"_max", labels, Gauge, unit, gapStale, t, max)
	return nil
}

func sortedCopy(ls []Label) []Label {
	out := append([]Label(nil), ls...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// addFaults adds chaosrun_fault_active: 1 while a fault is in force, 0
// otherwise, at each window's end and at each applied and reverted instant.
func addFaults(b *builder, r *record.Run, ends []time.Time) {
	type span struct {
		ev       record.FaultEvent
		from, to time.Time
	}
	var spans []*span
	open := map[string]*span{}
	for _, f := range r.Faults {
		switch f.Action {
		case record.Applied:
			sp := &span{ev: f, from: f.Actual, to: r.End}
			spans, open[f.Fault] = append(spans, sp), sp
		case record.Reverted:
			if sp := open[f.Fault]; sp != nil {
				sp.to = f.Actual
				delete(open, f.Fault)
			}
		}
	}
	name := Prefix + "fault_active"
	for _, sp := range spans {
		labels := []Label{{"fault", sp.ev.Fault}, {"kind", sp.ev.Kind}, {"target", sp.ev.Target}}
		add := func(t time.Time, v float64) { b.add(name, labels, Gauge, "", gapNone, t, v) }
		for _, t := range ends {
			v := 0.0
			if !t.Before(sp.from) && t.Before(sp.to) {
				v = 1
			}
			add(t, v)
		}
		add(sp.from, 1)
		add(sp.to, 0)
	}
}

// addScrapes adds the targets' /metrics readings as
// chaosrun_target_NAME{labels…, instance, service} at each scrape's time.
func addScrapes(b *builder, r *record.Run, extra map[string]string) {
	for _, sc := range r.Scrapes {
		service := sc.Instance
		if i := strings.LastIndexByte(service, '.'); i > 0 {
			service = service[:i]
		}
		for k, v := range sc.Values {
			name, labels := parseScrapeKey(k, extra)
			labels = append(labels, Label{"instance", sc.Instance}, Label{"service", service})
			kind := Gauge
			if isCounterName(name) {
				kind = Counter
			}
			b.add(Prefix+"target_"+name, labels, kind, "", gapNone, sc.Time, v)
		}
	}
}

// parseScrapeKey splits a flattened scrape key, name{a=b,c=d}suffix, into
// the metric name (suffix appended) and its labels.
func parseScrapeKey(k string, extra map[string]string) (string, []Label) {
	i, j := strings.IndexByte(k, '{'), strings.LastIndexByte(k, '}')
	if i < 0 || j < i {
		return sanitize(k), nil
	}
	var labels []Label
	for _, kv := range strings.Split(k[i+1:j], ",") {
		if n, v, ok := strings.Cut(kv, "="); ok {
			labels = append(labels, Label{labelName(n, extra), v})
		}
	}
	return sanitize(k[:i] + k[j+1:]), labels
}

func isCounterName(name string) bool {
	for _, suf := range []string{"_total", "_count", "_sum", "_bucket"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// addVerdicts adds each verdict's outcome, observed value and bound at the
// run's end, and whether the whole run passed.
func addVerdicts(b *builder, r *record.Run) {
	passed := !r.Incomplete && len(r.Verdicts) > 0
	for _, v := range r.Verdicts {
		labels := []Label{{"assertion", v.Assertion}, {"check", v.Check}, {"metric", v.Metric}, {"window", v.Window}, {"unit", v.Unit}}
		b.add(Prefix+"verdict_pass", labels, Gauge, "", gapNone, r.End, boolValue(v.Pass))
		b.add(Prefix+"verdict_observed", labels, Gauge, "", gapNone, r.End, v.Observed)
		b.add(Prefix+"verdict_bound", labels, Gauge, "", gapNone, r.End, v.Bound)
		passed = passed && v.Pass
	}
	b.add(Prefix+"run_passed", nil, Gauge, "", gapNone, r.End, boolValue(passed))
}

func boolValue(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}
