package setup

import (
	"context"
	"io"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// Env is what the commands that run scenarios (run, gameday) take from
// the process.
type Env struct {
	// Scenarios reads scenarios, and carries k6build's environment.
	Scenarios scenarioload.Loader
	// Executable is the chaosrun binary: it serves the targets and runs
	// native load shards.
	Executable string
	// Stdout gets verdict tables, Stderr everything else; IsTerminal
	// reports whether Stderr is a terminal (live progress line).
	Stdout, Stderr io.Writer
	IsTerminal     bool
	// Getenv is the environment's variables (CHAOSRUN_*).
	Getenv func(string) string
	// NewLoad and NewTestbed, when set, replace every run's load and
	// testbed (a test's fakes).
	NewLoad    engine.NewLoad
	NewTestbed func() testbed.Testbed
}

// Prepare settles what the runs of scs need before any load (see
// Prepare) on the flags' testbed and shards, with k6 (--k6, resolved
// against the working folder) and results; its errors end the command
// (exit 3, 130 once interrupted).
func (f Flags) Prepare(ctx context.Context, env Env, k6 string, results engine.Results, scs []*scenario.Scenario) (*Setup, error) {
	o := Options{K6: env.Scenarios.K6, Testbed: f.Testbed, Executable: env.Executable, Shards: f.Shards, Results: results,
		NewLoad: env.NewLoad, NewTestbed: env.NewTestbed}
	o.K6.K6Path = env.Scenarios.FS.Path(k6)
	s, err := Prepare(ctx, o, scs)
	if err != nil {
		return nil, exitcode.Fail(exitcode.Harness(ctx), err)
	}
	return s, nil
}
