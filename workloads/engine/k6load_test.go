package engine

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/k6run"
)

// TestSchedule: a script without a schedule runs for the workload's
// duration; one with its own runs it, noted when it is not the workload's.
func TestSchedule(t *testing.T) {
	iters := int64(5)
	tests := []struct {
		name     string
		opts     k6run.Options
		flags    []string
		duration time.Duration
		note     string
	}{
		{"no options", k6run.Options{}, nil, 30 * time.Second, ""},
		{"vus only", k6run.Options{}, []string{"--vus=5"}, 30 * time.Second, ""},
		{"its own duration", k6run.Options{Duration: "30s"}, nil, 0, ""},
		{"stages a little longer", k6run.Options{Stages: []k6run.Stage{{Duration: "32s"}}}, nil, 0, ""},
		{"stages far shorter", k6run.Options{Stages: []k6run.Stage{{Duration: "5s"}}}, nil, 0, "the script's own schedule lasts 5s, the workload's duration is 30s"},
		{"iterations", k6run.Options{Iterations: &iters}, nil, 0, ""},
		{"iterations by flag", k6run.Options{}, []string{"--iterations=10"}, 0, ""},
		{"stages by flag", k6run.Options{}, []string{"--stage=5s:10"}, 0, ""},
	}
	for _, tc := range tests {
		d, notes := schedule(tc.opts, tc.flags, 30*time.Second)
		if d != tc.duration || (tc.note == "") != (len(notes) == 0) || (tc.note != "" && !strings.Contains(notes[0], tc.note)) {
			t.Errorf("%s: --duration %s, notes %q; want %s, %q", tc.name, d, notes, tc.duration, tc.note)
		}
	}
}

// TestThresholdChecks: a script's thresholds become one assertion per
// metric key, over every sample, with k6's abort options; none with
// --no-thresholds.
func TestThresholdChecks(t *testing.T) {
	ts := []k6run.Threshold{
		{Key: "http_req_duration", Expr: "p(95)<500"},
		{Key: "http_req_duration", Expr: "p(99)<900", AbortOnFail: true, DelayAbortEval: 10 * time.Second},
		{Key: "http_req_duration{ type : 'API' }", Expr: "avg<200"},
	}
	got, notes := ThresholdChecks(ts, nil)
	want := []scenario.Assertion{
		{Name: "threshold http_req_duration", Metric: "http_req_duration", Window: "all", Checks: []scenario.Check{
			{Threshold: "p(95)<500"}, {Threshold: "p(99)<900", AbortOnFail: true, DelayAbortEval: scenario.Duration(10 * time.Second)}}},
		{Name: "threshold http_req_duration{ type : 'API' }", Metric: "http_req_duration{type:API}", Window: "all",
			Checks: []scenario.Check{{Threshold: "avg<200"}}},
	}
	if !reflect.DeepEqual(got, want) || len(notes) != 0 {
		t.Errorf("checks\n%+v\nwant\n%+v\nnotes %q", got, want, notes)
	}
	if got, notes := ThresholdChecks(ts, []string{"--no-thresholds"}); got != nil || len(notes) != 1 {
		t.Errorf("--no-thresholds: %+v, %q", got, notes)
	}
}
