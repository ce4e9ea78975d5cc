package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/record"
)

// grpcExampleServer starts grpc-go's reflection example (Greeter.SayHello
// and Echo.UnaryEcho on one port, no chaosrun code in it) and returns its
// loopback address once it accepts connections.
func grpcExampleServer(t *testing.T) string {
	t.Helper()
	bin := testenv.RepoTool(t, "grpc-example-server", "grpc-example")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("grpc-example-server does not accept on %s within 10s", addr)
		}
	}
}

// grpcScenario writes testdata/grpc/per-method.yaml, pointed at addr, and
// the example's .proto files (the copies the native engine's tests use)
// into a folder of their own, as a team's repository holds them.
func grpcScenario(t *testing.T, addr string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/grpc/per-method.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "grpc-per-method.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(string(src), "ADDR", addr, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "protos"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"helloworld.proto", "echo.proto"} {
		b, err := os.ReadFile(filepath.Join("../../workloads/native/testdata/protos", p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "protos", p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

// grpcCalls counts a run's grpc_req_duration samples of one method by
// status code.
func grpcCalls(r *record.Run, method string) map[string]int64 {
	codes := map[string]int64{}
	for _, w := range r.Windows {
		for _, s := range w.Series {
			if s.Metric == "grpc_req_duration" && s.Tags["method"] == method {
				codes[s.Tags["status"]] += s.Count
			}
		}
	}
	return codes
}

// TestGRPCServerFaultedPerMethod: a gRPC server chaosrun did not write is
// loaded on two methods (native engine, .proto files as its repository
// holds them) and a grpc_error fault matched to one method answers that
// method only. A/B: the fault on Greeter breaches hello-available and
// leaves Echo's checks and p99 green; moved to Echo (--set its match) the
// verdicts swap. The record counts each method's calls per status.
func TestGRPCServerFaultedPerMethod(t *testing.T) {
	skipShort(t)
	t.Parallel()
	file := grpcScenario(t, grpcExampleServer(t))
	const hello, echo = "/helloworld.Greeter/SayHello", "/grpc.examples.echo.Echo/UnaryEcho"
	for _, tc := range []struct {
		name            string
		sets            []string
		faulted, spared string
		breach, holds   string
	}{
		{"greeter", nil, hello, echo, "hello-available", "echo-available"},
		{"echo", []string{"--set", "faults.greeter-unavailable.match.path=/grpc.examples.echo.Echo/*"}, echo, hello, "echo-available", "hello-available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runChaosrun(t, 2*time.Minute, append(append([]string{"--quiet"}, tc.sets...), file)...)
			t.Logf("stdout:\n%s", res.stdout)
			if res.code != exitBreach {
				t.Fatalf("exit %d, want %d (breach)\nstderr:\n%s", res.code, exitBreach, res.stderr)
			}
			for name, want := range map[string]string{tc.breach: "FAIL", tc.holds: "pass"} {
				if !containsVerdict(res.stdout, want, name) {
					t.Errorf("%s: want %s\n%s", name, want, res.stdout)
				}
			}
			r := readRecord(t, filepath.Join(res.outDir, "grpc-per-method", "run.json"))
			if r.Incomplete {
				t.Fatalf("record incomplete: %v", r.Problems)
			}
			faulted, spared := grpcCalls(r, tc.faulted), grpcCalls(r, tc.spared)
			t.Logf("%s by status %v; %s by status %v", tc.faulted, faulted, tc.spared, spared)
			if faulted["14"] < 200 || faulted["0"] < 200 {
				t.Errorf("%s: %d UNAVAILABLE and %d OK, want both ≥ 200 (6 s of fault in 14 s at 50/s)", tc.faulted, faulted["14"], faulted["0"])
			}
			if len(spared) != 1 || spared["0"] < 600 {
				t.Errorf("%s: statuses %v, want only OK, ≥ 600 calls", tc.spared, spared)
			}
			assertNothingLeft(t, r)
		})
	}
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
