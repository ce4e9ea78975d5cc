package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/compose"
	"github.com/chaosrun/chaosrun/scenario"
)

func newValidateCmd(st *State) *cobra.Command {
	var sets, allow, profiles []string
	cmd := &cobra.Command{
		Use:               "validate [--set K=V] SCENARIO.yaml|DIR ...",
		Short:             "check scenario files and report every problem",
		Long:              "Check scenario files (or folders of them) without running them; every problem is reported with its file:line:col, the field and what is allowed. Exit 2 when one is wrong.",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l := st.scenarios()
			l.Compose.Profiles = compose.Profiles(profiles, st.Getenv)
			_, err := l.Scenarios(cmd.Context(), sets, allow, args, st.Stderr, func(f string, sc *scenario.Scenario) {
				fmt.Fprintf(st.Stdout, "%s: ok (%s: %d services, %d faults, %d assertions)\n", f, sc.Name, len(sc.Services), len(sc.Faults), len(sc.Assertions))
			})
			return err
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "apply an override before validating (repeatable)")
	cmd.Flags().StringArrayVar(&allow, "allow-target", nil, "as run's: a host or host:port parameters may point at besides loopback and the testbed's services (repeatable)")
	profileFlag(cmd, &profiles)
	return cmd
}

// profileFlag adds --profile, as docker compose's, to cmd.
func profileFlag(cmd *cobra.Command, profiles *[]string) {
	cmd.Flags().StringArrayVar(profiles, "profile", nil, "enable a Compose profile of the scenario's Compose project (repeatable; default COMPOSE_PROFILES)")
}
