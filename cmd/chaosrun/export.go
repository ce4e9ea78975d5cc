package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/k8s"
)

// newExportCmd writes a scenario for another platform; k8s is the one there is.
func newExportCmd(st *State) *cobra.Command {
	return group(st, &cobra.Command{
		Use:   "export",
		Short: "write a scenario as Kubernetes manifests (export k8s)",
	}, newExportK8sCmd(st))
}

func newExportK8sCmd(st *State) *cobra.Command {
	var f k8s.Flags
	cmd := &cobra.Command{
		Use:               "k8s SCENARIO.yaml [--out DIR] [--parallelism N] [--image IMG] [--k6-image IMG] [--results-addr HOST:PORT] [flags]",
		Short:             "Kubernetes manifests for a scenario (exit 2 for one a cluster cannot run)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return untilDone(cmd.Context(), func() error { return f.Export(cmd.Context(), st.scenarios(), st.Stdout, st.Stderr, args[0]) })
		},
	}
	f.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	return cmd
}
