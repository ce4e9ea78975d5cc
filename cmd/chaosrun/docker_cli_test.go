package main

import (
	"strings"
	"testing"
)

func TestDockerCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"clean", "--bogus"}, exitUsage},
		{[]string{"clean", "extra"}, exitUsage},
		{[]string{"doctor", "extra"}, exitUsage},
		{[]string{"images", "--list", "--prune"}, exitUsage},
		{[]string{"run", "--testbed", "vm", "scenarios/bank-slow-vault.yaml"}, exitUsage},
	} {
		if code, _, stderr := runCLI(t, tc.args...); code != tc.code {
			t.Errorf("chaosrun %v: exit %d, want %d\n%s", tc.args, code, tc.code, stderr)
		}
	}
}

// TestDockerInspectionCommands runs the read-only Docker commands against
// the real engine.
func TestDockerInspectionCommands(t *testing.T) {
	requireDockerEngine(t)
	code, stdout, stderr := runCLI(t, "images", "--list")
	if code != exitOK || !strings.HasPrefix(stdout, "IMAGE") {
		t.Errorf("images --list: exit %d\n%s%s", code, stdout, stderr)
	}
	_, stdout, _ = runCLI(t, "doctor", "--testbed", "docker")
	if !strings.Contains(stdout, "ok   docker") {
		t.Errorf("doctor does not find the reachable engine:\n%s", stdout)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "FIX") && !strings.Contains(stdout, "→") {
			t.Errorf("doctor names a problem without saying what to do:\n%s", stdout)
		}
	}
	if code, stdout, stderr := runCLI(t, "clean", "--dry-run"); code != exitOK {
		t.Errorf("clean --dry-run: exit %d\n%s%s", code, stdout, stderr)
	}
}
