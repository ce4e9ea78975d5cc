package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/scenarioload"
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
			files, err := st.scenarios().Expand(args)
			if err != nil {
				return fail(exitUsage, err)
			}
			code := exitOK
			for _, f := range files {
				sc, err := loadScenario(cmd.Context(), st, f, sets)
				if cmd.Context().Err() != nil {
					return scenarioFailed(cmd.Context(), st, err)
				}
				if err == nil {
					_, err = scenarioload.BlastRadius(sc, allow)
				}
				if err != nil {
					fmt.Fprintln(st.Stderr, err)
					code = exitUsage
					continue
				}
				fmt.Fprintf(st.Stdout, "%s: ok (%s: %d services, %d faults, %d assertions)\n", f, sc.Name, len(sc.Services), len(sc.Faults), len(sc.Assertions))
			}
			return exit(code)
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "apply an override before validating (repeatable)")
	cmd.Flags().StringArrayVar(&allow, "allow-target", nil, "as run's: a host or host:port parameters may point at besides loopback and the testbed's services (repeatable)")
	return cmd
}
