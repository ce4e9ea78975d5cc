package batch

import (
	"context"

	"github.com/chaosrun/chaosrun/export/metrics"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// Command is chaosrun run: its own flags, the testbed and shards, where
// the results stream is received and where finished runs are exported.
type Command struct {
	Flags
	Setup   setup.Flags
	Results runner.ResultsFlags
	Export  metrics.Settings
}

// NewCommand is run with every flag at its default.
func NewCommand() Command { return Command{Flags: DefaultFlags(), Setup: setup.DefaultFlags()} }

// Run checks the flags, validates every scenario args name, then runs
// them in turn (see Run); the worst exit code ends the command.
func (c *Command) Run(ctx context.Context, env setup.Env, args []string) error {
	results, cfg, err := c.check(ctx, env)
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	scs, err := env.Scenarios.Scenarios(ctx, c.Sets, c.Allow, args, env.Stderr, nil)
	if err != nil {
		return err
	}
	for _, sc := range scs {
		if c.Seed != 0 {
			sc.Seed = c.Seed
		}
	}
	s, err := c.Setup.Prepare(ctx, env, c.K6, results, scs)
	if err != nil {
		return err
	}
	o := c.Options(env.Scenarios.FS.Path(c.OutDir))
	o.Scenarios, o.Setup, o.Testbed = scs, s, c.Setup.Testbed
	o.Overwrite, o.Stdout, o.Stderr = env.IsTerminal, env.Stdout, env.Stderr
	if cfg.Enabled() {
		// A failed export is reported, not a breach.
		o.Export = func(ctx context.Context, rec *record.Run) { metrics.Send(ctx, env.Stderr, "run", rec, cfg) }
	}
	return exitcode.Exit(Run(ctx, o))
}

// check checks the flags, in the order run reports them, and gives the
// results stream's settings and the export's configuration; its errors
// are usage errors.
func (c *Command) check(ctx context.Context, env setup.Env) (engine.Results, metrics.Config, error) {
	if err := c.Setup.CheckShards(); err != nil {
		return engine.Results{}, metrics.Config{}, err
	}
	if err := c.Setup.CheckTestbed(); err != nil {
		return engine.Results{}, metrics.Config{}, err
	}
	results, err := c.Results.Settings(ctx, env.Scenarios.FS, env.Stderr)
	if err != nil {
		return results, metrics.Config{}, err
	}
	cfg, err := c.Export.Config()
	return results, cfg, err
}
