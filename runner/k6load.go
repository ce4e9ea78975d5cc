package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/k6run"
)

// K6Config says how a run's k6 load is made.
type K6Config struct {
	// Binary is the k6 binary (built with xk6-resilience).
	Binary string
	// ScriptDir is where workload scripts named in scenarios live.
	ScriptDir string
	// Shards runs the workload as this many k6 processes, each with its
	// execution segment; their results are merged. 0 or 1: one process.
	Shards int
	// Results says where the results stream is received.
	Results Results
}

// K6 makes a run's load as k6 processes running the scenario's script.
func K6(c K6Config) NewLoad {
	return func(spec LoadSpec) (Load, error) {
		env, err := workloads.ScriptEnv(spec.Scenario, (&testbed.Topology{Instances: spec.Instances}).Addresses(), spec.Seed, spec.Duration)
		if err != nil {
			return nil, err
		}
		script, err := workloads.ResolveScript(spec.Scenario.File, spec.Scenario.Workload.Script, c.ScriptDir)
		if err != nil {
			return nil, err
		}
		e := k6Engine{spec: k6run.Spec{Binary: c.Binary, Script: script, Env: env, Extra: spec.Allowed.K6Flags()}}
		return NewShardedLoad(e, c.Shards, spec, c.Results), nil
	}
}

// k6Engine runs shards as k6 processes on k6's execution segments.
type k6Engine struct{ spec k6run.Spec }

func (k6Engine) Name() string { return "k6" }

// RunShard runs k6 for shard sh; crossed thresholds (exit 99) are not a
// failure of the load.
func (e k6Engine) RunShard(ctx context.Context, sh Shard) error {
	s := e.spec
	s.StreamAddr, s.StreamToken, s.StreamOptions, s.LogPath = sh.StreamAddr, sh.StreamToken, sh.StreamOptions, sh.LogPath
	if sh.Count > 1 {
		s.Extra = append(append([]string(nil), e.spec.Extra...), segments(sh.Index, sh.Count)...)
	}
	res, err := k6run.Run(ctx, s)
	switch {
	case err != nil:
		return err
	case res.ExitCode != 0 && !res.ThresholdsFailed:
		return fmt.Errorf("exited with code %d%s", res.ExitCode, tailOf(res))
	}
	return nil
}

// segments returns k6's --execution-segment flags for shard i of n.
func segments(i, n int) []string {
	if n <= 1 {
		return nil
	}
	seq := "0"
	for k := 1; k <= n; k++ {
		seq += "," + frac(k, n)
	}
	return []string{"--execution-segment", frac(i, n) + ":" + frac(i+1, n), "--execution-segment-sequence", seq}
}

func frac(k, n int) string {
	switch k {
	case 0:
		return "0"
	case n:
		return "1"
	}
	return fmt.Sprintf("%d/%d", k, n)
}

func tailOf(r k6run.Result) string {
	if strings.TrimSpace(r.Tail) == "" {
		return ""
	}
	return "\n  last lines of k6's output:\n    " + strings.ReplaceAll(strings.TrimSpace(r.Tail), "\n", "\n    ")
}
