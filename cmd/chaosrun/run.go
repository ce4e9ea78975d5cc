package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/metrics"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/batch"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenario"
)

// runFlags are run's flags.
type runFlags struct {
	batch.Flags
	setup   setup.Flags
	results runner.ResultsFlags
	export  metrics.Flags
}

func newRunCmd(st *State) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:               "run [flags] SCENARIO.yaml|DIR ...",
		Short:             "run scenarios (files or folders) and judge them",
		Example:           "  chaosrun run scenarios/bank-slow-vault.yaml --set bank.bulkheads=off",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScenarios(cmd.Context(), st, &f, args)
		},
	}
	f.Register(cmd.Flags())
	setupFlags(cmd, &f.setup)
	f.results.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	f.export.Register(cmd.Flags(), st.Getenv)
	return cmd
}

// runScenarios validates every scenario, then runs them in turn (see
// batch.Run); the worst exit code is run's.
func runScenarios(ctx context.Context, st *State, f *runFlags, args []string) error {
	if err := f.setup.CheckShards(); err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	if err := f.setup.CheckTestbed(); err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	results, err := f.results.Settings(st.files(), st.Stderr)
	if err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	cfg, err := f.export.Config()
	if err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	scs, err := loadAll(ctx, st, f.Sets, f.Allow, args, nil)
	if err != nil {
		return err
	}
	for _, sc := range scs {
		if f.Seed != 0 {
			sc.Seed = f.Seed
		}
	}
	s, err := prepare(ctx, st, f.K6, f.setup, results, scs)
	if err != nil {
		return err
	}
	o := f.Options(st.path(f.OutDir))
	o.Scenarios, o.Setup, o.Testbed = scs, s, f.setup.Testbed
	o.Overwrite, o.Stdout, o.Stderr = st.IsTerminal, st.Stdout, st.Stderr
	if cfg.Enabled() {
		// A failed export is reported, not a breach.
		o.Export = func(ctx context.Context, rec *record.Run) { metrics.Send(ctx, st.Stderr, "run", rec, cfg) }
	}
	return exitcode.Exit(batch.Run(ctx, o))
}

// loadAll loads and validates every scenario args name (files, folders,
// catalog:) before anything starts, saying what is wrong with each; ok,
// when set, hears of each that is right.
func loadAll(ctx context.Context, st *State, sets, allow, args []string, ok func(string, *scenario.Scenario)) ([]*scenario.Scenario, error) {
	files, err := st.scenarios().Expand(args)
	if err != nil {
		return nil, exitcode.Fail(exitUsage, err)
	}
	scs, stopped, err := st.scenarios().LoadAll(ctx, files, sets, allow, st.Stderr, ok)
	switch {
	case stopped:
		return nil, scenarioFailed(ctx, st, err)
	case err != nil:
		return nil, exitcode.Exit(exitUsage)
	}
	return scs, nil
}

// printLines prints each line of err on stderr after prefix.
func printLines(st *State, prefix string, err error) { batch.PrintLines(st.Stderr, prefix, err) }
