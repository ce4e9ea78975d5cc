package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/internal/exitcode"
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
			ctx := cmd.Context()
			cli, err := docker.NewClient(ctx)
			if err != nil {
				return exitcode.Fail(exitRunError, err)
			}
			defer cli.Close()
			rm, err := docker.Clean(ctx, cli, o)
			rm.Report(st.Stdout, o.DryRun)
			if err != nil {
				return exitcode.Fail(exitRunError, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Run, "run", "", "only this run ID (label "+docker.LabelRun+")")
	cmd.Flags().BoolVar(&o.All, "all", false, "also remove what runs whose harness still runs have made")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list what would go; remove nothing")
	return cmd
}
