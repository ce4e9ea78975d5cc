package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/metrics"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/report"
)

func newExportResultsCmd(st *State) *cobra.Command {
	var ef metrics.Flags
	cmd := &cobra.Command{
		Use:   "export-results [--export-prom-rw URL] [--export-otlp URL] [--grafana-url URL] RUN.json|DIR ...",
		Short: "send finished runs to Prometheus remote write, OTLP and Grafana annotations",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := ef.Config()
			if err == nil && !cfg.Enabled() {
				err = fmt.Errorf("nowhere to send: give --export-prom-rw, --export-otlp or --grafana-url")
			}
			if err != nil {
				return exitcode.Fail(exitUsage, err)
			}
			paths := make([]string, len(args))
			for i, a := range args {
				paths[i] = st.path(a)
			}
			runs, err := report.ReadRuns(paths)
			if err != nil {
				return exitcode.Fail(exitUsage, err)
			}
			code := exitOK
			for _, r := range runs {
				if !metrics.Send(cmd.Context(), st.Stderr, "export-results", r, cfg) {
					code = exitRunError
				}
			}
			return exitcode.Exit(code)
		},
	}
	ef.Register(cmd.Flags(), st.Getenv)
	return cmd
}
