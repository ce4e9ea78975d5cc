package runner

import (
	"testing"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

func TestTrimWindowsKeepsWhatAssertionsRead(t *testing.T) {
	win := func() []record.Window {
		return []record.Window{{Series: []record.Series{
			{Metric: "http_req_duration"}, {Metric: "http_req_waiting"}, {Metric: "http_req_blocked"}, {Metric: "goodput"},
		}}}
	}
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
			got := trimWindows(win(), sc)[0].Series
			if len(got) != len(tc.want) {
				t.Fatalf("kept %v, want %v", got, tc.want)
			}
			for i, s := range got {
				if s.Metric != tc.want[i] {
					t.Errorf("kept[%d] = %s, want %s", i, s.Metric, tc.want[i])
				}
			}
		})
	}
}
