package report

import (
	"strings"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
)

// withBounds attaches to each chart the verdict bounds that map cleanly onto
// it: a percentile bound in ms on one API's latency (http_req_duration or
// grpc_req_duration with the single filter api:X) goes on the chart
// "Latency X"; a rate bound on one API's http_req_failed goes on the failed
// share chart. Other bounds are left out rather than drawn on a chart that
// plots something else.
func withBounds(charts []Chart, verdicts []record.Verdict) []Chart {
	at := map[string]int{}
	for i, c := range charts {
		at[c.Title] = i
	}
	for _, v := range verdicts {
		title, ok := boundChart(v)
		if !ok {
			continue
		}
		if i, ok := at[title]; ok {
			charts[i].Bounds = append(charts[i].Bounds, Bound{Name: v.Assertion, Y: v.Bound})
		}
	}
	return charts
}

// boundChart names the chart v's bound belongs on.
func boundChart(v record.Verdict) (string, bool) {
	check := strings.TrimSpace(v.Check)
	m, err := assertions.ParseMetric(v.Metric)
	if err != nil || m.Source != "" || len(m.Filters) != 1 {
		return "", false
	}
	f := m.Filters[0]
	if f.Key != "api" || f.Not || f.Value == "" {
		return "", false
	}
	switch {
	case v.Unit == "ms" && strings.HasPrefix(check, "p(") && isLatency(m.Name):
		return "Latency " + f.Value, true
	case strings.HasPrefix(check, "rate") && m.Name == "http_req_failed":
		return failedShareTitle, true
	}
	return "", false
}
