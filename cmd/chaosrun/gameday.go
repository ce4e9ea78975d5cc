package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/gameday"
)

// newGamedayCmd runs a game day: steady load, a page to inject faults by
// hand and watch the SLOs live, stop conditions, and the run's report at
// the end.
func newGamedayCmd(st *State) *cobra.Command {
	var c gameday.Command
	cmd := &cobra.Command{
		Use:   "gameday [flags] SCENARIO.yaml",
		Short: "steady load, a live page to inject faults and watch SLOs, stop conditions",
		Long: `Stand up the scenario's testbed, run its workload at steady load until stopped
(Ctrl-C, the page's Stop button or --max-duration) and serve a page to inject and
clear faults while the scenario's SLOs are shown live. OUT-DIR/SCENARIO-gameday
gets the run's record and reports.`,
		Example:           "  chaosrun gameday --guard check-p99-isolated --grace 5s scenarios/bank-slow-vault.yaml",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.Run(cmd.Context(), st.env(), args[0])
		},
	}
	c.Register(cmd.Flags(), st.Getenv)
	testbedCompletion(cmd)
	return cmd
}
