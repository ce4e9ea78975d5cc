package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/metrics"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

// exportFlags say where a run's series, verdicts and fault windows go
// (run and export-results).
type exportFlags struct {
	promRW, otlp, grafana, grafanaToken string
	labels                              []string
}

func (f *exportFlags) register(cmd *cobra.Command, st *State) {
	fs := cmd.Flags()
	fs.StringVar(&f.promRW, "export-prom-rw", st.Getenv("CHAOSRUN_EXPORT_PROM_RW"), "send the run to this Prometheus remote-write URL, e.g. http://127.0.0.1:9090/api/v1/write (env CHAOSRUN_EXPORT_PROM_RW)")
	fs.StringVar(&f.otlp, "export-otlp", st.Getenv("CHAOSRUN_EXPORT_OTLP"), "send the run to this OTLP/HTTP metrics URL, e.g. http://127.0.0.1:4318/v1/metrics (env CHAOSRUN_EXPORT_OTLP)")
	fs.StringVar(&f.grafana, "grafana-url", st.Getenv("CHAOSRUN_GRAFANA_URL"), "add the run and its fault windows as annotations to this Grafana (env CHAOSRUN_GRAFANA_URL)")
	fs.StringVar(&f.grafanaToken, "grafana-token", st.Getenv("CHAOSRUN_GRAFANA_TOKEN"), "Grafana service-account token (env CHAOSRUN_GRAFANA_TOKEN)")
	fs.StringArrayVar(&f.labels, "export-label", nil, "add NAME=VALUE to every exported series, e.g. env=ci (repeatable)")
}

// config checks the flags; its errors are usage errors.
func (f *exportFlags) config() (metrics.Config, error) {
	cfg := metrics.Config{PromRW: f.promRW, OTLP: f.otlp, GrafanaURL: f.grafana, GrafanaToken: f.grafanaToken}
	for _, l := range f.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return cfg, fmt.Errorf("--export-label %q: want NAME=VALUE", l)
		}
		if cfg.Labels == nil {
			cfg.Labels = map[string]string{}
		}
		cfg.Labels[k] = v
	}
	return cfg, cfg.Check()
}

// exportRun sends one run where cfg says and reports on stderr; it returns
// false when a sink failed.
func exportRun(ctx context.Context, st *State, cmd string, r *record.Run, cfg metrics.Config) bool {
	res, err := metrics.Export(ctx, r, cfg)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun %s: export %s: %v\n", cmd, r.Scenario, err)
		return false
	}
	fmt.Fprintf(st.Stderr, "exported %s (run %s): %s\n", r.Scenario, metrics.RunID(r), res)
	return true
}

func newExportResultsCmd(st *State) *cobra.Command {
	var ef exportFlags
	cmd := &cobra.Command{
		Use:   "export-results [--export-prom-rw URL] [--export-otlp URL] [--grafana-url URL] RUN.json|DIR ...",
		Short: "send finished runs to Prometheus remote write, OTLP and Grafana annotations",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := ef.config()
			if err == nil && !cfg.Enabled() {
				err = fmt.Errorf("nowhere to send: give --export-prom-rw, --export-otlp or --grafana-url")
			}
			if err != nil {
				return fail(exitUsage, err)
			}
			paths := make([]string, len(args))
			for i, a := range args {
				paths[i] = st.path(a)
			}
			runs, err := report.ReadRuns(paths)
			if err != nil {
				return fail(exitUsage, err)
			}
			code := exitOK
			for _, r := range runs {
				if !exportRun(cmd.Context(), st, "export-results", r, cfg) {
					code = exitRunError
				}
			}
			return exit(code)
		},
	}
	ef.register(cmd, st)
	return cmd
}
