package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// peakRSSEnv names the file the test binary, started as a wrapper, writes
// its child's peak RSS (bytes) to.
const peakRSSEnv = "CHAOSRUN_TEST_PEAK_RSS_FILE"

// TestMain runs the tests, or, started with peakRSSEnv set, runs its
// arguments as a child and reports the child's own peak RSS.
//
// Linux counts in a child's peak RSS the memory of the process it was
// started from when that process shares its memory until exec, as Go's
// os/exec does: a test binary grown to 374 MB by earlier tests made every
// child it started "use" 374 MB. A small wrapper in between keeps the
// figure the child's own.
func TestMain(m *testing.M) {
	if out := os.Getenv(peakRSSEnv); out != "" {
		os.Exit(runMeasured(out, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runMeasured runs args with this process's standard files, writes the
// child's peak RSS to out and returns the child's exit code.
func runMeasured(out string, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "peak RSS wrapper: no command")
		return 125
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = withoutEnv(os.Environ(), peakRSSEnv)
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "peak RSS wrapper:", err)
		return 125
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	if err := os.WriteFile(out, []byte(strconv.FormatInt(rss, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "peak RSS wrapper:", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

func withoutEnv(env []string, name string) []string {
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			kept = append(kept, kv)
		}
	}
	return kept
}

// measurePeakRSS makes cmd run under the wrapper; call the returned
// function after cmd has ended for the child's own peak RSS in bytes.
func measurePeakRSS(t *testing.T, cmd *exec.Cmd) func() int64 {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir() + "/peak-rss"
	cmd.Args = append([]string{self}, append([]string{cmd.Path}, cmd.Args[1:]...)...)
	cmd.Path = self
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, peakRSSEnv+"="+out)
	return func() int64 {
		t.Helper()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("peak RSS of %s: %v", cmd.Args[1], err)
		}
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			t.Fatalf("peak RSS of %s: %v", cmd.Args[1], err)
		}
		return n
	}
}
