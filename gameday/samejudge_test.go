package gameday_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/gameday"
	"github.com/chaosrun/chaosrun/judge"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/scenario"
)

// TestOneVerdictForOneRecord feeds one record through the three paths that
// judge a record (run's, judge's and the game day's) and gets the same
// verdict rows from each: the scenario's checks over windows and against
// a baseline, the script's thresholds and k6's own verdict on them.
func TestOneVerdictForOneRecord(t *testing.T) {
	sc := &scenario.Scenario{Name: "same", Order: []string{"svc"},
		Workload: scenario.Workload{Duration: scenario.Duration(6 * time.Second)},
		Assertions: []scenario.Assertion{
			{Name: "some-load", Metric: "http_reqs", Checks: scenario.Checks("count > 0")},
			{Name: "fast", Metric: "http_req_duration", Window: "whole", Checks: scenario.Checks("p(95) < 100", "max < 1000")},
			{Name: "steady", Metric: "http_req_duration", Window: "whole", Baseline: "whole", Checks: scenario.Checks("p(50) < 2 * baseline")},
		}}
	threshold := scenario.Assertion{Name: "threshold http_req_duration", Metric: "http_req_duration", Window: "all",
		Checks: []scenario.Check{{Threshold: "p(95)<200"}, {Threshold: "max<1000"}}}
	windows := make([][]record.Series, 6)
	for i := range windows {
		v := 10.0
		if i >= 3 {
			v = 500
		}
		windows[i] = []record.Series{{Metric: "http_reqs", Kind: record.Counter, Count: 100, Sum: 100}, trend(t, "http_req_duration", 100, v)}
	}
	ends := []record.LoadPart{{Name: "k6", ExitCode: 99, ThresholdsCrossed: true,
		Crossed: []record.Threshold{{Key: "http_req_duration", Expr: "max<1000"}}}}
	load := &loadtest.Load{Windows: windows, RunFor: time.Millisecond, Checks: []scenario.Assertion{threshold}, Ends: ends}
	rec, err := runner.Run(context.Background(), runner.Options{Scenario: sc, Testbed: &loadtest.Testbed{}, Load: load.Factory(),
		Clock: clock.NewFake(time.Unix(0, 0)), Timeout: 20 * time.Second,
		Waits: runner.Waits{Start: time.Second, Stop: time.Second, Collect: 100 * time.Millisecond}})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Cleanup(func() { rec.Close() })
	ran := rows(rec.Verdicts)
	if len(ran) != 6 || !slices.ContainsFunc(rec.Verdicts, func(v record.Verdict) bool { return v.Source == record.SourceScript && !v.Pass }) {
		t.Fatalf("run's verdicts %q: want the scenario's 4 and the script's 2 (one failed by k6)", ran)
	}
	again := func(name string, judgeIt func()) {
		rec.Verdicts, rec.Problems = nil, nil
		judgeIt()
		if got := rows(rec.Verdicts); !slices.Equal(got, ran) {
			t.Errorf("%s's verdicts\n%q\nrun's\n%q", name, got, ran)
		}
	}
	again("judge", func() { judge.Fill(sc, rec, nil, true) })
	again("game day", func() { gameday.Judge(sc, rec, assertions.ScriptChecksOf(rec)) })
}

// rows are verdicts as a report's rows show them.
func rows(vs []record.Verdict) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%.6g|%.6g|%v|%s|%s", v.Assertion, v.Check, v.Metric, v.Window, v.Observed, v.Bound, v.Pass, v.Source, v.Error))
	}
	return out
}

// trend is a trend series of n samples of v ms.
func trend(t *testing.T, metric string, n int, v float64) record.Series {
	t.Helper()
	h := record.NewHist()
	if err := h.RecordValues(int64(v*1000), int64(n)); err != nil {
		t.Fatal(err)
	}
	enc, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return record.Series{Metric: metric, Kind: record.Trend, Count: int64(n), Sum: float64(n) * v, Min: v, Max: v, Hist: enc}
}
