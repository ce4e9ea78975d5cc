package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// The end-to-end tests run the real binary on the local testbed: real
// child processes, real Toxiproxy, real k6 with the extension.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// chaosrunBinary builds the chaosrun binary once per test process.
func chaosrunBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chaosrun-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "chaosrun")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("build chaosrun: %v", buildErr)
	}
	return binPath
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

type cmdResult struct {
	code           int
	stdout, stderr string
	outDir         string
	pid            int // the harness's, whose Docker objects carry it
}

func runChaosrun(t *testing.T, timeout time.Duration, args ...string) cmdResult {
	t.Helper()
	return runChaosrunEnv(t, timeout, nil, args...)
}

// runChaosrunEnv is runChaosrun with env (KEY=VALUE) added to the
// environment.
func runChaosrunEnv(t *testing.T, timeout time.Duration, env []string, args ...string) cmdResult {
	t.Helper()
	outDir := t.TempDir()
	cmd := exec.Command(chaosrunBinary(t), append([]string{"run", "--out-dir", outDir}, args...)...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("chaosrun %v did not finish within %s\nstderr:\n%s", args, timeout, se.String())
	}
	return cmdResult{code: cmd.ProcessState.ExitCode(), stdout: so.String(), stderr: se.String(), outDir: outDir, pid: cmd.Process.Pid}
}

// readRecord reads a run record a test's run wrote, checked against the
// run record's schema (chaosrun schema --record).
func readRecord(t *testing.T, path string) *record.Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("run record: %v", err)
	}
	if err := checkSchema(recordSchema, b); err != nil {
		t.Fatalf("run record %s does not match its schema: %v", path, err)
	}
	var r record.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("run record: %v", err)
	}
	return &r
}

// assertNoDataLost checks that every service's end check (money conserved,
// nothing applied twice) held, whichever arm ran: a protection switched off
// may cost latency or errors, never money.
func assertNoDataLost(t *testing.T, r *record.Run) {
	t.Helper()
	for _, c := range r.EndChecks {
		if !c.OK {
			t.Errorf("end check %s on %s failed: %s %s", c.Name, c.Service, c.Detail, c.Error)
		}
	}
}

// assertNothingLeft checks that no process of the run is alive — the
// services, Toxiproxy and the load's (k6, chaosrun load) — and none of its
// addresses (services, Toxiproxy, proxies) accepts connections.
func assertNothingLeft(t *testing.T, r *record.Run) {
	t.Helper()
	if len(r.Topology) == 0 {
		t.Fatal("run record lists no topology: cannot check cleanup")
	}
	if len(r.LoadParts) == 0 && !r.Incomplete {
		t.Error("run record lists no load process: cannot check that the load ended")
	}
	for _, p := range r.LoadParts {
		if p.PID <= 0 {
			t.Errorf("load part %s has no PID in the record", p.Name)
		} else if err := syscall.Kill(p.PID, 0); err == nil || !errors.Is(err, syscall.ESRCH) {
			t.Errorf("load process %s (pid %d) still alive after the run", p.Name, p.PID)
		}
	}
	for _, s := range r.Topology {
		if s.PID > 0 {
			if err := syscall.Kill(s.PID, 0); err == nil || !errors.Is(err, syscall.ESRCH) {
				t.Errorf("%s (pid %d) still alive after the run", s.Name, s.PID)
			}
		}
		addrs := []string{s.Address}
		for _, a := range s.Proxies {
			addrs = append(addrs, a)
		}
		for _, a := range addrs {
			if c, err := net.DialTimeout("tcp", a, 300*time.Millisecond); err == nil {
				c.Close()
				t.Errorf("%s: %s still listens after the run", s.Name, a)
			}
		}
	}
}

func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run (real load, Toxiproxy and targets); not run with -short")
	}
}

// robustEndToEnd is skipShort for an end-to-end test judged only on exit
// codes, messages, records and cleanup, never on latency: it runs beside
// the other such tests (t.Parallel), which Go starts once the serial
// tests, the timing-sensitive A/B pairs among them, have ended.
func robustEndToEnd(t *testing.T) {
	t.Helper()
	skipShort(t)
	t.Parallel()
}

// TestSlowVaultBulkheadsAB runs the README's main job (native, with an
// empty k6 cache: the default path builds no k6) on and off, and both ways
// on k6, each with the short profile (19 s, the fault from 8 s for 8 s).
func TestSlowVaultBulkheadsAB(t *testing.T) {
	skipShort(t)
	cases := []struct {
		name       string
		on         slowVault
		args       []string
		wantCode   int
		minWindows int
	}{
		{"bulkheads-on-holds", nativeVault, shortRun, exitOK, 16},
		{"bulkheads-off-breaches", nativeVault, append([]string{"--set", "bank.bulkheads=off"}, shortRun...), exitBreach, 16},
		{"k6/bulkheads-on-holds", k6Vault, shortRun, exitOK, 16},
		{"k6/bulkheads-off-breaches", k6Vault, append([]string{"--set", "bank.bulkheads=off"}, shortRun...), exitBreach, 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"--quiet"}, tc.args...), tc.on.file)
			var env []string
			cache := t.TempDir()
			if tc.on == nativeVault {
				env = []string{"CHAOSRUN_CACHE=" + cache}
			}
			res := runChaosrunEnv(t, 6*time.Minute, env, args...)
			t.Logf("stdout:\n%s", res.stdout)
			if res.code != tc.wantCode {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", res.code, tc.wantCode, res.stderr)
			}
			r := readRecord(t, filepath.Join(res.outDir, tc.on.name, "run.json"))
			engine := map[slowVault]string{nativeVault: "native", k6Vault: "k6"}[tc.on]
			if r.Versions["engine"] != engine {
				t.Errorf("record's versions %v do not name engine %s", r.Versions, engine)
			}
			if ents, _ := os.ReadDir(cache); len(ents) > 0 {
				t.Errorf("a native run left %v in its empty k6 cache: it must build no k6", ents)
			}
			if r.Incomplete {
				t.Fatalf("record incomplete: %v", r.Problems)
			}
			if tc.wantCode == exitBreach && !strings.Contains(res.stderr, "check-p99-isolated") {
				t.Errorf("breach message does not name the assertion:\n%s", res.stderr)
			}
			// The fault's recorded start is within 100 ms of its schedule.
			applied := 0
			for _, f := range r.Faults {
				skew := f.Actual.Sub(f.Scheduled)
				if skew < 0 || skew > 100*time.Millisecond {
					t.Errorf("fault %s %s %v after its scheduled time (want ≤ 100ms)", f.Fault, f.Action, skew)
				}
				if f.Action == record.Applied {
					applied++
				}
			}
			if applied != 1 {
				t.Errorf("fault applied %d times, want 1: %+v", applied, r.Faults)
			}
			if len(r.Windows) < tc.minWindows {
				t.Errorf("%d results windows, want at least %d", len(r.Windows), tc.minWindows)
			}
			if len(r.Scrapes) == 0 {
				t.Error("no /metrics scrapes in the run record")
			}
			if _, err := os.Stat(filepath.Join(res.outDir, tc.on.name, "summary.md")); err != nil {
				t.Error(err)
			}
			assertNoDataLost(t, r)
			assertNothingLeft(t, r)
		})
	}
}

func TestReliabilityInterruptedRunCleansUp(t *testing.T) {
	robustEndToEnd(t)
	outDir := t.TempDir()
	bg := startChaosrun(t, "run", "--quiet", "--out-dir", outDir, nativeVault.file)
	// Ctrl-C mid-fault: 25 s after load started (the fault runs 20–40 s).
	waitForChild(t, bg.cmd.Process.Pid, nativeVault.child, 5*time.Minute)
	time.Sleep(25 * time.Second)
	bg.cmd.Process.Signal(os.Interrupt)
	bg.wait(t, 45*time.Second)
	if code := bg.cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit code %d after SIGINT, want %d\n%s", code, exitInterrupted, bg.stderr.String())
	}
	r := readRecord(t, filepath.Join(outDir, "bank-slow-vault", "run.json"))
	if !r.Incomplete {
		t.Error("an interrupted run's record is not marked incomplete")
	}
	reverted := false
	for _, f := range r.Faults {
		if f.Action == record.Reverted {
			reverted = true
		}
	}
	if !reverted {
		t.Errorf("the fault active at the interrupt was not reverted: %+v", r.Faults)
	}
	assertNothingLeft(t, r)
}

// background is a chaosrun process started by a test.
type background struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

// startChaosrun starts the binary in the repository root; the test's
// cleanup kills it if the test did not wait for it.
func startChaosrun(t *testing.T, args ...string) *background {
	t.Helper()
	return startChaosrunWith(t, nil, args...)
}

// startChaosrunWith is startChaosrun with setup, when set, changing the
// command before it starts.
func startChaosrunWith(t *testing.T, setup func(*exec.Cmd), args ...string) *background {
	t.Helper()
	return startIn(t, exec.Command(chaosrunBinary(t), args...), setup)
}

// startIn starts cmd in the repository root, setup (when set) changing it
// first; the test's cleanup kills it if the test did not wait for it.
func startIn(t *testing.T, cmd *exec.Cmd, setup func(*exec.Cmd)) *background {
	t.Helper()
	cmd.Dir = repoRoot(t)
	bg := &background{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = bg.stderr
	if setup != nil {
		setup(cmd)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { bg.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-bg.done
		}
	})
	return bg
}

// wait waits for the process to end, failing the test after timeout.
func (bg *background) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-bg.done:
	case <-time.After(timeout):
		bg.cmd.Process.Kill()
		<-bg.done
		t.Fatalf("chaosrun did not end within %s\n%s", timeout, bg.stderr.String())
	}
}
