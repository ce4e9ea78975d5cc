package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/scenario"
)

// latencies is n seconds of 100 requests each: 10ms until second slowFrom,
// 500ms from then on.
func latencies(t *testing.T, n, slowFrom int) [][]record.Series {
	t.Helper()
	out := make([][]record.Series, n)
	for i := range out {
		v := 10.0
		if i >= slowFrom {
			v = 500
		}
		out[i] = []record.Series{trendOf(t, "http_req_duration", 100, v)}
	}
	return out
}

// trendOf is a trend series of n samples of v.
func trendOf(t *testing.T, metric string, n int, v float64) record.Series {
	t.Helper()
	h := record.Series{Metric: metric, Kind: record.Trend, Count: int64(n), Sum: float64(n) * v, Min: v, Max: v}
	enc, err := encodeConst(n, v)
	if err != nil {
		t.Fatal(err)
	}
	h.Hist = enc
	return h
}

// sixtySeconds is a scenario of a 60 s load and one check on latency.
func sixtySeconds(check scenario.Check, faults ...scenario.Fault) *scenario.Scenario {
	return &scenario.Scenario{Name: "abort", Order: []string{"svc"}, Faults: faults,
		Workload: scenario.Workload{Duration: scenario.Duration(time.Minute)},
		Assertions: []scenario.Assertion{{Name: "fast", Metric: "http_req_duration", Window: "whole", Baseline: "whole",
			Checks: []scenario.Check{check}}}}
}

func runFake(t *testing.T, sc *scenario.Scenario, load *loadtest.Load) (*record.Run, *loadtest.Testbed, time.Duration) {
	t.Helper()
	bed := &loadtest.Testbed{}
	t0 := time.Now()
	// The fake's seconds lie in the past: a clock frozen long before them
	// keeps scheduled faults from coming due.
	frozen := clock.NewFake(time.Unix(0, 0))
	rec, err := runner.Run(context.Background(), runner.Options{Scenario: sc, Testbed: bed, Load: load.Factory(), Clock: frozen,
		Timeout: 20 * time.Second, Waits: runner.Waits{Start: time.Second, Stop: time.Second, Collect: 100 * time.Millisecond}})
	took := time.Since(t0)
	t.Cleanup(func() { rec.Close() })
	if err != nil {
		t.Fatalf("run: %v; problems %q", err, rec.Problems)
	}
	if bed.Downs() != 1 || !load.Closed() {
		t.Errorf("testbed down %d times, load closed %v: something was left running", bed.Downs(), load.Closed())
	}
	return rec, bed, took
}

// TestAbortOnFail: a 60 s run (a second of load every 20ms) whose
// abortOnFail check fails at 10 s ends within delayAbortEval + 3 s of
// load, the load told to stop, the record aborted with the reason and the
// run failing; with the check not aborting, the same run goes to its end.
func TestAbortOnFail(t *testing.T) {
	tests := []struct {
		name          string
		slowFrom      int
		delay         time.Duration
		abort         bool
		minSent, most int // windows sent before load stopped
	}{
		{"fails at 10s, no delay", 10, 0, true, 11, 13},
		{"fails at 10s, delay 5s", 10, 5 * time.Second, true, 11, 10 + 5 + 3},
		{"fails at 2s, delay 8s: not before 8s", 2, 8 * time.Second, true, 9, 8 + 3},
		{"fails but does not abort", 10, 0, false, 60, 60},
		{"never fails", 99, 0, true, 60, 60},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := scenario.Check{Threshold: "p(99) < 100ms", AbortOnFail: tc.abort, DelayAbortEval: scenario.Duration(tc.delay)}
			load := &loadtest.Load{Windows: latencies(t, 60, tc.slowFrom), Every: 20 * time.Millisecond, RunFor: time.Millisecond}
			rec, _, took := runFake(t, sixtySeconds(check), load)
			sent := load.Sent()
			if sent < tc.minSent || sent > tc.most {
				t.Errorf("load stopped after %d seconds, want %d to %d (run took %s)", sent, tc.minSent, tc.most, took)
			}
			wantAbort := tc.abort && tc.slowFrom < 60
			if (rec.Aborted != "") != wantAbort {
				t.Fatalf("aborted %q, want abort %v", rec.Aborted, wantAbort)
			}
			if !wantAbort {
				return
			}
			for _, want := range []string{"abortOnFail: fast", `"p(99) < 100ms" failed`, "observed 500ms, bound 100ms"} {
				if !strings.Contains(rec.Aborted, want) {
					t.Errorf("aborted %q does not say %q", rec.Aborted, want)
				}
			}
			if report.Passed(rec) || !strings.HasPrefix(report.Headline(rec), "ABORTED") {
				t.Errorf("an aborted run passes: %s", report.Headline(rec))
			}
			if _, early := runner.LoadEndedEarly(rec); early {
				t.Error("an aborted run is also judged as load that ended early")
			}
		})
	}
}

// TestAbortNotAppliedFaults: faults scheduled after an abort are recorded
// as not applied, with the reason, and named by the checks that read them.
func TestAbortNotAppliedFaults(t *testing.T) {
	late := scenario.Fault{Name: "late", Kind: "latency", Edge: "svc->db", Start: scenario.Duration(40 * time.Second), Duration: scenario.Duration(5 * time.Second),
		Attributes: map[string]float64{"latency": 100}}
	sc := sixtySeconds(scenario.Check{Threshold: "p(99) < 100ms", AbortOnFail: true}, late)
	sc.Assertions = append(sc.Assertions, scenario.Assertion{Name: "during-late", Metric: "http_req_duration", Window: "during late",
		Baseline: "whole", Checks: scenario.Checks("p(99) < 1s")})
	load := &loadtest.Load{Windows: latencies(t, 60, 3), Every: 20 * time.Millisecond}
	rec, _, _ := runFake(t, sc, load)
	if len(rec.NotApplied) != 1 || rec.NotApplied[0].Fault != "late" || !strings.Contains(rec.NotApplied[0].Reason, "aborted") ||
		rec.NotApplied[0].Target != "svc->db" || time.Duration(rec.NotApplied[0].Start) != 40*time.Second {
		t.Fatalf("not applied: %+v", rec.NotApplied)
	}
	v := rec.Verdicts[1]
	if v.Pass || !strings.Contains(v.Error, "fault late was never applied: the run was aborted") {
		t.Errorf("check during the fault: %+v", v)
	}
}

// TestLoadEndedEarly: a load that ends by itself long before its planned
// duration is a failing verdict naming both durations; one that runs its
// time is not judged at all.
func TestLoadEndedEarly(t *testing.T) {
	one := &loadtest.Load{Windows: latencies(t, 1, 99), RunFor: time.Millisecond}
	sc := sixtySeconds(scenario.Check{Threshold: "p(99) < 100ms"},
		scenario.Fault{Name: "f", Kind: "latency", Edge: "svc->db", Start: scenario.Duration(20 * time.Second), Duration: scenario.Duration(time.Second),
			Attributes: map[string]float64{"latency": 100}})
	rec, _, _ := runFake(t, sc, one)
	var early *record.Verdict
	for i, v := range rec.Verdicts {
		if v.Source == record.SourceRun {
			early = &rec.Verdicts[i]
		}
	}
	if early == nil || early.Pass || early.Bound != 60 || early.Observed > 3 || early.Unit != "s" || report.Passed(rec) {
		t.Fatalf("verdicts %+v: want a failing load-duration verdict (planned 60s)", rec.Verdicts)
	}
	if !strings.Contains(strings.Join(rec.Problems, "\n"), "load ended by itself after") ||
		len(rec.NotApplied) != 1 || !strings.Contains(rec.NotApplied[0].Reason, "load ended after") {
		t.Errorf("problems %q, not applied %+v", rec.Problems, rec.NotApplied)
	}
	var b strings.Builder
	report.Table(&b, rec)
	for _, want := range []string{"FAIL    load", "ran for its planned duration", "60s", "not applied: fault f (latency on svc->db, planned at +20s): load ended after"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}

	full := sixtySeconds(scenario.Check{Threshold: "p(99) < 100ms"})
	full.Workload.Duration = scenario.Duration(3 * time.Second)
	rec, _, _ = runFake(t, full, &loadtest.Load{Windows: latencies(t, 3, 99), RunFor: time.Millisecond})
	if _, early := runner.LoadEndedEarly(rec); early || len(rec.Verdicts) != 1 || !report.Passed(rec) {
		t.Errorf("a load that ran its time: verdicts %+v", rec.Verdicts)
	}
}

// TestScriptChecks: a load's own checks (a k6 script's thresholds) become
// verdicts marked as the script's, and its abortOnFail thresholds stop the
// run like the scenario's; how its processes ended is recorded.
func TestScriptChecks(t *testing.T) {
	threshold := scenario.Assertion{Name: "threshold http_req_duration", Metric: "http_req_duration", Window: "all",
		Checks: []scenario.Check{{Threshold: "p(95)<200"}, {Threshold: "max<100", AbortOnFail: true}}}
	ends := []record.LoadPart{{Name: "k6", ExitCode: 99, ThresholdsCrossed: true}}
	load := &loadtest.Load{Windows: latencies(t, 60, 5), Every: 20 * time.Millisecond, Checks: []scenario.Assertion{threshold}, Ends: ends}
	rec, _, _ := runFake(t, sixtySeconds(scenario.Check{Threshold: "count > 0"}), load)
	if rec.Aborted == "" || !strings.Contains(rec.Aborted, "threshold http_req_duration") {
		t.Errorf("aborted %q: the script's abortOnFail threshold did not stop the run", rec.Aborted)
	}
	var script []record.Verdict
	for _, v := range rec.Verdicts {
		if v.Source == record.SourceScript {
			script = append(script, v)
		}
	}
	if len(script) != 2 || script[0].Check != "p(95)<200" || script[0].Pass || script[0].Window != "all" || script[1].Check != "max<100" {
		t.Errorf("script verdicts %+v", script)
	}
	if len(rec.LoadParts) != 1 || !rec.LoadParts[0].ThresholdsCrossed {
		t.Errorf("load parts %+v", rec.LoadParts)
	}
}

// encodeConst is a histogram of n samples of v (k6 units).
func encodeConst(n int, v float64) (string, error) {
	h := record.NewHist()
	if err := h.RecordValues(int64(v*1000), int64(n)); err != nil {
		return "", err
	}
	return record.EncodeHist(h)
}
