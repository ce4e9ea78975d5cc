package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/scenario"
)

func newValidateCmd(st *State) *cobra.Command {
	var sets, allow []string
	cmd := &cobra.Command{
		Use:               "validate [--set K=V] SCENARIO.yaml|DIR ...",
		Short:             "check scenario files and report every problem",
		Long:              "Check scenario files (or folders of them) without running them; every problem is reported with its file:line:col, the field and what is allowed. Exit 2 when one is wrong.",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := st.scenarios().Scenarios(cmd.Context(), sets, allow, args, st.Stderr, func(f string, sc *scenario.Scenario) {
				fmt.Fprintf(st.Stdout, "%s: ok (%s: %d services, %d faults, %d assertions)\n", f, sc.Name, len(sc.Services), len(sc.Faults), len(sc.Assertions))
			})
			return err
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "apply an override before validating (repeatable)")
	cmd.Flags().StringArrayVar(&allow, "allow-target", nil, "as run's: a host or host:port parameters may point at besides loopback and the testbed's services (repeatable)")
	return cmd
}
