package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// k6Scenario writes a scenario running testdata/k6/SCRIPT against one
// ledger for duration, with more YAML (faults, workload.k6) appended to
// its workload; it returns the file.
func k6Scenario(t *testing.T, name, script, duration, more string) string {
	t.Helper()
	dir := scriptDir(t, script)
	yaml := fmt.Sprintf(`version: 1
name: %s
services:
  ledger: {run: ledger}
workload:
  script: %s
  duration: %s
  targets: [ledger]
%s
assertions:
  - name: some-load
    metric: http_reqs
    window: all
    checks: ["count > 10"]
`, name, script, duration, more)
	file := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// scriptDir is a new folder holding testdata/k6/SCRIPT, for a scenario to
// go beside it, as a user's would: a script must stay inside the
// scenario's folder or the bundled ones.
func scriptDir(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "k6", script))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, script), src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// scriptVerdicts are the record's verdicts of the script's thresholds.
func scriptVerdicts(r *record.Run) []record.Verdict {
	var out []record.Verdict
	for _, v := range r.Verdicts {
		if v.Source == record.SourceScript {
			out = append(out, v)
		}
	}
	return out
}

// TestStockK6Scripts runs stock k6 scripts unchanged as a scenario's
// workload, on the real k6: a script without options runs for the
// workload's duration (not one iteration), a script's stages, scenarios,
// tags and thresholds are its own, its thresholds are verdicts (also over
// two shards merged), k6's summary and the workload's outputs are kept.
func TestStockK6Scripts(t *testing.T) {
	skipShort(t)
	tests := []struct {
		name, script, duration, more string
		args                         []string
		thresholds                   int // verdicts of the script's thresholds
		files                        []string
		minLoad                      time.Duration
	}{
		{"no-options", "no-options.js", "5s", "", nil, 0, []string{"k6/summary.txt", "k6/summary.json"}, 4500 * time.Millisecond},
		{"stages-thresholds", "stages-thresholds.js", "6s",
			"  k6: {outputs: [csv=results.csv], flags: [--tag=team=chaos, \"--summary-trend-stats=avg,p(99)\"]}", nil, 4,
			[]string{"k6/summary.txt", "k6/summary.json", "k6/results.csv"}, 5 * time.Second},
		{"scenarios", "scenarios.js", "6s", "", nil, 3, []string{"k6/summary.txt"}, 5 * time.Second},
		{"stages-thresholds-two-shards", "stages-thresholds.js", "6s", "", []string{"--load-shards", "2"}, 4,
			[]string{"k6/shard-1/summary.txt", "k6/shard-2/summary.json"}, 5 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := k6Scenario(t, tc.name, tc.script, tc.duration, tc.more)
			res := runChaosrun(t, 3*time.Minute, append(append([]string{"--quiet"}, tc.args...), file)...)
			t.Logf("stdout:\n%s", res.stdout)
			if res.code != exitOK {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", res.code, exitOK, res.stderr)
			}
			dir := filepath.Join(res.outDir, tc.name)
			r := readRecord(t, filepath.Join(dir, "run.json"))
			if load := r.End.Sub(r.Start); load < tc.minLoad {
				t.Errorf("load ran %s, want at least %s", load, tc.minLoad)
			}
			sv := scriptVerdicts(r)
			if len(sv) != tc.thresholds {
				t.Errorf("%d verdicts of the script's thresholds, want %d: %+v", len(sv), tc.thresholds, sv)
			}
			for _, v := range sv {
				if !v.Pass || v.Samples == 0 || !strings.HasPrefix(v.Assertion, "threshold ") {
					t.Errorf("threshold verdict %+v", v)
				}
			}
			for _, f := range tc.files {
				if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
					t.Errorf("%s: %v", f, err)
				}
			}
			for _, p := range r.LoadParts {
				if p.ExitCode != 0 || p.ThresholdsCrossed {
					t.Errorf("load part %+v", p)
				}
			}
			assertNothingLeft(t, r)
		})
	}
}

// TestK6ThresholdBreach: a script whose threshold fails makes the run exit
// 1 and names the threshold in every report format; k6's own exit 99 is
// in the record.
func TestK6ThresholdBreach(t *testing.T) {
	skipShort(t)
	file := k6Scenario(t, "threshold-breach", "stages-thresholds.js", "6s", "  params: {P95_MS: \"0\"}")
	res := runChaosrun(t, 3*time.Minute, "--quiet", file)
	if res.code != exitBreach {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, exitBreach, res.stdout, res.stderr)
	}
	const name, check = "threshold http_req_duration", "p(95)<0"
	dir := filepath.Join(res.outDir, "threshold-breach")
	r := readRecord(t, filepath.Join(dir, "run.json"))
	found := false
	for _, v := range scriptVerdicts(r) {
		if v.Assertion == name && v.Check == check {
			found = !v.Pass && v.Error == "" && v.Samples > 0
		}
	}
	if !found {
		t.Errorf("no failing verdict %s %s: %+v", name, check, r.Verdicts)
	}
	if len(r.LoadParts) != 1 || r.LoadParts[0].ExitCode != 99 || !r.LoadParts[0].ThresholdsCrossed {
		t.Errorf("k6's own exit 99 is not in the record: %+v", r.LoadParts)
	}
	if !strings.Contains(res.stdout, name) || !strings.Contains(res.stdout, check) || !strings.Contains(res.stderr, "breached: "+name) {
		t.Errorf("the verdict table or the breach message does not name the threshold:\n%s\n%s", res.stdout, res.stderr)
	}
	for _, f := range []string{"run.json", "summary.md", "report.html", "junit.xml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if s := string(b); err != nil || !strings.Contains(s, name) || !strings.Contains(strings.ReplaceAll(s, "&lt;", "<"), check) &&
			!strings.Contains(s, `p(95)\u003c0`) {
			t.Errorf("%s does not name the threshold %s %s (%v)", f, name, check, err)
		}
	}
	assertNothingLeft(t, r)
}

// TestLoadEndedEarlyE2E: a script whose own options run one iteration
// ends long before the scenario's 10 s: the verdict names both durations
// and the fault planned after the end is reported as not applied.
func TestLoadEndedEarlyE2E(t *testing.T) {
	skipShort(t)
	file := k6Scenario(t, "one-iteration", "one-iteration.js", "10s",
		"faults:\n  - {name: pause-ledger, kind: host_pause, host: ledger, start: 5s, duration: 2s}")
	res := runChaosrun(t, 3*time.Minute, "--quiet", file)
	if res.code != exitBreach {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, exitBreach, res.stdout, res.stderr)
	}
	r := readRecord(t, filepath.Join(res.outDir, "one-iteration", "run.json"))
	var early *record.Verdict
	for i, v := range r.Verdicts {
		if v.Source == record.SourceRun {
			early = &r.Verdicts[i]
		}
	}
	if early == nil || early.Pass || early.Bound != 10 || early.Observed > 3 {
		t.Errorf("load-duration verdict %+v", early)
	}
	if len(r.NotApplied) != 1 || r.NotApplied[0].Fault != "pause-ledger" || len(r.Faults) != 0 {
		t.Errorf("not applied %+v, faults %+v", r.NotApplied, r.Faults)
	}
	for _, want := range []string{"ran for its planned duration", "10s", "not applied: fault pause-ledger"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the verdict table lacks %q:\n%s", want, res.stdout)
		}
	}
	assertNothingLeft(t, r)
}

// TestAbortOnFailE2E: a 60 s run whose abortOnFail check fails at 10 s
// (a 300 ms latency on bank->ledger from 10 s; delayAbortEval 5 s, passed
// by then) ends within 3 s of the failure: the load's recorded end and the
// command's exit, both counted from load's start, within 13 s. The fault
// is reverted, the later one not applied, the record marked aborted,
// exit 1, and nothing left running: services, Toxiproxy and k6.
func TestAbortOnFailE2E(t *testing.T) {
	skipShort(t)
	yaml := `version: 1
name: abort-e2e
services:
  ledger: {run: ledger}
  vault: {run: vault}
  bank: {run: bankservice, depends_on: [ledger, vault]}
workload:
  script: bank.js
  duration: 60s
  targets: [bank]
  params: {CHECK_RATE: "50", CASH_RATE: "0"}
faults:
  - {name: slow-ledger, kind: latency, edge: bank->ledger, start: 10s, duration: 40s, attributes: {latency: 300}}
  - {name: later, kind: latency, edge: bank->ledger, start: 55s, duration: 2s, attributes: {latency: 10}}
assertions:
  - name: check-fast
    metric: http_req_duration{api:TransactCheck}
    checks:
      - {threshold: "p(99) < 200ms", abortOnFail: true, delayAbortEval: 5s}
`
	file := filepath.Join(t.TempDir(), "abort-e2e.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runChaosrun(t, 3*time.Minute, "--quiet", file)
	exited := time.Now()
	if res.code != exitBreach || !strings.Contains(res.stderr, "abort-e2e aborted: abortOnFail: check-fast") {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, exitBreach, res.stdout, res.stderr)
	}
	r := readRecord(t, filepath.Join(res.outDir, "abort-e2e", "run.json"))
	applied, reverted := false, false
	var at time.Time
	for _, f := range r.Faults {
		switch f.Action {
		case record.Applied:
			applied, at = true, f.Actual
		case record.Reverted:
			reverted = true
		}
	}
	if !applied || !reverted {
		t.Fatalf("fault events %+v: want slow-ledger applied and reverted", r.Faults)
	}
	// The check fails as the fault comes; delayAbortEval (5 s into the
	// load) has passed by then, so it does not hold the abort back.
	const delayAbortEval = 5 * time.Second
	failed := max(at.Sub(r.Start), delayAbortEval)
	bound := failed + 3*time.Second
	loadEnd, exit := r.End.Sub(r.Start), exited.Sub(r.Start)
	t.Logf("check failed at %s of load; load ended at %s, the command exited at %s (bound %s); aborted: %s",
		failed.Round(time.Millisecond), loadEnd.Round(time.Millisecond), exit.Round(time.Millisecond), bound, r.Aborted)
	if loadEnd > bound || exit > bound {
		t.Errorf("load ended %s and the command exited %s into the load; want both within %s (the failure at %s + 3s)", loadEnd, exit, bound, failed)
	}
	if r.Aborted == "" || len(r.NotApplied) != 1 || r.NotApplied[0].Fault != "later" {
		t.Errorf("aborted %q, not applied %+v", r.Aborted, r.NotApplied)
	}
	assertNothingLeft(t, r)
}
