package runner_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
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
// abortOnFail check fails at 10 s ends within 3 s of the failure, or of
// delayAbortEval into the load when that is later (k6's meaning): the load
// told to stop, the record's end when the load really ended (it takes
// 300ms to stop here), the record aborted with the reason and the run
// failing; with the check not aborting, the same run goes to its end.
func TestAbortOnFail(t *testing.T) {
	tests := []struct {
		name     string
		slowFrom int
		delay    time.Duration
		abort    bool
		minSent  int // windows sent before load stopped
	}{
		{"fails at 10s, no delay", 10, 0, true, 11},
		{"fails at 10s, delay 5s: no later", 10, 5 * time.Second, true, 11},
		{"fails at 2s, delay 8s: not before 8s", 2, 8 * time.Second, true, 9},
		{"fails but does not abort", 10, 0, false, 60},
		{"never fails", 99, 0, true, 60},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := scenario.Check{Threshold: "p(99) < 100ms", AbortOnFail: tc.abort, DelayAbortEval: scenario.Duration(tc.delay)}
			load := &loadtest.Load{Windows: latencies(t, 60, tc.slowFrom), Every: 20 * time.Millisecond, RunFor: time.Millisecond,
				StopTakes: 300 * time.Millisecond}
			rec, _, took := runFake(t, sixtySeconds(check), load)
			most := 60
			if wantAbort := tc.abort && tc.slowFrom < 60; wantAbort {
				most = max(tc.slowFrom, int(tc.delay/time.Second)) + 3
			}
			if sent := load.Sent(); sent < tc.minSent || sent > most {
				t.Errorf("load stopped after %d seconds, want %d to %d (run took %s)", sent, tc.minSent, most, took)
			}
			if ended := load.EndedAt(); rec.End.Before(ended) {
				t.Errorf("the record's end %s is before the load ended (%s later): it times the decision, not the end",
					rec.End.Format(time.StampMicro), ended.Sub(rec.End))
			}
			checkAborted(t, rec, tc.abort && tc.slowFrom < 60)
		})
	}
}

// checkAborted checks that rec is aborted, with the reason and failing,
// when want says so, and not otherwise.
func checkAborted(t *testing.T, rec *record.Run, want bool) {
	t.Helper()
	if (rec.Aborted != "") != want {
		t.Fatalf("aborted %q, want abort %v", rec.Aborted, want)
	}
	if !want {
		return
	}
	for _, s := range []string{"abortOnFail: fast", `"p(99) < 100ms" failed`, "observed 500ms, bound 100ms"} {
		if !strings.Contains(rec.Aborted, s) {
			t.Errorf("aborted %q does not say %q", rec.Aborted, s)
		}
	}
	if report.Passed(rec) || !strings.HasPrefix(report.Headline(rec), "ABORTED") {
		t.Errorf("an aborted run passes: %s", report.Headline(rec))
	}
	if _, early := assertions.LoadEndedEarly(rec); early {
		t.Error("an aborted run is also judged as load that ended early")
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
	if _, early := assertions.LoadEndedEarly(rec); early || len(rec.Verdicts) != 1 || !report.Passed(rec) {
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

// TestK6OwnVerdict: one k6 process saw every sample, so its exit 99 fails
// the run though the windows hold the thresholds: the threshold its
// summary names fails, or one verdict for k6's exit 99 when it names
// none. Over several processes the merged samples rule, and a process
// that disagrees is a problem naming it.
func TestK6OwnVerdict(t *testing.T) {
	held := scenario.Assertion{Name: "threshold http_req_duration", Metric: "http_req_duration", Window: "all",
		Checks: []scenario.Check{{Threshold: "p(95)<200"}, {Threshold: "max<1000"}}}
	crossed := func(name string, ts ...record.Threshold) record.LoadPart {
		return record.LoadPart{Name: name, ExitCode: 99, ThresholdsCrossed: true, Crossed: ts}
	}
	clean := func(name string) record.LoadPart { return record.LoadPart{Name: name} }
	tests := []struct {
		name        string
		parts       []record.LoadPart
		pass        bool
		wantFailing string // "assertion check" of a failing verdict
		wantError   string // in that verdict's error
		wantProblem string
	}{
		{"one process, the threshold named", []record.LoadPart{crossed("k6", record.Threshold{Key: "http_req_duration", Expr: "p(95)<200"})}, false,
			"threshold http_req_duration p(95)<200", "k6 found this threshold crossed over the same samples (exit 99), though the windows give 10ms against 200ms", ""},
		{"one process, none named", []record.LoadPart{crossed("k6")}, false,
			"k6 thresholds k6's own verdict (exit 99)", "its summary does not say which", ""},
		{"one process, a threshold not judged here", []record.LoadPart{crossed("k6", record.Threshold{Key: "checks", Expr: "rate>0.99"})}, false,
			"threshold checks rate>0.99", "chaosrun does not judge it over the windows", ""},
		{"one process, exit 0", []record.LoadPart{clean("k6")}, true, "", "", ""},
		{"two processes, one disagrees", []record.LoadPart{clean("k6 shard 1 of 2"), crossed("k6 shard 2 of 2", record.Threshold{Key: "http_req_duration", Expr: "max<1000"})}, true,
			"", "", "k6 disagrees: k6 shard 2 of 2 (http_req_duration: max<1000) found the script's thresholds crossed over its own share of the samples (exit 99); over every sample of the run merged they hold"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := sixtySeconds(scenario.Check{Threshold: "count > 0"})
			sc.Workload.Duration = scenario.Duration(5 * time.Second)
			load := &loadtest.Load{Windows: latencies(t, 5, 99), RunFor: time.Millisecond, Checks: []scenario.Assertion{held}, Ends: tc.parts}
			rec, _, _ := runFake(t, sc, load)
			if report.Passed(rec) != tc.pass {
				t.Errorf("passed %v, want %v: %+v", report.Passed(rec), tc.pass, rec.Verdicts)
			}
			if tc.wantFailing != "" {
				i := slices.IndexFunc(rec.Verdicts, func(v record.Verdict) bool { return v.Assertion+" "+v.Check == tc.wantFailing })
				if i < 0 || rec.Verdicts[i].Pass || rec.Verdicts[i].Source != record.SourceScript || !strings.Contains(rec.Verdicts[i].Error, tc.wantError) {
					t.Errorf("no failing script verdict %q saying %q: %+v", tc.wantFailing, tc.wantError, rec.Verdicts)
				}
			}
			if got := strings.Join(rec.Problems, "\n"); !strings.Contains(got, tc.wantProblem) || tc.wantProblem == "" && strings.Contains(got, "k6 disagrees") {
				t.Errorf("problems %q, want %q", got, tc.wantProblem)
			}
			if n := len(rec.ScriptChecks); n != 2 {
				t.Errorf("the record keeps %d script checks, want 2: %+v", n, rec.ScriptChecks)
			}
		})
	}
}
