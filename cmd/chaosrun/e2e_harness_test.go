package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shortRun makes the slow-vault scenario last 19 s instead of 60 s: 8 s of
// baseline, the fault for 8 s, its 2 s of settle (the last window any of
// its assertions judges) and a second more.
var shortRun = []string{
	"--set", "workload.duration=19s",
	"--set", "faults.slow-vault.start=8s",
	"--set", "faults.slow-vault.duration=8s",
}

// slowVault is bank-slow-vault on one engine: its file, the folder of its
// record and what its load processes' command lines hold.
type slowVault struct{ file, name, child string }

var (
	nativeVault = slowVault{"scenarios/bank-slow-vault.yaml", "bank-slow-vault", " load --spec "}
	k6Vault     = slowVault{"scenarios/k6/bank-slow-vault.yaml", "bank-slow-vault-k6", " run --quiet"}
)

// descendants lists the PIDs below pid with their command lines, from /proc.
func descendants(pid int) map[int]string {
	parent := map[int]int{}
	cmdline := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+2:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cmdline[p] = strings.ReplaceAll(strings.TrimRight(string(cl), "\x00"), "\x00", " ")
	}
	out := map[int]string{}
	var walk func(int)
	walk = func(p int) {
		for c, pp := range parent {
			if pp == p {
				if _, seen := out[c]; !seen {
					out[c] = cmdline[c]
					walk(c)
				}
			}
		}
	}
	walk(pid)
	return out
}

// waitForChild waits until a descendant of pid has a command line
// containing substr and returns its PID.
func waitForChild(t *testing.T, pid int, substr string, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for c, cl := range descendants(pid) {
			if strings.Contains(cl, substr) {
				return c
			}
		}
		if !running(pid) {
			t.Fatalf("process %d ended before a child %q appeared", pid, substr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no child process %q of %d within %s", substr, pid, timeout)
	return 0
}

// running reports whether pid is alive and not a zombie waiting to be reaped.
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	return !bytes.HasPrefix(bytes.TrimSpace(rest), []byte("Z"))
}

// TestReliabilityHarnessSurvivesItsParts kills a part of the run mid-way and checks the
// outcome: a clear message, a non-zero exit, a record marked incomplete, and
// nothing left running or listening.
func TestReliabilityHarnessSurvivesItsParts(t *testing.T) {
	robustEndToEnd(t)
	cases := []struct {
		name string
		// victim is a command-line substring of the child to strike with
		// strike (SIGKILL if nil); empty means the harness itself gets
		// signal (or nothing, for the limit).
		victim   string
		strike   syscall.Signal
		signal   os.Signal
		extra    []string
		wantCode int
		wantMsg  string
		// on is the scenario's engine; default native.
		on *slowVault
	}{
		{name: "target dies", victim: "serve ledger", wantCode: exitRunError, wantMsg: "ledger (pid"},
		{name: "load process dies", victim: nativeVault.child, wantCode: exitRunError, wantMsg: "native: chaosrun load (pid"},
		{name: "k6 dies", victim: k6Vault.child, wantCode: exitRunError, wantMsg: "k6 (pid", on: &k6Vault},
		{name: "toxiproxy dies", victim: "serve toxiproxy", wantCode: exitRunError, wantMsg: "toxiproxy (pid"},
		{name: "SIGTERM", signal: syscall.SIGTERM, wantCode: exitInterrupted, wantMsg: "interrupted"},
		{name: "wall-clock limit", extra: []string{"--timeout", "12s"}, wantCode: exitRunError, wantMsg: "wall-clock limit of 12s"},
		// A stopped load process ignores SIGINT and never ends by itself:
		// the limit must still end the run (SIGKILL acts on a stopped
		// process).
		{name: "load process stops answering", victim: nativeVault.child, strike: syscall.SIGSTOP, extra: []string{"--timeout", "14s"}, wantCode: exitRunError, wantMsg: "wall-clock limit of 14s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			on := nativeVault
			if tc.on != nil {
				on = *tc.on
			}
			outDir := t.TempDir()
			args := append(append(append([]string{"run", "--quiet", "--out-dir", outDir}, shortRun...), tc.extra...), on.file)
			bg := startChaosrun(t, args...)
			// Strike once load runs.
			waitForChild(t, bg.cmd.Process.Pid, on.child, 5*time.Minute)
			time.Sleep(5 * time.Second)
			switch {
			case tc.victim != "":
				victim := waitForChild(t, bg.cmd.Process.Pid, tc.victim, time.Second)
				sig := tc.strike
				if sig == 0 {
					sig = syscall.SIGKILL
				}
				if err := syscall.Kill(victim, sig); err != nil {
					t.Fatal(err)
				}
			case tc.signal != nil:
				bg.cmd.Process.Signal(tc.signal)
			}
			bg.wait(t, 60*time.Second)
			stderr := bg.stderr.String()
			t.Logf("stderr:\n%s", stderr)
			if code := bg.cmd.ProcessState.ExitCode(); code != tc.wantCode {
				t.Fatalf("exit code %d, want %d", code, tc.wantCode)
			}
			if !strings.Contains(stderr, tc.wantMsg) {
				t.Errorf("message does not say %q", tc.wantMsg)
			}
			r := readRecord(t, filepath.Join(outDir, on.name, "run.json"))
			if !r.Incomplete {
				t.Error("record not marked incomplete")
			}
			if len(r.Windows) == 0 {
				t.Error("the partial record has no results windows")
			}
			if _, err := os.Stat(filepath.Join(outDir, on.name, "summary.md")); err != nil {
				t.Errorf("no partial summary: %v", err)
			}
			assertNothingLeft(t, r)
		})
	}
}

// TestReliabilityUnwritableOutDir: a run whose out dir cannot be created stops before
// it starts anything, with a message naming the folder.
func TestReliabilityUnwritableOutDir(t *testing.T) {
	skipShort(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bg := startChaosrun(t, "run", "--quiet", "--out-dir", filepath.Join(file, "out"), "scenarios/bank-slow-vault.yaml")
	bg.wait(t, 5*time.Minute)
	if code := bg.cmd.ProcessState.ExitCode(); code != exitRunError {
		t.Fatalf("exit code %d, want %d\n%s", code, exitRunError, bg.stderr.String())
	}
	if !strings.Contains(bg.stderr.String(), "a-file") {
		t.Errorf("message does not name the folder:\n%s", bg.stderr.String())
	}
}

// TestReliabilityKilledHarnessLeavesNothing SIGKILLs chaosrun itself: its children die
// with it (the kernel's parent-death signal), so nothing is left.
func TestReliabilityKilledHarnessLeavesNothing(t *testing.T) {
	skipShort(t)
	outDir := t.TempDir()
	bg := startChaosrun(t, append(append([]string{"run", "--quiet", "--out-dir", outDir, "--load-shards", "2"}, shortRun...), nativeVault.file)...)
	cmd := bg.cmd
	waitForChild(t, cmd.Process.Pid, nativeVault.child, 5*time.Minute)
	time.Sleep(3 * time.Second)
	kids := descendants(cmd.Process.Pid)
	if len(kids) < 6 {
		t.Fatalf("expected toxiproxy, 3 services and 2 load processes below chaosrun, found %v", kids)
	}
	cmd.Process.Kill()
	<-bg.done
	assertAllEnd(t, kids, 10*time.Second)
}

// assertAllEnd checks that every process of procs (PID → command line)
// ends within d of a killed harness; it kills those that do not.
func assertAllEnd(t *testing.T, procs map[int]string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for pid, cl := range procs {
		for running(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if running(pid) {
			t.Errorf("pid %d (%s) outlived the killed harness", pid, cl)
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck
		}
	}
}
