package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

// dashboardQueries returns every PromQL expression of a Grafana dashboard:
// panel targets, annotation queries and template variable queries.
func dashboardQueries(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && (k == "expr" || k == "definition") {
					out = append(out, s)
				}
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
	for _, q := range queries {
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
