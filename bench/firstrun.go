package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// firstRunScenario is the README's main job.
const firstRunScenario = "scenarios/bank-slow-vault.yaml"

// firstRunGoal is how long a new user may wait for the main job's verdict
// on a fresh machine: module downloads, the build and the run itself.
const firstRunGoal = 5 * time.Minute

// firstRunSection times the README's main command as a new user meets it:
// `go run ./cmd/chaosrun run scenarios/bank-slow-vault.yaml` with empty Go
// module and build caches and an empty chaosrun cache, and checks that the
// default path built no k6 (nothing lands in that cache but the run's own).
func (b *bench) firstRunSection(ctx context.Context) (Section, error) {
	sec := Section{Name: "first run (the README's main command on a fresh machine)"}
	dir, err := os.MkdirTemp(b.tmp, "firstrun-")
	if err != nil {
		return sec, err
	}
	defer os.RemoveAll(dir) // the module cache is writable (-modcacherw)
	cache := filepath.Join(dir, "chaosrun-cache")
	env := []string{"GOMODCACHE=" + filepath.Join(dir, "mod"), "GOCACHE=" + filepath.Join(dir, "build"),
		"GOFLAGS=-modcacherw", "CHAOSRUN_CACHE=" + cache}
	planned, err := plannedLoad([]string{filepath.Join(b.root, firstRunScenario)})
	if err != nil {
		return sec, err
	}
	args := []string{"run", "./cmd/chaosrun", "run", "--quiet", "--out-dir", filepath.Join(dir, "out"), firstRunScenario}
	b.logf("  go %s (empty module, build and chaosrun caches)", strings.Join(args, " "))
	res, err := runCmd(ctx, 3*firstRunGoal, b.root, env, "go", args...)
	if err != nil {
		return sec, err
	}
	if res.Code != 0 {
		return sec, fmt.Errorf("the main command exited %d: %s", res.Code, lastLines(string(res.Out), 15))
	}
	k6s, _ := filepath.Glob(filepath.Join(cache, "k6-*"))
	xk6s, _ := filepath.Glob(filepath.Join(cache, "xk6-*"))
	if built := append(k6s, xk6s...); len(built) > 0 {
		return sec, fmt.Errorf("the default path built k6: %s in the chaosrun cache", strings.Join(built, ", "))
	}
	sec.Detail = map[string]any{"scenario": firstRunScenario, "exit_code": res.Code, "wall_s": res.Wall.Seconds(), "cpu_s": res.CPU.Seconds()}
	sec.Rows = []Row{
		{Name: "first run: module downloads, build and " + firstRunScenario + " [empty Go and chaosrun caches, exit 0, no k6 built]",
			Value: res.Wall.Seconds(), Unit: "s", Ref: "planned load", RefValue: planned.Seconds(), Goal: ValueAtMost(firstRunGoal.Seconds())},
	}
	return sec, nil
}
