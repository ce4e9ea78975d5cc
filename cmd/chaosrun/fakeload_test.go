package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/testbed"
)

// fakeLoadScenario is the fakes' scenario, its bound (%s) to fill in.
var fakeLoadScenario = fmt.Sprintf(loadtest.ScenarioYAML, "fake-load", "%s")

// fakeState is a state whose run and gameday use a fake load and testbed.
func fakeState(t *testing.T, load *loadtest.Load, bed *loadtest.Testbed) (*State, *loadtest.Buffer, *loadtest.Buffer) {
	t.Helper()
	st, _, _ := testState(t)
	var so, se loadtest.Buffer
	st.Stdout, st.Stderr = &so, &se
	st.Dir = t.TempDir()
	st.NewLoad = load.Factory()
	st.NewTestbed = func() testbed.Testbed { return bed }
	return st, &so, &se
}

func tenRequests() [][]record.Series {
	return [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10}}}
}

// TestRunCommandWithFakeLoad runs whole `chaosrun run` command lines
// in-process on a fake load and testbed: each way a run ends gives its
// exit code, its message and a record on disk, and the testbed goes down.
func TestRunCommandWithFakeLoad(t *testing.T) {
	tests := []struct {
		name       string
		bound      string
		load       *loadtest.Load
		interrupt  bool
		wantCode   int
		wantStderr string
		incomplete bool
	}{
		{"holds", "5", &loadtest.Load{Windows: tenRequests(), RunFor: 10 * time.Millisecond}, false, exitOK, "run record:", false},
		{"breach", "50", &loadtest.Load{Windows: tenRequests(), RunFor: 10 * time.Millisecond}, false, exitBreach, "fake-load breached: some-load", false},
		{"load dies", "5", &loadtest.Load{Windows: tenRequests(), RunFor: 10 * time.Millisecond, Err: errors.New("k6: exited with code 107")}, false, exitRunError, "exited with code 107", true},
		{"interrupted", "5", &loadtest.Load{Windows: tenRequests(), RunFor: time.Hour}, true, exitInterrupted, "interrupted; the record is marked incomplete", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bed := &loadtest.Testbed{}
			st, _, se := fakeState(t, tc.load, bed)
			file := writeScenario(t, strings.Replace(fakeLoadScenario, "%s", tc.bound, 1))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.interrupt {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			code := Execute(ctx, st, []string{"run", "--quiet", file})
			if code != tc.wantCode || !strings.Contains(se.String(), tc.wantStderr) {
				t.Fatalf("exit %d, want %d; stderr (want %q):\n%s", code, tc.wantCode, tc.wantStderr, se)
			}
			rec := readRecord(t, filepath.Join(st.Dir, "chaosrun-results", "fake-load", "run.json"))
			if rec.Incomplete != tc.incomplete || rec.Testbed != "fake" {
				t.Errorf("record: incomplete %v (want %v), testbed %q; problems %q", rec.Incomplete, tc.incomplete, rec.Testbed, rec.Problems)
			}
			for _, f := range []string{"summary.md", "report.html", "junit.xml"} {
				if _, err := os.Stat(filepath.Join(st.Dir, "chaosrun-results", "fake-load", f)); err != nil {
					t.Error(err)
				}
			}
			if bed.Downs() != 1 {
				t.Errorf("testbed torn down %d times", bed.Downs())
			}
		})
	}
}

// TestGamedayCommandWithFakeLoad runs `chaosrun gameday` in-process on a
// fake load: the page's Stop ends it with exit 0 and the game day's record.
func TestGamedayCommandWithFakeLoad(t *testing.T) {
	bed := &loadtest.Testbed{}
	st, so, se := fakeState(t, &loadtest.Load{Windows: tenRequests(), RunFor: time.Hour}, bed)
	file := writeScenario(t, strings.Replace(fakeLoadScenario, "%s", "5", 1))
	done := make(chan int, 1)
	go func() { done <- Execute(context.Background(), st, []string{"gameday", file, "--load-shards", "2"}) }()
	url := waitPage(t, so, se)
	resp, err := http.Post(url+"api/stop", "application/json", strings.NewReader(`{"by":"tester"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d; stderr:\n%s", code, se)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the game day did not end after Stop")
	}
	rec := readRecord(t, filepath.Join(st.Dir, "chaosrun-results", "fake-load-gameday", "run.json"))
	if rec.Incomplete || len(rec.Verdicts) != 1 || !rec.Verdicts[0].Pass {
		t.Errorf("record: incomplete %v, verdicts %+v, problems %q", rec.Incomplete, rec.Verdicts, rec.Problems)
	}
	if bed.Downs() != 1 {
		t.Errorf("testbed torn down %d times", bed.Downs())
	}
}

// waitPage waits for an in-process game day's page URL on so.
func waitPage(t *testing.T, so, se *loadtest.Buffer) string {
	t.Helper()
	page := regexp.MustCompile(`game day page: (\S+)`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := page.FindStringSubmatch(so.String()); m != nil {
			return m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no page URL; stderr:\n%s", se)
	return ""
}

const abortScenario = `version: 1
name: abort-early
services:
  ledger: {run: ledger}
workload:
  script: bank.js
  duration: 60s
  targets: [ledger]
assertions:
  - name: fast-enough
    metric: http_req_duration
    checks:
      - {threshold: "p(99) < 100ms", abortOnFail: true, delayAbortEval: 5s}
`

// TestRunAbortOnFailCommand: `chaosrun run` of a 60 s scenario whose
// abortOnFail check fails at 10 s (a fake second every 20ms) stops long
// before the end, exits 1 and says why in every report format.
func TestRunAbortOnFailCommand(t *testing.T) {
	var secs [][]record.Series
	for i := range 60 {
		v := 10.0
		if i >= 10 {
			v = 500
		}
		secs = append(secs, []record.Series{{Metric: "http_req_duration", Kind: record.Trend, Count: 100, Sum: 100 * v, Min: v, Max: v, Hist: constHist(t, 100, v)}})
	}
	load := &loadtest.Load{Windows: secs, Every: 20 * time.Millisecond}
	st, _, se := fakeState(t, load, &loadtest.Testbed{})
	code := Execute(context.Background(), st, []string{"run", "--quiet", writeScenario(t, abortScenario)})
	if code != exitBreach || !strings.Contains(se.String(), `abort-early aborted: abortOnFail: fast-enough: "p(99) < 100ms" failed`) {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitBreach, se)
	}
	if load.Sent() > 10+5+3 {
		t.Errorf("load stopped after %d of 60 seconds", load.Sent())
	}
	dir := filepath.Join(st.Dir, "chaosrun-results", "abort-early")
	for _, f := range []string{"run.json", "summary.md", "report.html", "junit.xml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(b), "abortOnFail: fast-enough") {
			t.Errorf("%s does not say why the run was aborted (%v)", f, err)
		}
	}
}

// constHist is the encoded histogram of n samples of v (k6 units).
func constHist(t *testing.T, n int, v float64) string {
	t.Helper()
	h := record.NewHist()
	if err := h.RecordValues(int64(v*1000), int64(n)); err != nil {
		t.Fatal(err)
	}
	s, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
