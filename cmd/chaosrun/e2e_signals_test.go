package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// briefRun is the slow-vault scenario cut to 8 s of load: enough to end a
// run mid-way, or to outlast a progress line (every 5 s off a terminal).
var briefRun = []string{
	"--set", "workload.duration=8s",
	"--set", "faults.slow-vault.start=2s",
	"--set", "faults.slow-vault.duration=4s",
}

// TestReliabilitySIGHUPTearsDown: a closed terminal (SIGHUP) or SIGQUIT
// ends a run like Ctrl-C does — teardown, a record marked incomplete,
// exit 130 — instead of killing the harness with nothing recorded.
// About 2.5 s per signal on the native engine.
func TestReliabilitySIGHUPTearsDown(t *testing.T) {
	robustEndToEnd(t)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			outDir := t.TempDir()
			bg := startChaosrun(t, append(append([]string{"run", "--quiet", "--out-dir", outDir}, briefRun...), "scenarios/bank-slow-vault.yaml")...)
			waitForChild(t, bg.cmd.Process.Pid, nativeVault.child, 5*time.Minute)
			time.Sleep(2 * time.Second)
			kids := descendants(bg.cmd.Process.Pid)
			if err := bg.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			bg.wait(t, 45*time.Second)
			if code := bg.cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Fatalf("exit code %d after %s, want %d\n%s", code, sig, exitInterrupted, bg.stderr.String())
			}
			r := readRecord(t, filepath.Join(outDir, "bank-slow-vault", "run.json"))
			if !r.Incomplete {
				t.Errorf("the record of a run ended by %s is not marked incomplete", sig)
			}
			assertNothingLeft(t, r)
			for pid, cl := range kids {
				if running(pid) {
					t.Errorf("pid %d (%s) outlived the run", pid, cl)
				}
			}
		})
	}
}

// TestReliabilityBrokenOutputPipe: `chaosrun run … 2>&1 | head` — the
// reader of stdout and stderr goes away mid-run. Writes that fail must
// neither kill the harness (SIGPIPE) nor stop the run: it runs to its
// end, tears down and writes its record. About 9 s on the native engine.
func TestReliabilityBrokenOutputPipe(t *testing.T) {
	robustEndToEnd(t)
	outDir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	bg := startChaosrunOut(t, w, append(append([]string{"run", "--out-dir", outDir}, briefRun...), "scenarios/bank-slow-vault.yaml")...)
	w.Close()
	// Read the first line, as head would, then go away.
	buf := make([]byte, 1)
	for buf[0] != '\n' {
		if _, err := r.Read(buf); err != nil {
			t.Fatalf("no first line: %v", err)
		}
	}
	waitForChild(t, bg.cmd.Process.Pid, nativeVault.child, 5*time.Minute)
	r.Close()
	bg.wait(t, time.Minute)
	st := bg.cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the harness died of %s when its output pipe closed", ws.Signal())
	}
	if code := st.ExitCode(); code != exitOK && code != exitBreach {
		t.Fatalf("exit code %d, want the run's verdict (0 or 1)", code)
	}
	rec := readRecord(t, filepath.Join(outDir, "bank-slow-vault", "run.json"))
	if rec.Incomplete {
		t.Errorf("a closed output pipe stopped the run: %v", rec.Problems)
	}
	if got := time.Duration(rec.Timings.Load); got < 7*time.Second {
		t.Errorf("load ran %s of 8s", got)
	}
	assertNothingLeft(t, rec)
}

// startChaosrunOut starts the binary with stdout and stderr on out (stderr
// is not captured then).
func startChaosrunOut(t *testing.T, out io.Writer, args ...string) *background {
	t.Helper()
	return startChaosrunWith(t, func(c *exec.Cmd) { c.Stdout, c.Stderr = out, out }, args...)
}
