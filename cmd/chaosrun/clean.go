package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/testbed/docker"
)

// newCleanCmd removes the containers and networks Docker runs left behind
// (a harness killed by SIGKILL cannot tear down), found by their labels.
func newCleanCmd(st *State) *cobra.Command {
	var o docker.CleanOptions
	cmd := &cobra.Command{
		Use:   "clean [--run ID] [--all] [--dry-run]",
		Short: "remove containers and networks that killed Docker runs left",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Command(cmd.Context(), st.Stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Run, "run", "", "only this run ID (label "+docker.LabelRun+")")
	fl.BoolVar(&o.All, "all", false, "also remove what runs whose harness still runs have made")
	fl.BoolVar(&o.DryRun, "dry-run", false, "list what would go; remove nothing")
	return cmd
}
