package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/runner/batch"
)

func newRunCmd(st *State) *cobra.Command {
	var c batch.Command
	cmd := &cobra.Command{
		Use:               "run [flags] SCENARIO.yaml|DIR ...",
		Short:             "run scenarios (files or folders) and judge them",
		Example:           "  chaosrun run scenarios/bank-slow-vault.yaml --set bank.bulkheads=off",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.Run(cmd.Context(), st.env(), args)
		},
	}
	c.Register(cmd.Flags(), st.Getenv)
	testbedCompletion(cmd)
	return cmd
}
