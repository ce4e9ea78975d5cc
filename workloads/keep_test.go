package workloads

import (
	"slices"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

func TestKeepMetricKeepsWhatAssertionsRead(t *testing.T) {
	metrics := []string{"http_req_duration", "http_req_waiting", "http_req_blocked", "goodput"}
	cases := []struct {
		name    string
		metrics []string
		want    []string
	}{
		{"drops detail timings", []string{"http_req_duration{api:X}"}, []string{"http_req_duration", "goodput"}},
		{"keeps an asserted detail", []string{"http_req_waiting{api:X}"}, []string{"http_req_duration", "http_req_waiting", "goodput"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scenario.Scenario{}
			for _, m := range tc.metrics {
				sc.Assertions = append(sc.Assertions, scenario.Assertion{Metric: m})
			}
			keep := KeepMetric(sc)
			var got []string
			for _, m := range metrics {
				if keep(m) {
					got = append(got, m)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("kept %v, want %v", got, tc.want)
			}
		})
	}
}

// TestKeepAlso: the metrics a load's own checks read are kept beside what
// keep keeps.
func TestKeepAlso(t *testing.T) {
	checks := []scenario.Assertion{{Name: "threshold http_req_duration", Metric: "http_req_duration{type:API}"}}
	keep := KeepAlso(func(m string) bool { return m != "http_req_waiting" && m != "http_req_duration" }, checks)
	if !keep("http_req_duration") || keep("http_req_waiting") || !keep("http_reqs") {
		t.Error("KeepAlso does not keep the thresholds' metrics beside the others")
	}
	if KeepAlso(nil, nil) != nil {
		t.Error("KeepAlso with no checks changes keep")
	}
}
