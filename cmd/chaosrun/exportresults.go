package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/export/metrics"
)

func newExportResultsCmd(st *State) *cobra.Command {
	var ef metrics.Settings
	cmd := &cobra.Command{
		Use:   "export-results [--export-prom-rw URL] [--export-otlp URL] [--grafana-url URL] RUN.json|DIR ...",
		Short: "send finished runs to Prometheus remote write, OTLP and Grafana annotations",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return ef.ExportResults(cmd.Context(), st.files(), st.Stderr, args)
		},
	}
	exportFlags(cmd.Flags(), &ef, st.Getenv)
	return cmd
}

// exportFlags adds the export flags of run, judge and export-results to
// fl, filling f; getenv gives their defaults (CHAOSRUN_EXPORT_PROM_RW,
// CHAOSRUN_EXPORT_OTLP, CHAOSRUN_GRAFANA_URL, CHAOSRUN_GRAFANA_TOKEN).
func exportFlags(fl *pflag.FlagSet, f *metrics.Settings, getenv func(string) string) {
	fl.StringVar(&f.PromRW, "export-prom-rw", getenv("CHAOSRUN_EXPORT_PROM_RW"), "send the run to this Prometheus remote-write URL, e.g. http://127.0.0.1:9090/api/v1/write (env CHAOSRUN_EXPORT_PROM_RW)")
	fl.StringVar(&f.OTLP, "export-otlp", getenv("CHAOSRUN_EXPORT_OTLP"), "send the run to this OTLP/HTTP metrics URL, e.g. http://127.0.0.1:4318/v1/metrics (env CHAOSRUN_EXPORT_OTLP)")
	fl.StringVar(&f.Grafana, "grafana-url", getenv("CHAOSRUN_GRAFANA_URL"), "add the run and its fault windows as annotations to this Grafana (env CHAOSRUN_GRAFANA_URL)")
	fl.StringVar(&f.GrafanaToken, "grafana-token", getenv("CHAOSRUN_GRAFANA_TOKEN"), "Grafana service-account token (env CHAOSRUN_GRAFANA_TOKEN)")
	fl.StringArrayVar(&f.Labels, "export-label", nil, "add NAME=VALUE to every exported series, e.g. env=ci (repeatable)")
}
