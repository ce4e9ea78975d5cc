package scenarioload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/internal/suggest"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// emits checks that a native workload can emit what selector selects: a
// metric the engine or a stream's own metrics: produce, and for a tag
// that the streams set as plain text, one of their values. A typo
// (http_req_faild, api:TransactChek) would otherwise be found only after
// the whole run, as "no samples". Templated tags, tag_values, scrape: and
// the harness's own metrics are not checked, nor are k6 scripts.
func emits(sc *scenario.Scenario, selector string) error {
	if sc.Workload.EngineName() != scenario.EngineNative || len(sc.Workload.Streams) == 0 {
		return nil
	}
	m, err := assertions.ParseMetric(selector)
	if err != nil || m.Source == "scrape" || m.Name == assertions.EndCheckMetric || m.Name == assertions.RecoveryMetric {
		return nil
	}
	names := native.MetricNames()
	for _, st := range sc.Workload.Streams {
		for _, sm := range st.Metrics {
			names = append(names, sm.Name)
		}
	}
	if !slices.Contains(names, m.Name) {
		return notAmong(fmt.Sprintf("the native engine emits no metric %q", m.Name), m.Name, names)
	}
	for _, f := range m.Filters {
		if vals, ok := tagValues(sc, f.Key); ok && !f.Not && !slices.Contains(vals, f.Value) {
			return notAmong(fmt.Sprintf("no stream tags %s:%s", f.Key, f.Value), f.Value, vals)
		}
	}
	return nil
}

// tagValues lists the values the streams give tag key, when every stream
// that sets it does so as plain text (no {template}, no tag_values) and
// at least one does; scenario is each stream's name.
func tagValues(sc *scenario.Scenario, key string) ([]string, bool) {
	var vals []string
	for name, st := range sc.Workload.Streams {
		v, ok := st.Tags[key]
		switch {
		case key == "scenario":
			v, ok = name, true
		case !ok:
			continue
		case strings.Contains(v, "{") || st.TagValues[key] != nil:
			return nil, false
		}
		if !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return vals, len(vals) > 0
}

// notAmong is msg with the nearest of allowed and the list.
func notAmong(msg, got string, allowed []string) error {
	if near := suggest.Nearest(got, allowed); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	slices.Sort(allowed)
	return fmt.Errorf("%s (allowed: %s)", msg, strings.Join(slices.Compact(allowed), ", "))
}
