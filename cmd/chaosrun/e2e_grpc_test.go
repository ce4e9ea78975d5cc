package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/record"
)

// grpcScenario writes testdata/grpc/NAME.yaml, pointed at addr, beside
// the files it needs: the example's .proto files (the copies the native
// engine's tests use) as a team's repository holds them, and the k6
// script.
func grpcScenario(t *testing.T, addr, name string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "grpc", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(string(src), "ADDR", addr, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "protos"), 0o755); err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{
		"../../workloads/native/testdata/protos/helloworld.proto": "protos/helloworld.proto",
		"../../workloads/native/testdata/protos/echo.proto":       "protos/echo.proto",
		"testdata/grpc/greeter-k6.js":                             "greeter-k6.js",
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

// grpcCalls counts a run's grpc_req_duration samples of one method
// (/package.Service/Method, the name tag) by status code.
func grpcCalls(r *record.Run, method string) map[string]int64 {
	codes := map[string]int64{}
	for _, w := range r.Windows {
		for _, s := range w.Series {
			if s.Metric == "grpc_req_duration" && s.Tags["name"] == method {
				codes[s.Tags["status"]] += s.Count
			}
		}
	}
	return codes
}

// TestGRPCServerFaultedPerMethod: a gRPC server chaosrun did not write is
// loaded on two methods, by the native engine (.proto files as its
// repository holds them) and by a k6 script that uses k6/net/grpc, and a
// grpc_error fault matched to one method answers that method only. A/B on
// each engine: the fault on Greeter breaches hello-available and leaves
// Echo's checks green; moved to Echo (--set its match) the verdicts swap.
// The record counts each method's calls per status.
func TestGRPCServerFaultedPerMethod(t *testing.T) {
	skipShort(t)
	t.Parallel()
	addr := testenv.GRPCExampleServer(t)
	k6Binary(t) // built once, before the k6 runs start
	const hello, echo = "/helloworld.Greeter/SayHello", "/grpc.examples.echo.Echo/UnaryEcho"
	for _, engine := range []struct{ name, scenario string }{{"native", "per-method"}, {"k6", "per-method-k6"}} {
		file := grpcScenario(t, addr, engine.scenario)
		for _, tc := range []struct {
			name            string
			sets            []string
			faulted, spared string
			breach, holds   string
		}{
			{"greeter", nil, hello, echo, "hello-available", "echo-available"},
			{"echo", []string{"--set", "faults.greeter-unavailable.match.path=/grpc.examples.echo.Echo/*"}, echo, hello, "echo-available", "hello-available"},
		} {
			t.Run(engine.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				res := runChaosrun(t, 3*time.Minute, append(append([]string{"--quiet"}, tc.sets...), file)...)
				t.Logf("stdout:\n%s", res.stdout)
				if res.code != exitBreach {
					t.Fatalf("exit %d, want %d (breach)\nstderr:\n%s", res.code, exitBreach, res.stderr)
				}
				for name, want := range map[string]string{tc.breach: "FAIL", tc.holds: "pass"} {
					if !containsVerdict(res.stdout, want, name) {
						t.Errorf("%s: want %s\n%s", name, want, res.stdout)
					}
				}
				r := readRecord(t, filepath.Join(res.outDir, "grpc-"+engine.scenario, "run.json"))
				checkPerMethod(t, r, tc.faulted, tc.spared)
			})
		}
	}
}

// checkPerMethod checks a complete record in which a 6 s UNAVAILABLE fault
// hit about half of faulted's calls and none of spared's (50/s each, 14 s).
func checkPerMethod(t *testing.T, r *record.Run, faulted, spared string) {
	t.Helper()
	if r.Incomplete {
		t.Fatalf("record incomplete: %v", r.Problems)
	}
	f, s := grpcCalls(r, faulted), grpcCalls(r, spared)
	t.Logf("%s by status %v; %s by status %v", faulted, f, spared, s)
	if f["14"] < 200 || f["0"] < 200 {
		t.Errorf("%s: %d UNAVAILABLE and %d OK, want both ≥ 200 (6 s of fault in 14 s at 50/s)", faulted, f["14"], f["0"])
	}
	if len(s) != 1 || s["0"] < 600 {
		t.Errorf("%s: statuses %v, want only OK, ≥ 600 calls", spared, s)
	}
	assertNothingLeft(t, r)
}

// containsVerdict reports whether out has a verdict line "want name …".
func containsVerdict(out, want, name string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == want && f[1] == name {
			return true
		}
	}
	return false
}
