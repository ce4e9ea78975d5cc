package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
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

// inspectWait bounds reading a script's options with `k6 inspect`.
const inspectWait = time.Minute

// K6 makes a run's load as k6 processes running the scenario's script as
// `k6 run` runs it: the script's own options rule (schedule, scenarios,
// tags, thresholds); a script without a schedule of its own runs for the
// workload's duration (--duration), not for one iteration. The script's
// thresholds (read with `k6 inspect`) are the load's ScriptChecks, judged
// over every shard's samples merged; k6's own verdict per shard (exit 99)
// is kept in Parts. Each shard writes its summary and its own outputs into
// OutDir/k6 (OutDir/k6/shard-N for several).
func K6(c K6Config) NewLoad {
	return func(spec LoadSpec) (Load, error) {
		env, err := workloads.ScriptEnv(spec.Scenario, spec.Addresses, spec.Seed, spec.Duration)
		if err != nil {
			return nil, err
		}
		script, err := workloads.ResolveScript(spec.Scenario.File, spec.Scenario.Workload.Script, c.ScriptDir)
		if err != nil {
			return nil, err
		}
		if script, err = filepath.Abs(script); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), inspectWait)
		opts, err := k6run.Inspect(ctx, c.Binary, script, env)
		cancel()
		if err != nil {
			return nil, err
		}
		var own scenario.K6
		if k := spec.Scenario.Workload.K6; k != nil {
			own = *k
		}
		e := &k6Engine{outDir: spec.OutDir, spec: k6run.Spec{Binary: c.Binary, Script: script, Env: env, Outputs: own.Outputs,
			Extra: append(spec.Allowed.K6Flags(), own.Flags...)}}
		var notes []string
		e.spec.Duration, notes = schedule(opts, own.Flags, spec.Duration)
		checks, cnotes := ThresholdChecks(opts.Thresholds, own.Flags)
		spec.Keep = workloads.KeepAlso(spec.Keep, checks)
		return &k6Load{Load: NewShardedLoad(e, c.Shards, spec, c.Results), engine: e, checks: checks, notes: append(notes, cnotes...)}, nil
	}
}

// schedule is the --duration a script runs with: the workload's, unless
// the script (or a flag) sets its own schedule; then a note when that
// schedule's length differs from the workload's duration.
func schedule(opts k6run.Options, flags []string, planned time.Duration) (time.Duration, []string) {
	own := opts.OwnSchedule() || slices.ContainsFunc(flags, func(f string) bool {
		name, _ := scenario.K6FlagName(f)
		return name == "iterations" || name == "stage"
	})
	if !own {
		return planned, nil
	}
	d, ok := opts.Planned()
	if ok && (d < planned-max(time.Second, planned/10) || d > planned+max(time.Second, planned/10)) {
		return 0, []string{fmt.Sprintf("the script's own schedule lasts %s, the workload's duration is %s: "+
			"load runs as the script says, the faults and the verdict follow workload.duration", d, planned)}
	}
	return 0, nil
}

// ThresholdChecks turns a script's thresholds (k6run.Inspect) into checks
// over every sample of the run (window all), one assertion per metric key,
// named "threshold KEY"; none, and a note, when flags hold --no-thresholds.
func ThresholdChecks(ts []k6run.Threshold, flags []string) ([]scenario.Assertion, []string) {
	if len(ts) > 0 && slices.Contains(flags, "--no-thresholds") {
		return nil, []string{"--no-thresholds: the script's thresholds are not judged"}
	}
	var out []scenario.Assertion
	at := map[string]int{}
	for _, t := range ts {
		i, ok := at[t.Key]
		if !ok {
			metric := t.Key
			if m, err := assertions.ParseThresholdKey(t.Key); err == nil {
				metric = m.String()
			}
			i = len(out)
			at[t.Key] = i
			out = append(out, scenario.Assertion{Name: "threshold " + t.Key, Metric: metric, Window: assertions.All})
		}
		out[i].Checks = append(out[i].Checks, scenario.Check{Threshold: t.Expr, AbortOnFail: t.AbortOnFail,
			DelayAbortEval: scenario.Duration(t.DelayAbortEval)})
	}
	return out, nil
}

// k6Load is the k6 processes' load with what k6 brings besides windows:
// the script's thresholds, how each process ended, notes.
type k6Load struct {
	Load
	engine *k6Engine
	checks []scenario.Assertion
	notes  []string
}

func (l *k6Load) ScriptChecks() []scenario.Assertion { return l.checks }

// PartCount is how many k6 processes send windows.
func (l *k6Load) PartCount() int {
	if pc, ok := l.Load.(PartCounter); ok {
		return pc.PartCount()
	}
	return 0
}
func (l *k6Load) Parts() []record.LoadPart { return l.engine.parts.list() }

// Collect adds the load's notes to the shards' windows and notes.
func (l *k6Load) Collect(d time.Duration) (record.WindowSource, []string, error) {
	src, notes, err := l.Load.Collect(d)
	return src, append(slices.Clone(l.notes), notes...), err
}

// k6Engine runs shards as k6 processes on k6's execution segments.
type k6Engine struct {
	spec   k6run.Spec
	outDir string
	parts  partLog
}

func (*k6Engine) Name() string { return "k6" }

// RunShard runs k6 for shard sh in its folder; crossed thresholds (exit
// 99) are not a failure of the load: they are judged over the merged
// stream, and recorded in the shard's part with the thresholds k6's
// summary names.
func (e *k6Engine) RunShard(ctx context.Context, sh Shard) error {
	s := e.spec
	s.StreamAddr, s.StreamToken, s.StreamOptions, s.LogPath = sh.StreamAddr, sh.StreamToken, sh.StreamOptions, sh.LogPath
	if sh.Count > 1 {
		s.Extra = append(slices.Clone(e.spec.Extra), segments(sh.Index, sh.Count)...)
	}
	if e.outDir != "" {
		s.Dir = filepath.Join(e.outDir, "k6")
		if sh.Count > 1 {
			s.Dir = filepath.Join(s.Dir, fmt.Sprintf("shard-%d", sh.Index+1))
		}
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return fmt.Errorf("k6 folder: %w", err)
		}
		s.SummaryPath, s.SummaryExport = filepath.Join(s.Dir, "summary.txt"), filepath.Join(s.Dir, "summary.json")
	}
	res, err := k6run.RunNotify(ctx, s, func(pid int) { e.parts.started(sh, pid) })
	if res.PID != 0 {
		var crossed []record.Threshold
		if res.ThresholdsFailed && s.SummaryExport != "" {
			ts, _ := k6run.CrossedThresholds(s.SummaryExport) // none known when k6 wrote no summary
			for _, t := range ts {
				crossed = append(crossed, record.Threshold{Key: t.Key, Expr: t.Expr})
			}
		}
		e.parts.update(sh, func(p *record.LoadPart) {
			p.PID, p.ExitCode, p.ThresholdsCrossed, p.Crossed, p.Ran = res.PID, res.ExitCode, res.ThresholdsFailed, crossed, record.Duration(res.Duration)
		})
	}
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
