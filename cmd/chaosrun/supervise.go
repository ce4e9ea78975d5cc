package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/testbed"
)

// newSuperviseCmd is the hidden command the local testbed runs a command:
// service's program through, so that the program's own children end with
// it and with the harness.
func newSuperviseCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:                testbed.SuperviseCommand + " -- PROGRAM [ARGS...]",
		Short:              "run a command: service's program in a process group that ends with the harness (used by the local testbed)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) > 0 && (args[0] == "--help" || args[0] == "-h"):
				return cmd.Help()
			case len(args) > 0 && args[0] == "--":
				args = args[1:]
			}
			return exitcode.Exit(testbed.Supervise(args, st.Stderr))
		},
	}
}
