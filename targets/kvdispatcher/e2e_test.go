package kvdispatcher

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestScenariosAB runs each kv scenario on the local testbed with the real
// chaosrun binary (its native load engine) and Toxiproxy, twice: with its
// protection on it must pass (exit 0), with it off it must breach (exit 1)
// on every assertion named. Each runs its short profile (23 s of load;
// a fault, and the flood, from 5 s for 8 s), as cmd/chaosrun's kvABs do on
// Docker. About 3 minutes; not run with -short.
func TestScenariosAB(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs (real load, Toxiproxy and targets); not run with -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "chaosrun")
	build := exec.Command("go", "build", "-o", bin, "./cmd/chaosrun")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build chaosrun: %v\n%s", err, out)
	}
	short := []string{"--set", "workload.duration=23s"}
	fault := func(name string) []string {
		return append(append([]string(nil), short...), "--set", "faults."+name+".start=5s", "--set", "faults."+name+".duration=8s")
	}
	flood := append(fault("flood"), "--set", "workload.streams.flood.arrival.start=5s", "--set", "workload.streams.flood.arrival.duration=8s")
	tests := []struct {
		scenario string
		short    []string // --set flags of its short profile
		off      string   // the --set that switches its protection off
		breached []string // the assertions that must fail with it off
	}{
		{"kv-scan-quota", short, "kvdispatcher.ru=off", []string{"point-readers-unharmed", "scanner-throttled"}},
		{"kv-slow-partition", fault("slow-shard0"), "kvdispatcher.shard-breakers=off", []string{"other-shards-available"}},
		{"kv-hot-key-flood", flood, "kvdispatcher.hotkeys=off", []string{"flood-reaches-storage-as-a-trickle", "other-keys-available"}},
		{"kv-tier-shedding", fault("slow-shard0"), "kvdispatcher.tiers=off", []string{"critical-tier-up", "critical-tier-p99-on-healthy-shards"}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			on := append(append([]string(nil), tt.short...), filepath.Join("scenarios", tt.scenario+".yaml"))
			code, out := runChaosrun(t, root, bin, on...)
			if code == 1 {
				// A latency-ratio scenario learns its baseline from the first
				// seconds; a stall of the shared machine there can tip the
				// protected arm. One rerun, logged; a broken protection
				// fails both.
				t.Logf("protection on breached once; running it again:\n%s", verdicts(out))
				code, out = runChaosrun(t, root, bin, on...)
			}
			if code != 0 {
				t.Fatalf("protection on: exit %d, want 0 (pass)\n%s", code, out)
			}
			t.Logf("on:\n%s", verdicts(out))
			code, out = runChaosrun(t, root, bin, append([]string{"--set", tt.off}, on...)...)
			if code != 1 {
				t.Fatalf("--set %s: exit %d, want 1 (breach)\n%s", tt.off, code, out)
			}
			for _, name := range tt.breached {
				if !regexp.MustCompile(`(?m)^FAIL\s+` + regexp.QuoteMeta(name) + `\s`).MatchString(out) {
					t.Errorf("--set %s: assertion %s did not fail\n%s", tt.off, name, out)
				}
			}
			t.Logf("off:\n%s", verdicts(out))
		})
	}
}

func runChaosrun(t *testing.T, root, bin string, args ...string) (int, string) {
	t.Helper()
	args = append([]string{"run", "--quiet", "--out-dir", t.TempDir()}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(4 * time.Minute):
		_ = cmd.Process.Signal(os.Interrupt)
		err = <-done
		t.Fatalf("chaosrun %v: still running after 4 min\n%s", args, out.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatalf("chaosrun %v: %v", args, err)
	}
	return 0, out.String()
}

// verdicts keeps the verdict table of a run's output.
func verdicts(out string) string {
	return strings.Join(regexp.MustCompile(`(?m)^(RESULT|pass|FAIL)\s.*$`).FindAllString(out, -1), "\n")
}
