package metrics

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

// dashboardQuery is one PromQL expression of a Grafana dashboard with the
// label templates shown beside it (legendFormat, an annotation's
// titleFormat, textFormat and tagKeys).
type dashboardQuery struct {
	expr    string
	formats []string
}

// dashboardQueries returns every query of a Grafana dashboard: panel
// targets, annotation queries and template variable queries.
func dashboardQueries(t *testing.T, path string) []dashboardQuery {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []dashboardQuery
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range []string{"expr", "definition"} {
				if s, ok := x[k].(string); ok {
					q := dashboardQuery{expr: s}
					for _, f := range []string{"legendFormat", "titleFormat", "textFormat", "tagKeys"} {
						if fs, ok := x[f].(string); ok && fs != "" {
							q.formats = append(q.formats, fs)
						}
					}
					out = append(out, q)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}

var chaosrunName = regexp.MustCompile(`\bchaosrun_[a-zA-Z0-9_]+`)

// TestDashboardReadsWhatTheExportWrites checks that every metric name a
// query of dashboards/chaosrun.json reads is one the export writes for a
// real catalog run (or, for dropped iterations, which that run had none
// of, for the synthetic run), and that every query reads one.
func TestDashboardReadsWhatTheExportWrites(t *testing.T) {
	written := map[string]bool{}
	for _, r := range []*record.Run{readRun(t, "testdata/bank-outlier-host-off.json"), synthRun(t)} {
		ss, err := Collect(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			written[s.Name] = true
		}
	}
	queries := dashboardQueries(t, "../../dashboards/chaosrun.json")
	if len(queries) < 10 {
		t.Fatalf("only %d queries found in the dashboard", len(queries))
	}
	read := map[string]bool{}
	for _, dq := range queries {
		q := dq.expr
		names := chaosrunName.FindAllString(q, -1)
		metrics := 0
		for _, n := range names {
			if n == LabelRun || n == LabelScenario {
				continue
			}
			metrics++
			read[n] = true
			if !written[n] {
				t.Errorf("the dashboard reads %s, which the export does not write (query %s)", n, q)
			}
		}
		if metrics == 0 {
			t.Errorf("query reads no chaosrun series: %s", q)
		}
	}
	var names []string
	for n := range read {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("the dashboard reads %d series: %s", len(names), strings.Join(names, ", "))
}

// TestDashboardCheckFails shows the check catches a misspelt series.
func TestDashboardCheckFails(t *testing.T) {
	ss, err := Collect(synthRun(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, s := range ss {
		written[s.Name] = true
	}
	for _, q := range []string{`chaosrun_k6_http_req_duration_p99{chaosrun_run="x"}`, `rate(chaosrun_k6_http_reqs[1m])`} {
		n := chaosrunName.FindString(q)
		if written[n] {
			t.Errorf("%s counted as written", n)
		}
	}
}

var (
	reSelector   = regexp.MustCompile(`\b(chaosrun_[a-zA-Z0-9_]+)\s*\{([^}]*)\}`)
	reMatcher    = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	reBy         = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	reLabelValue = regexp.MustCompile(`label_values\(\s*(chaosrun_[a-zA-Z0-9_]+)[^,]*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)`)
	reTemplate   = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
)

// exportedLabels are the label names the export writes per series name,
// for the record files and the synthetic run.
func exportedLabels(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, r := range []*record.Run{readRun(t, "testdata/bank-outlier-host-off.json"), synthRun(t)} {
		ss, err := Collect(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if out[s.Name] == nil {
				out[s.Name] = map[string]bool{}
			}
			for _, l := range s.Labels {
				out[s.Name][l.Name] = true
			}
		}
	}
	return out
}

// labelProblems says which label names q uses that the series it reads
// do not carry: in a selector, a by or without clause, label_values, or
// a legend's {{label}} (which must be one a by clause keeps).
func labelProblems(q dashboardQuery, labels map[string]map[string]bool) []string {
	var bad []string
	var metrics []string
	for _, n := range chaosrunName.FindAllString(q.expr, -1) {
		if n != LabelRun && n != LabelScenario {
			metrics = append(metrics, n)
		}
	}
	onAll := func(where, l string) {
		for _, m := range metrics {
			if !labels[m][l] {
				bad = append(bad, fmt.Sprintf("%s: label %s is not on %s", where, l, m))
			}
		}
	}
	for _, m := range reSelector.FindAllStringSubmatch(q.expr, -1) {
		for _, l := range reMatcher.FindAllStringSubmatch(m[2], -1) {
			if !labels[m[1]][l[1]] {
				bad = append(bad, fmt.Sprintf("selector: label %s is not on %s", l[1], m[1]))
			}
		}
	}
	kept := map[string]bool{}
	for _, m := range reBy.FindAllStringSubmatch(q.expr, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				kept[l] = true
				onAll("by", l)
			}
		}
	}
	for _, m := range reLabelValue.FindAllStringSubmatch(q.expr, -1) {
		if !labels[m[1]][m[2]] {
			bad = append(bad, fmt.Sprintf("label_values: label %s is not on %s", m[2], m[1]))
		}
	}
	for _, f := range q.formats {
		names := reTemplate.FindAllStringSubmatch(f, -1)
		if !strings.Contains(f, "{{") { // tagKeys: a comma-separated list
			for _, l := range strings.Split(f, ",") {
				names = append(names, []string{"", strings.TrimSpace(l)})
			}
		}
		for _, l := range names {
			switch {
			case len(kept) > 0 && !kept[l[1]]:
				bad = append(bad, fmt.Sprintf("legend %q: label %s is not kept by the by clause", f, l[1]))
			case len(kept) == 0:
				onAll(fmt.Sprintf("legend %q", f), l[1])
			}
		}
	}
	return bad
}

// TestDashboardLabelsExist: every label name a query of
// dashboards/chaosrun.json selects on, groups by, lists values of or shows
// in a legend is on the series the export writes under that name.
func TestDashboardLabelsExist(t *testing.T) {
	labels := exportedLabels(t)
	n := 0
	for _, q := range dashboardQueries(t, "../../dashboards/chaosrun.json") {
		for _, p := range labelProblems(q, labels) {
			t.Errorf("%s (query %s)", p, q.expr)
		}
		n += len(reSelector.FindAllString(q.expr, -1)) + len(q.formats)
	}
	if n < 20 {
		t.Fatalf("only %d selectors and legends found: the check checked little", n)
	}
}

// TestDashboardLabelCheckFails shows the label check catches a misspelt
// label in each place a query names one.
func TestDashboardLabelCheckFails(t *testing.T) {
	labels := exportedLabels(t)
	for _, q := range []dashboardQuery{
		{expr: `chaosrun_k6_http_reqs_per_second{apii="Get"}`},
		{expr: `sum by (sevice) (rate(chaosrun_target_platform_decisions_total[1m]))`},
		{expr: `label_values(chaosrun_run_passed, scenario_name)`},
		{expr: `sum by (api) (chaosrun_k6_http_reqs_per_second)`, formats: []string{"{{api}} {{status}}"}},
		{expr: `chaosrun_fault_active`, formats: []string{"{{fault}} on {{edge}}"}},
		{expr: `chaosrun_fault_active == 1`, formats: []string{"fault,chaosrun_scenario,edge"}},
	} {
		if p := labelProblems(q, labels); len(p) != 1 {
			t.Errorf("%s %v: problems %q, want one", q.expr, q.formats, p)
		}
	}
	if p := labelProblems(dashboardQuery{expr: `sum by (api) (chaosrun_k6_http_reqs_per_second{api=~"G.*"})`, formats: []string{"{{api}}"}}, labels); len(p) != 0 {
		t.Errorf("a good query: problems %q", p)
	}
}
