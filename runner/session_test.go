package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/scenario"
)

// reqs is one second of a fake load: n requests.
func reqs(n int64) [][]record.Series {
	return [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: n, Sum: float64(n)}}}
}

func fakeScenario(check string) *scenario.Scenario {
	return &scenario.Scenario{Name: "fake", Order: []string{"svc"},
		Workload:   scenario.Workload{Duration: scenario.Duration(time.Second)},
		Assertions: []scenario.Assertion{{Name: "some-load", Metric: "http_reqs", Checks: scenario.Checks(check)}}}
}

// TestSessionPaths drives a run through every way it can end, with a fake
// load and a fake testbed, and checks the error, the record and teardown.
func TestSessionPaths(t *testing.T) {
	died := errors.New("service svc exited: signal: killed")
	tests := []struct {
		name   string
		check  string
		load   *loadtest.Load
		bed    *loadtest.Testbed
		cancel time.Duration // cancel the parent context after this long
		limit  time.Duration
		die    time.Duration // the testbed reports a dead service after this long

		wantErr        string // "" is no error
		wantProblem    string // a problem the record names besides wantErr
		wantInterrupt  bool
		wantIncomplete bool
		wantPass       bool
		wantLoadDown   bool // load was told to stop (rather than ending itself)
	}{
		{name: "holds", check: "count > 5", load: &loadtest.Load{Windows: reqs(10), RunFor: 20 * time.Millisecond},
			wantPass: true},
		{name: "breach", check: "count > 100", load: &loadtest.Load{Windows: reqs(10), RunFor: 20 * time.Millisecond}},
		{name: "load dies", check: "count > 5", load: &loadtest.Load{Windows: reqs(10), RunFor: 20 * time.Millisecond, Err: errors.New("k6: exited with code 107")},
			wantErr: "exited with code 107", wantIncomplete: true},
		{name: "load never starts", check: "count > 5", load: &loadtest.Load{NeverStart: true},
			wantErr: "did not start within", wantIncomplete: true, wantLoadDown: true},
		{name: "load fails to start", check: "count > 5", load: &loadtest.Load{StartErr: errors.New("results stream: address in use")},
			wantErr: "address in use", wantIncomplete: true},
		{name: "load ignores stop", check: "count > 5", load: &loadtest.Load{Windows: reqs(10), RunFor: time.Hour, IgnoreStop: true}, cancel: 30 * time.Millisecond,
			wantErr: "interrupted", wantProblem: "did not stop", wantInterrupt: true, wantIncomplete: true, wantLoadDown: true},
		{name: "testbed fails", check: "count > 5", load: &loadtest.Load{}, bed: &loadtest.Testbed{UpErr: errors.New("port 8080 taken")},
			wantErr: "port 8080 taken", wantIncomplete: true},
		{name: "service dies", check: "count > 5", load: &loadtest.Load{Windows: reqs(10), RunFor: time.Hour}, die: 30 * time.Millisecond,
			wantErr: "signal: killed", wantIncomplete: true, wantLoadDown: true},
		{name: "signal", check: "count > 5", load: &loadtest.Load{Windows: reqs(10), RunFor: time.Hour}, cancel: 30 * time.Millisecond,
			wantErr: "interrupted", wantInterrupt: true, wantIncomplete: true, wantLoadDown: true},
		{name: "wall-clock limit", check: "count > 5", load: &loadtest.Load{Windows: reqs(10), RunFor: time.Hour}, limit: 60 * time.Millisecond,
			wantErr: "wall-clock limit of 60ms", wantIncomplete: true, wantLoadDown: true},
		{name: "teardown fails", check: "count > 5", load: &loadtest.Load{Windows: reqs(10), RunFor: 20 * time.Millisecond},
			bed: &loadtest.Testbed{DownErr: errors.New("container left")}, wantErr: "teardown: container left", wantIncomplete: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bed := tc.bed
			if bed == nil {
				bed = &loadtest.Testbed{}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel > 0 {
				time.AfterFunc(tc.cancel, cancel)
			}
			if tc.die > 0 {
				bed.Die = make(chan error, 1)
				time.AfterFunc(tc.die, func() { bed.Die <- died })
			}
			limit := tc.limit
			if limit == 0 {
				limit = 10 * time.Second
			}
			t0 := time.Now()
			rec, err := runner.Run(ctx, runner.Options{Scenario: fakeScenario(tc.check), Testbed: bed, Load: tc.load.Factory(),
				Timeout: limit, Waits: runner.Waits{Start: 100 * time.Millisecond, Stop: 50 * time.Millisecond, Collect: 10 * time.Millisecond}})
			if el := time.Since(t0); el > 3*time.Second {
				t.Errorf("took %s", el)
			}
			defer rec.Close()
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error %v, want none", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if got := errors.Is(err, runner.ErrInterrupted); got != tc.wantInterrupt {
				t.Errorf("interrupted %v, want %v (%v)", got, tc.wantInterrupt, err)
			}
			if rec.Incomplete != tc.wantIncomplete {
				t.Errorf("incomplete %v, want %v; problems %q", rec.Incomplete, tc.wantIncomplete, rec.Problems)
			}
			if tc.wantErr != "" && !strings.Contains(strings.Join(rec.Problems, "\n"), tc.wantErr) {
				t.Errorf("problems %q do not name %q", rec.Problems, tc.wantErr)
			}
			if tc.wantProblem != "" && !strings.Contains(strings.Join(rec.Problems, "\n"), tc.wantProblem) {
				t.Errorf("problems %q do not name %q", rec.Problems, tc.wantProblem)
			}
			if bed.Downs() != 1 {
				t.Errorf("testbed torn down %d times, want 1", bed.Downs())
			}
			if tc.load.Started() != nil && !tc.load.Closed() {
				t.Error("load not closed")
			}
			stopped := tc.load.Stopped != nil && isClosed(tc.load.Stopped)
			if tc.wantLoadDown && !stopped {
				t.Error("load was not told to stop")
			}
			checkVerdicts(t, rec, tc.wantIncomplete, tc.wantPass)
		})
	}
}

func checkVerdicts(t *testing.T, rec *record.Run, incomplete, pass bool) {
	t.Helper()
	if incomplete {
		return // verdicts of an incomplete run are not a pass whatever they say
	}
	if len(rec.Verdicts) != 1 {
		t.Fatalf("verdicts %+v, want 1", rec.Verdicts)
	}
	if v := rec.Verdicts[0]; v.Pass != pass || v.Observed != 10 {
		t.Errorf("verdict %+v, want pass %v observing 10", v, pass)
	}
	if rec.Start.IsZero() || rec.End.Before(rec.Start) || rec.Timings.Load <= 0 {
		t.Errorf("start %v end %v load %v", rec.Start, rec.End, rec.Timings.Load)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestFailedScrapesAreRecorded: /metrics reads that fail are counted in the
// record's problems (assertions over scrapes see fewer readings), without
// marking it incomplete.
func TestFailedScrapesAreRecorded(t *testing.T) {
	load := &loadtest.Load{Windows: reqs(10), RunFor: 200 * time.Millisecond}
	bed := &loadtest.Testbed{} // its instance's address refuses connections
	s := runner.NewSession(runner.SessionOptions{Scenario: fakeScenario("count > 5"), Testbed: bed, Load: load.Factory(),
		Duration: time.Second, Limit: 10 * time.Second, ScrapeEvery: 20 * time.Millisecond,
		Waits: runner.Waits{Start: time.Second, Stop: 50 * time.Millisecond, Collect: 10 * time.Millisecond}})
	defer s.Close()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Await(nil) //nolint:errcheck // the record says
	s.Finish()
	rec := s.Record()
	defer rec.Close()
	problems := strings.Join(rec.Problems, "\n")
	if !strings.Contains(problems, "/metrics of svc: ") || !strings.Contains(problems, "scrapes failed (last: ") || rec.Incomplete {
		t.Errorf("incomplete %v, problems %q", rec.Incomplete, rec.Problems)
	}
}
