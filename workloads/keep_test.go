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
