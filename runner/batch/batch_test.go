package batch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

func parse(t *testing.T, name string, bound int) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse(name+".yaml", fmt.Appendf(nil, loadtest.ScenarioYAML, name, bound), scenarioload.Checkers())
	if err == nil {
		err = scenario.Validate(sc, scenarioload.Checkers())
	}
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// fakes sets runs up on a fresh fake load (ten requests, lasting runFor)
// and a fake testbed each.
func fakes(t *testing.T, runFor time.Duration) *setup.Setup {
	t.Helper()
	o := setup.Options{Testbed: "local", Shards: 1,
		NewLoad: func(engine.LoadSpec) (engine.Load, error) {
			return &loadtest.Load{Windows: [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10}}}, RunFor: runFor}, nil
		},
		NewTestbed: func() testbed.Testbed { return &loadtest.Testbed{} }}
	s, err := setup.Prepare(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWorstOfSeveral: each scenario gets its folder, record and reports;
// the breach is the batch's exit code, named on stderr; several get a
// combined report; every run is exported.
func TestWorstOfSeveral(t *testing.T) {
	var stdout, stderr bytes.Buffer
	out := t.TempDir()
	exported := 0
	code := Run(context.Background(), Options{
		Scenarios: []*scenario.Scenario{parse(t, "holds", 5), parse(t, "breaches", 50)},
		Setup:     fakes(t, 10*time.Millisecond), OutDir: out, Testbed: "fake", Quiet: true,
		Stdout: &stdout, Stderr: &stderr, Export: func(context.Context, *record.Run) { exported++ },
	})
	if code != exitcode.Breach {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitcode.Breach, stderr.String())
	}
	for _, want := range []string{"▶ holds: 1s of load, 0 fault(s), 1 assertion(s); testbed fake", "chaosrun run: breaches breached: some-load", "combined report: " + filepath.Join(out, "index.html")} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	for _, f := range []string{"holds/run.json", "holds/report.html", "breaches/run.json", "breaches/junit.xml", "index.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if exported != 2 {
		t.Errorf("exported %d runs, want 2", exported)
	}
}

// TestTotalTimeout: a run cut by the total bound is a harness error, and
// the scenarios after it are not run.
func TestTotalTimeout(t *testing.T) {
	var stdout, stderr bytes.Buffer
	out := t.TempDir()
	code := Run(context.Background(), Options{
		Scenarios: []*scenario.Scenario{parse(t, "first", 5), parse(t, "second", 5)},
		Setup:     fakes(t, time.Hour), OutDir: out, Testbed: "fake", Quiet: true, TotalTimeout: 300 * time.Millisecond,
		Stdout: &stdout, Stderr: &stderr,
	})
	if code != exitcode.RunError || !strings.Contains(stderr.String(), "--total-timeout 300ms reached in first; the scenarios after it were not run") {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitcode.RunError, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "second")); !os.IsNotExist(err) {
		t.Errorf("the second scenario ran after the total bound: %v", err)
	}
}
