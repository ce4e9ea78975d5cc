package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/metrics"
)

func newExportResultsCmd(st *State) *cobra.Command {
	var ef metrics.Flags
	cmd := &cobra.Command{
		Use:   "export-results [--export-prom-rw URL] [--export-otlp URL] [--grafana-url URL] RUN.json|DIR ...",
		Short: "send finished runs to Prometheus remote write, OTLP and Grafana annotations",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return ef.ExportResults(cmd.Context(), st.files(), st.Stderr, args)
		},
	}
	ef.Register(cmd.Flags(), st.Getenv)
	return cmd
}
