package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// TestJudgeK6E2E is TestJudgeE2E on k6. Files: a k6 run whose script's
// threshold is crossed keeps its stream; `chaosrun judge` over it with
// the run record gives the run's verdicts, the script's threshold among
// them, and its exit code. Receive: kv-hot-key-flood-k6 (scenarios/k6,
// shortened, firm checks: shortKVFlood) run with --load-shards 2, then
// judged receive-only over two `k6 run --execution-segment …` processes
// started as a k6-operator TestRun starts its runners, with `fault apply
// --report-to`: the same verdicts; a k6 process killed mid-run fails the
// verdict by its name.
func TestJudgeK6E2E(t *testing.T) {
	skipShort(t)
	t.Run("files", func(t *testing.T) {
		file := k6Scenario(t, "judge-k6", "stages-thresholds.js", "6s", "  params: {P95_MS: \"0\"}")
		res := runChaosrun(t, 3*time.Minute, "--quiet", file)
		if res.code != exitBreach {
			t.Fatalf("run: exit %d, want %d (the script's p(95)<0 is crossed)\n%s\n%s", res.code, exitBreach, res.stdout, res.stderr)
		}
		dir := filepath.Join(res.outDir, "judge-k6")
		ran := readRecord(t, filepath.Join(dir, "run.json"))
		if sv := scriptVerdicts(ran); len(sv) != 4 || len(ran.ScriptChecks) != 4 {
			t.Fatalf("run: %d verdicts of the script's 4 thresholds, %d kept in the record", len(sv), len(ran.ScriptChecks))
		}
		t.Logf("run: %v", outcomes(ran))
		judgeFiles(t, file, dir, ran, exitBreach)
	})

	file := shortKVFlood(t, "15s", "3s", "5s")
	res := runChaosrun(t, 3*time.Minute, "--quiet", "--load-shards", "2", file)
	if res.code != exitBreach {
		t.Fatalf("run --load-shards 2: exit %d, want %d (no-flood fails)\n%s\n%s", res.code, exitBreach, res.stdout, res.stderr)
	}
	want := outcomes(readRecord(t, filepath.Join(res.outDir, "kv-hot-key-flood-k6", "run.json")))
	t.Logf("run --load-shards 2: %v", want)
	if !slices.Equal(want, []string{"flood-reaches-storage-as-a-trickle sum < 80: pass", "other-keys-available rate < 0.01: pass",
		"recovered-after-flood p(99) < 1s: pass", "no-flood count < 10: FAIL"}) {
		t.Fatalf("run's verdicts %v: want three holding, no-flood failing", want)
	}
	k6 := k6Binary(t)
	t.Run("receive", func(t *testing.T) {
		j, out := receiveRun(t, file, receiveOpts{shard: k6Shards(t, k6, file), faults: true})
		if code := j.cmd.ProcessState.ExitCode(); code != exitBreach {
			t.Fatalf("judge: exit %d, want %d\n%s", code, exitBreach, j.stderr)
		}
		got := outcomes(readRecord(t, filepath.Join(out, "kv-hot-key-flood-k6", "run.json")))
		t.Logf("judge --listen --shards 2: %v", got)
		if !slices.Equal(got, want) {
			t.Errorf("receive-only judge: %v\nrun --load-shards 2: %v", got, want)
		}
	})
	t.Run("dead shard", func(t *testing.T) {
		short := shortKVFlood(t, "10s", "2s", "2s")
		j, out := receiveRun(t, short, receiveOpts{shard: k6Shards(t, k6, short), faults: true, margin: "2s", kill: 3 * time.Second})
		checkDeadShard(t, j, filepath.Join(out, "kv-hot-key-flood-k6", "run.json"))
	})
}

// k6Shards starts k6 on shard i of 2 of file's script as a k6-operator
// runner runs it: the scenario's environment as -e flags, its execution
// segment, the results output to addr with the token in the environment.
func k6Shards(t *testing.T, k6, file string) func(topo *testbed.Topology, addr, token string, i int) *background {
	sc, err := NewState().scenarios().Load(context.Background(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	return func(topo *testbed.Topology, addr, token string, i int) *background {
		env, err := workloads.ScriptEnv(sc, topo.Addresses(), sc.Seed, sc.Workload.Duration.Std())
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"run", "--quiet", "--no-usage-report", "--no-color", "--address", ""}
		for k, v := range env {
			args = append(args, "-e", k+"="+v)
		}
		segment := [2]string{"0:1/2", "1/2:1"}[i]
		args = append(args, "--execution-segment", segment, "--execution-segment-sequence", "0,1/2,1",
			"--out", "resilience=tcp://"+addr, filepath.Join(workloads.ScriptsDir(repoRoot(t)), sc.Workload.Script))
		return startIn(t, exec.Command(k6, args...), func(c *exec.Cmd) {
			c.Env = append(os.Environ(), "K6_RESILIENCE_TOKEN="+token)
		})
	}
}

// shortKVFlood writes scenarios/k6/kv-hot-key-flood.yaml shortened to
// duration, its flood (the fault and the script's) from start for d (a
// file: fault apply takes no --set), with checks firm enough to give the
// same verdicts run after run on a shared machine: recovery within 1 s
// (the claim's own bound is TestK6CatalogAB's), and one that fails (no
// flood at all).
func shortKVFlood(t *testing.T, duration, start, d string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "scenarios", "k6", "kv-hot-key-flood.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	wl := doc["workload"].(map[string]any)
	wl["duration"] = duration
	params := wl["params"].(map[string]any)
	params["FLOOD_START"], params["FLOOD_DURATION"] = start, d
	flood := doc["faults"].([]any)[0].(map[string]any)
	if flood["name"] != "flood" {
		t.Fatalf("the first fault of kv-hot-key-flood-k6 is %v, want flood", flood["name"])
	}
	flood["start"], flood["duration"] = start, d
	as := doc["assertions"].([]any)
	for _, a := range as {
		if a := a.(map[string]any); a["name"] == "recovered-after-flood" {
			a["checks"] = []any{"p(99) < 1s"}
		}
	}
	doc["assertions"] = append(as, map[string]any{"name": "no-flood", "metric": "http_reqs{api:Flood}",
		"window": "during flood", "checks": []any{"count < 10"}})
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "kv-hot-key-flood.yaml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// k6Binary is the k6 with the extension that runs use: built once into
// the user cache folder (CHAOSRUN_CACHE), found there after.
func k6Binary(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var progress strings.Builder
	bin, err := k6build.Ensure(ctx, k6build.Options{Getenv: os.Getenv, Dir: repoRoot(t), Progress: &progress})
	if err != nil {
		t.Fatalf("k6 with xk6-resilience: %v\n%s", err, progress.String())
	}
	return bin.Path
}
