package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/compose"
	"github.com/chaosrun/chaosrun/runner/batch"
)

func newRunCmd(st *State) *cobra.Command {
	c := batch.NewCommand()
	var profiles []string
	cmd := &cobra.Command{
		Use:               "run [flags] SCENARIO.yaml|DIR ...",
		Short:             "run scenarios (files or folders) and judge them",
		Example:           "  chaosrun run scenarios/bank-slow-vault.yaml --set bank.bulkheads=off",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			env := st.env()
			env.Scenarios.Compose.Profiles = compose.Profiles(profiles, st.Getenv)
			return c.Run(cmd.Context(), env, args)
		},
	}
	fl, f := cmd.Flags(), &c.Flags
	fl.StringArrayVar(&f.Sets, "set", nil, "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	k6Flag(fl, &f.K6)
	fl.StringVar(&f.OutDir, "out-dir", f.OutDir, "folder for run records, summaries and logs (one sub-folder per scenario)")
	fl.DurationVar(&f.Timeout, "timeout", 0, "hard wall-clock limit per scenario (default: load duration + 3m, or the scenario's timeout)")
	fl.DurationVar(&f.TotalTimeout, "total-timeout", 0, "wall-clock limit for all scenarios together; those not finished by then are not run (default: none)")
	fl.Int64Var(&f.Seed, "seed", 0, "seed for every random choice (default: the scenario's, else random)")
	fl.BoolVar(&f.Quiet, "quiet", false, "no live progress line")
	allowFlag(fl, &f.Allow)
	setupFlags(fl, &c.Setup)
	resultsFlags(fl, &c.Results, st.Getenv)
	profileFlag(cmd, &profiles)
	exportFlags(cmd.Flags(), &c.Export, st.Getenv)
	testbedCompletion(cmd)
	return cmd
}
