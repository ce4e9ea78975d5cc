package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/judge"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// TestFaultApplyReportsToJudge: with --report-to, fault apply takes its
// schedule's zero from the judge's load start, sends each event to it and
// writes them to --events-out; with a wrong token it stops with the
// judge's reason.
func TestFaultApplyReportsToJudge(t *testing.T) {
	file := writeScenario(t, applyScenario)
	api := startToxiserver(t, "--listen", "127.0.0.1:0", "--token", "s3cret", "--proxy", "bank->ledger=127.0.0.1:0=127.0.0.1:9")
	const token = "judge-token"
	sc, err := NewState().scenarios().Load(context.Background(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[string]string{}
	ready := make(chan struct{})
	done := make(chan *record.Run, 1)
	go func() {
		rec, err := judge.Receive(context.Background(), sc, judge.ReceiveOptions{Listen: "127.0.0.1:0", Token: token, Shards: 1,
			Wait: 10 * time.Second, Margin: 5 * time.Second, SpillDir: t.TempDir(),
			OnListen: func(what, addr string) {
				if addrs[what] = addr; len(addrs) == 2 {
					close(ready)
				}
			}})
		if err != nil {
			t.Error(err)
		}
		done <- rec
	}()
	<-ready
	events := "http://" + addrs["fault events"]
	code, _, se := runCLI(t, "fault", "apply", "--toxiproxy", api, "--token", "s3cret", "--report-to", events, "--report-token", "nope", "--wait", "2s", file)
	if code != exitRunError || !strings.Contains(se, "no or wrong token") {
		t.Errorf("wrong token: exit %d, want %d naming the reason\n%s", code, exitRunError, se)
	}
	w, err := stream.Dial(context.Background(), stream.DialConfig{Addr: addrs["results streams"], Token: token}, stream.Hello{Extension: "test", Shard: "0/1"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "events.jsonl")
	code, so, se := runCLI(t, "fault", "apply", "--toxiproxy", api, "--token", "s3cret", "--report-to", events, "--report-token", token, "--events-out", out, file)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, so, se)
	}
	if err := w.End(0); err != nil {
		t.Fatal(err)
	}
	rec := <-done
	defer rec.Close()
	if len(rec.Faults) != 2 || rec.Faults[0].Action != record.Applied || rec.Faults[1].Action != record.Reverted {
		t.Fatalf("the judge's fault events: %+v", rec.Faults)
	}
	if at := rec.Faults[0].Actual.Sub(rec.Start); at < 100*time.Millisecond || at > 600*time.Millisecond {
		t.Errorf("applied %s after the judge's load start, want about 100ms (the schedule counts from there)", at)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := judge.ReadTimeline(out, b)
	if err != nil || len(tl.Faults) != 2 {
		t.Errorf("--events-out: %d events, %v", len(tl.Faults), err)
	}
}

// TestJudgeCommandLines: usage and input errors of chaosrun judge.
func TestJudgeCommandLines(t *testing.T) {
	file := writeScenario(t, applyScenario)
	dir := t.TempDir()
	badEvents := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(badEvents, []byte(`{"fault":"slow-ledger","action":"applied","actual":"2026-01-01T00:00:00Z"}`+"\n"+`{"fault":"slow-ledger","action":"exploded","actual":"2026-01-01T00:00:01Z"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.jsonl")
	if err := os.WriteFile(results, []byte(`{"type":"hello","version":1,"extension":"x"}`+"\n"+`{"type":"end","dropped":0}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badChecks := writeScenario(t, strings.Replace(applyScenario, "faults:", `assertions:
  - {name: a, metric: http_req_duration, checks: ["p99x < 1"]}
  - name: b
    metric: http_reqs
    checks:
      - {threshold: "count > 1", abortOnFail: "yes"}
faults:`, 1))
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown aggregation", []string{"judge", badChecks, results}, exitUsage, `found "p99x"`},
		{"malformed object form", []string{"judge", badChecks, results}, exitUsage, `abortOnFail: want true or false, got "yes"`},
		{"no results", []string{"judge", file}, exitUsage, "no results file"},
		{"files and --listen", []string{"judge", "--listen", "127.0.0.1:0", file, results}, exitUsage, "not both"},
		{"no shards", []string{"judge", "--listen", "127.0.0.1:0", "--shards", "0", file}, exitUsage, "--shards 0"},
		{"--faults while receiving", []string{"judge", "--listen", "127.0.0.1:0", "--faults", badEvents, file}, exitUsage, "go with results files"},
		{"bad events file", []string{"judge", "--out-dir", dir, file, results, "--faults", badEvents}, exitUsage, "events.jsonl:2: fault slow-ledger: action \"exploded\""},
		{"not a results file", []string{"judge", "--out-dir", dir, file, badEvents}, exitUsage, "is not a results file"},
		{"no window: incomplete", []string{"judge", "--out-dir", dir, file, results}, exitRunError, "hold no window"},
		{"a listen address without a port", []string{"judge", "--listen", "bad", file}, exitUsage, `--listen "bad" is not HOST:PORT`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, so, se := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(se, tc.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", code, tc.code, tc.want, so, se)
			}
		})
	}
}

// TestJudgeExports sends a judged run where run sends one: the receiver
// gets the series and the command says what it exported.
func TestJudgeExports(t *testing.T) {
	srv, posts := otlpReceiver(t)
	file := writeScenario(t, strings.Replace(applyScenario, "faults:", `assertions:
  - {name: some-load, metric: http_reqs, checks: ["count > 0"]}
faults:`, 1))
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	w, err := stream.Create(results, stream.Hello{Extension: "test"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for s := range 2 {
		win := record.Window{Start: start.Add(time.Duration(s) * time.Second), Series: []record.Series{
			{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10}}}
		if err := w.Window(win); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(0); err != nil {
		t.Fatal(err)
	}
	code, so, se := runCLI(t, "judge", "--out-dir", dir, "--export-otlp", srv.URL+"/v1/metrics", file, results)
	if code != exitOK || !strings.Contains(se, "exported tiny (run tiny@") {
		t.Fatalf("exit %d, want %d and an export line\nstdout: %s\nstderr: %s", code, exitOK, so, se)
	}
	if posts.Load() == 0 {
		t.Error("the OTLP receiver got nothing")
	}
	code, _, se = runCLI(t, "judge", "--out-dir", dir, "--export-prom-rw", "127.0.0.1:9090", file, results)
	if code != exitUsage || !strings.Contains(se, `prometheus remote write URL "127.0.0.1:9090"`) {
		t.Fatalf("a bad export URL: exit %d, want %d\nstderr: %s", code, exitUsage, se)
	}
}
