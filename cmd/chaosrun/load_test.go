package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/export/k8s"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/workloads/engine"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// loadScenarioYAML is a native workload of two streams to one service.
const loadScenarioYAML = `version: 1
name: load-cmd
seed: 5
services:
  api: {run: ledger}
  other: {run: vault}
workload:
  duration: %s
  streams:
    get:
      target: api
      path: /item/{k}
      tags: {api: Get}
      arrival: {rate: 100}
      keys:
        k: {kind: uniform, n: 10}
    put:
      target: api
      method: PUT
      path: /item
      tags: {api: Put}
      arrival: {rate: 20}
`

func okBackend(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(srv.Close)
	return srv
}

// receiver is a results receiver that wants a token.
func receiver(t *testing.T) *stream.Receiver {
	t.Helper()
	recv, err := stream.ListenWith(context.Background(), stream.Config{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { recv.Close() })
	return recv
}

// requests counts http_reqs of an api in what recv received.
func requests(recv *stream.Receiver, api string) int64 {
	var n int64
	for _, w := range recv.Summary().Windows {
		for _, s := range w.Series {
			if s.Metric == "http_reqs" && s.Tags["api"] == api {
				n += s.Count
			}
		}
	}
	return n
}

// TestLoadCommand runs whole `chaosrun load` command lines in-process
// against a real receiver and an HTTP server: a scenario shard and a spec
// shard run to their end with the end marker; an interrupt ends the
// stream too and exits 130.
func TestLoadCommand(t *testing.T) {
	srv := okBackend(t)
	file := writeScenario(t, strings.Replace(loadScenarioYAML, "%s", "1s", 1))
	long := writeScenario(t, strings.Replace(loadScenarioYAML, "%s", "60s", 1))
	tests := []struct {
		name      string
		args      []string
		interrupt time.Duration
		wantCode  int
		wantGet   [2]int64 // requests of api Get, bounds
	}{
		{"scenario, one shard", []string{file, "--target", "api=" + srv.URL}, 0, exitOK, [2]int64{100, 100}},
		{"scenario, shard 1 of 2", []string{"--shard", "1/2", file, "--target", "api=" + strings.TrimPrefix(srv.URL, "http://")}, 0, exitOK, [2]int64{50, 50}},
		{"interrupted", []string{long, "--target", "api=" + srv.URL}, 1200 * time.Millisecond, exitInterrupted, [2]int64{80, 150}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recv := receiver(t)
			st, _, se := testState(t)
			st.Env = map[string]string{resultsTokenEnv: "tok"}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.interrupt > 0 {
				time.AfterFunc(tt.interrupt, cancel)
			}
			code := Execute(ctx, st, append([]string{"load", "--results", "tcp://" + recv.DialAddr()}, tt.args...))
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s", code, tt.wantCode, se)
			}
			if !recv.WaitEnded(2 * time.Second) {
				t.Fatal("the stream has no end marker")
			}
			if n := requests(recv, "Get"); n < tt.wantGet[0] || n > tt.wantGet[1] {
				t.Errorf("%d Get requests, want %d to %d", n, tt.wantGet[0], tt.wantGet[1])
			}
		})
	}
}

// TestLoadCommandSpec runs the spec a run hands its load processes, into a
// results file, and checks that two shards of it add up to the whole.
func TestLoadCommandSpec(t *testing.T) {
	srv := okBackend(t)
	sc, err := (&State{FS: os.DirFS("/"), Dir: "/"}).scenarios().Load(context.Background(), writeScenario(t, strings.Replace(loadScenarioYAML, "%s", "1s", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, err = engine.Native(engine.NativeConfig{Executable: "unused"})(engine.LoadSpec{Scenario: sc, Seed: 9, Duration: time.Second, OutDir: dir,
		Addresses: map[string][]string{"api": {addr}, "other": {"127.0.0.1:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, engine.NativeSpecFile)
	var total int64
	for _, shard := range []string{"0/2", "1/2"} {
		out := filepath.Join(dir, "shard"+shard[:1]+".jsonl")
		prof := filepath.Join(dir, "cpu"+shard[:1]+".pprof")
		code, _, stderr := runCLI(t, "load", "--spec", spec, "--shard", shard, "--results", out, "--cpu-profile", prof)
		if code != exitOK {
			t.Fatalf("shard %s: exit %d\n%s", shard, code, stderr)
		}
		if raw, err := os.ReadFile(prof); err != nil || len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
			t.Fatalf("shard %s: --cpu-profile wrote no gzipped profile (%d bytes, %v)", shard, len(raw), err)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := stream.Decode(f)
		f.Close()
		if err != nil || !sum.Ended {
			t.Fatalf("shard %s: results file: ended %v, %v", shard, sum.Ended, err)
		}
		for _, w := range sum.Windows {
			for _, s := range w.Series {
				if s.Metric == "http_reqs" && s.Kind == record.Counter {
					total += s.Count
				}
			}
		}
	}
	if total != 120 {
		t.Errorf("two shards sent %d requests, want 120 (100/s + 20/s for 1 s)", total)
	}
}

// TestLoadCommandUsage: every bad command line exits 2 saying what is wrong.
func TestLoadCommandUsage(t *testing.T) {
	file := writeScenario(t, strings.Replace(loadScenarioYAML, "%s", "1s", 1))
	k6file := writeScenario(t, goodScenario)
	badSpec := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(badSpec, []byte("{\n  \"seed\": 1,\n  \"streams\": 3\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	const res = "--results=tcp://127.0.0.1:1"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no workload", []string{res}, "no workload"},
		{"spec and scenario", []string{res, "--spec", badSpec, file}, "not both"},
		{"spec with targets", []string{res, "--spec", badSpec, "--target", "api=h:1"}, "a --spec is complete"},
		{"bad spec", []string{res, "--spec", badSpec}, badSpec + ":3:15: field streams: a JSON number where []native.Stream belongs"},
		{"no results", []string{file, "--target", "api=h:1"}, "--results is required"},
		{"token in the URL", []string{file, "--target", "api=h:1", "--results", "tcp://h:1?token=x"}, "CHAOSRUN_RESULTS_TOKEN"},
		{"bad shard", []string{res, "--shard", "2/2", file, "--target", "api=h:1"}, "--shard: shard \"2/2\""},
		{"k6 scenario", []string{res, k6file}, "runs on engine k6"},
		{"missing target", []string{res, file}, "no URL given for service api (--target api=URL"},
		{"unknown target", []string{res, file, "--target", "api=h:1", "--target", "other=h:2"}, "--target other: the workload sends nothing to it (allowed: api)"},
		{"bad target", []string{res, file, "--target", "api=ftp://h:1"}, "want http(s)://HOST:PORT"},
		{"bad set", []string{res, file, "--target", "api=h:1", "--set", "workload.duration=forever"}, "workload.duration"},
		{"two scenarios", []string{res, file, file}, "accepts at most 1 arg"},
		{"profile nowhere", []string{res, file, "--target", "api=h:1", "--cpu-profile", "/nonexistent-dir/cpu.pprof"}, "--cpu-profile: open /nonexistent-dir/cpu.pprof"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"load"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 saying %q", code, stderr, tt.want)
			}
		})
	}
}

// TestNativeSpecBlastRadius: a target outside the blast radius is refused
// before any load process starts.
func TestNativeSpecBlastRadius(t *testing.T) {
	sc, err := scenario.Parse("s.yaml", []byte(strings.Replace(loadScenarioYAML, "%s", "1s", 1)), scenarioload.Checkers())
	if err == nil {
		err = scenario.Validate(sc, scenarioload.Checkers())
	}
	if err != nil {
		t.Fatal(err)
	}
	ls := engine.LoadSpec{Scenario: sc, Seed: 1, Duration: time.Second, OutDir: t.TempDir(),
		Addresses: map[string][]string{"api": {"10.1.2.3:80"}}}
	if _, err := engine.Native(engine.NativeConfig{})(ls); err == nil || !strings.Contains(err.Error(), "outside this run's blast radius") {
		t.Errorf("a target on 10.1.2.3: err = %v", err)
	}
	ls.Addresses["api"][0] = "127.0.0.1:80"
	if _, err := engine.Native(engine.NativeConfig{})(ls); err != nil {
		t.Errorf("a loopback target: %v", err)
	}
}

// TestExportedLoadPodRuns exports bank-slow-vault for Kubernetes and runs
// the command line of its load Job's Pod 1 of 2 in-process, as the Pod
// would with JOB_COMPLETION_INDEX=1: its scenario path, Services and
// results address swapped for a local copy, a local server and a
// receiver, and the load shortened to 3 s.
func TestExportedLoadPodRuns(t *testing.T) {
	const file = "../../scenarios/bank-slow-vault.yaml"
	code, stdout, stderr := runCLI(t, "export", "k8s", "--parallelism", "2", "--results-addr", "judge:7000", "--results-token", "tok", file)
	if code != exitOK {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	m, err := k8s.Decode([]byte(stdout))
	if err != nil || m.LoadJob == nil {
		t.Fatalf("export: load Job %v, %v", m != nil && m.LoadJob != nil, err)
	}
	srv, recv := okBackend(t), receiver(t)
	var args []string
	for _, a := range m.LoadJob.Spec.Template.Spec.Containers[0].Args {
		a = strings.NewReplacer("$(JOB_COMPLETION_INDEX)", "1", "/etc/chaosrun/scenario/scenario.yaml", file,
			"http://bank:8080", srv.URL, "tcp://judge:7000", "tcp://"+recv.DialAddr()).Replace(a)
		args = append(args, a)
	}
	st, _, se := testState(t)
	st.Env = map[string]string{resultsTokenEnv: "tok"}
	sets := []string{"--set", "workload.duration=3s", "--set", "faults.slow-vault.start=500ms", "--set", "faults.slow-vault.duration=2500ms"}
	if code := Execute(context.Background(), st, append(args, sets...)); code != exitOK {
		t.Fatalf("chaosrun %s: exit %d\n%s", strings.Join(args, " "), code, se)
	}
	if !recv.WaitEnded(2*time.Second) || requests(recv, "TransactCheck") != 150 || requests(recv, "TransactCash") != 60 {
		t.Errorf("shard 1 of 2 at 100/s and 40/s for 3 s: %d and %d requests (want 150, 60), ended %v",
			requests(recv, "TransactCheck"), requests(recv, "TransactCash"), recv.Ended())
	}
}
