package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// countsByAPI sums http_reqs per api tag over the whole record.
func countsByAPI(r *record.Run) map[string]float64 {
	out := map[string]float64{}
	for _, w := range r.Windows {
		for _, s := range w.Series {
			if s.Metric == "http_reqs" {
				out[s.Tags["api"]] += s.Sum
			}
		}
	}
	return out
}

// TestLoadShardsMergeExactly runs the same load as one process and as two
// (every other arrival each) on the native engine: the merged counts are
// equal and the verdicts the same. The merge itself is exact: see
// record's TestMergeWindowsIsExact. k6's shards (execution segments) are
// run and judged by TestJudgeK6E2E, which compares their verdicts with
// run --load-shards 2's; running the same claim here again on k6 cost
// about a minute of CI.
func TestLoadShardsMergeExactly(t *testing.T) {
	skipShort(t)
	shardsMerge(t, nativeVault)
}

func shardsMerge(t *testing.T, on slowVault) {
	var counts []map[string]float64
	for _, n := range []string{"1", "2"} {
		res := runChaosrun(t, 5*time.Minute, append(append([]string{"--quiet", "--load-shards", n}, shortRun...), on.file)...)
		if res.code != exitOK {
			t.Fatalf("--load-shards %s: exit %d\n%s\n%s", n, res.code, res.stdout, res.stderr)
		}
		r := readRecord(t, filepath.Join(res.outDir, on.name, "run.json"))
		c := countsByAPI(r)
		t.Logf("--load-shards %s: requests by api %v; verdicts %+v", n, c, r.Verdicts)
		counts = append(counts, c)
		assertNothingLeft(t, r)
	}
	if len(counts[0]) == 0 {
		t.Fatal("no http_reqs in the record")
	}
	// Constant-arrival-rate sends rate × duration iterations, plus (k6)
	// one when an arrival falls exactly on the end; the rest must match
	// exactly.
	slack := 0.0
	if on == k6Vault {
		slack = 1
	}
	for api, n := range counts[0] {
		if d := counts[1][api] - n; d < -slack || d > slack {
			t.Errorf("%s: %v requests with one shard, %v with two", api, n, counts[1][api])
		}
	}
}

// TestReliabilityKilledShardFailsTheRun: a run never passes on part of its load.
func TestReliabilityKilledShardFailsTheRun(t *testing.T) {
	robustEndToEnd(t)
	outDir := t.TempDir()
	bg := startChaosrun(t, append(append([]string{"run", "--quiet", "--load-shards", "2", "--out-dir", outDir}, shortRun...), nativeVault.file)...)
	victim := waitForChild(t, bg.cmd.Process.Pid, "--shard 1/2", 5*time.Minute)
	time.Sleep(5 * time.Second)
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	bg.wait(t, 60*time.Second)
	stderr := bg.stderr.String()
	if code := bg.cmd.ProcessState.ExitCode(); code != exitRunError {
		t.Fatalf("exit code %d, want %d\n%s", code, exitRunError, stderr)
	}
	if !strings.Contains(stderr, "native shard 2 of 2") {
		t.Errorf("message does not name the shard:\n%s", stderr)
	}
	r := readRecord(t, filepath.Join(outDir, "bank-slow-vault", "run.json"))
	if !r.Incomplete {
		t.Error("record not marked incomplete")
	}
	assertNothingLeft(t, r)
}
