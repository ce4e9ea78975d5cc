package setup_test

import (
	"context"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads/engine"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

const toyScenario = `version: 1
name: toy
seed: 3
services:
  svc: {run: itemsapi}
workload:
  engine: toy
  duration: 1s
assertions:
  - name: toy-load
    metric: http_reqs
    checks: ["count == 7"]
`

// TestToyEngine: an engine that only registers is what a scenario file
// may name, what setup makes a run's load with, what the record names, and what the run judges; no
// other edit is needed. An engine not registered fails the run's load,
// saying which engines there are.
func TestToyEngine(t *testing.T) {
	var made []engine.LoadSpec
	windows := [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: 7, Sum: 7}}}
	engine.Register("toy", engine.Engine{
		New: func(o engine.Options) engine.NewLoad {
			return func(spec engine.LoadSpec) (engine.Load, error) {
				made = append(made, spec)
				return &loadtest.Load{Windows: windows, RunFor: time.Millisecond}, nil
			}
		},
		Version: func(string) map[string]string { return map[string]string{"toy": "v0.0.1"} },
	})
	// The scenario file names it, as a user writes one; validation knows it.
	sc, err := scenario.Parse("toy.yaml", []byte(toyScenario), scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wd := t.TempDir()
	o := setup.Options{K6: k6build.Options{Getenv: func(string) string { return "" }, Dir: wd}, Testbed: "local",
		NewTestbed: func() testbed.Testbed { return &loadtest.Testbed{} }}
	s, err := setup.Prepare(context.Background(), o, []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Versions(sc); v["engine"] != "toy" || v["toy"] != "v0.0.1" {
		t.Errorf("versions %v: want the toy engine's", v)
	}
	rec, err := runner.Run(context.Background(), runner.Options{Scenario: sc, Testbed: s.Testbed(sc, wd), Load: s.Load(sc),
		Clock: clock.NewFake(time.Unix(0, 0)), Timeout: 20 * time.Second,
		Waits: runner.Waits{Start: time.Second, Stop: time.Second, Collect: 100 * time.Millisecond}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	defer rec.Close()
	if len(made) != 1 || made[0].Seed != 3 || !report.Passed(rec) || len(rec.Verdicts) != 1 {
		t.Errorf("the toy made %d loads (%+v); verdicts %+v, problems %q", len(made), made, rec.Verdicts, rec.Problems)
	}

	sc.Workload.Engine = "nosuch"
	rec, err = runner.Run(context.Background(), runner.Options{Scenario: sc, Testbed: &loadtest.Testbed{}, Load: s.Load(sc),
		Timeout: 5 * time.Second, Waits: runner.Waits{Start: time.Second, Stop: time.Second, Collect: 100 * time.Millisecond}})
	if rec != nil {
		defer rec.Close()
	}
	if err == nil || !rec.Incomplete {
		t.Errorf("an unknown engine ran: err %v", err)
	}
}
