package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/chaosrun/chaosrun/export/metrics"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

// exportFlags say where a run's series, verdicts and fault windows go
// (run and export-results).
type exportFlags struct {
	promRW, otlp, grafana, grafanaToken string
	labels                              stringList
}

func (f *exportFlags) register(fs *flag.FlagSet, st *State) {
	fs.StringVar(&f.promRW, "export-prom-rw", st.Getenv("CHAOSRUN_EXPORT_PROM_RW"), "send the run to this Prometheus remote-write URL, e.g. http://127.0.0.1:9090/api/v1/write (env CHAOSRUN_EXPORT_PROM_RW)")
	fs.StringVar(&f.otlp, "export-otlp", st.Getenv("CHAOSRUN_EXPORT_OTLP"), "send the run to this OTLP/HTTP metrics URL, e.g. http://127.0.0.1:4318/v1/metrics (env CHAOSRUN_EXPORT_OTLP)")
	fs.StringVar(&f.grafana, "grafana-url", st.Getenv("CHAOSRUN_GRAFANA_URL"), "add the run and its fault windows as annotations to this Grafana (env CHAOSRUN_GRAFANA_URL)")
	fs.StringVar(&f.grafanaToken, "grafana-token", st.Getenv("CHAOSRUN_GRAFANA_TOKEN"), "Grafana service-account token (env CHAOSRUN_GRAFANA_TOKEN)")
	fs.Var(&f.labels, "export-label", "add NAME=VALUE to every exported series, e.g. env=ci (repeatable)")
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

func cmdExportResults(ctx context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("export-results", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	var ef exportFlags
	ef.register(fs, st)
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun export-results [--export-prom-rw URL] [--export-otlp URL] [--grafana-url URL] RUN.json|DIR ...")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cfg, err := ef.config()
	if err == nil && !cfg.Enabled() {
		err = fmt.Errorf("nowhere to send: give --export-prom-rw, --export-otlp or --grafana-url")
	}
	if err != nil || fs.NArg() == 0 {
		if err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun export-results: %v\n", err)
		}
		fs.Usage()
		return exitUsage
	}
	runs, err := report.ReadRuns(fs.Args())
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun export-results: %v\n", err)
		return exitUsage
	}
	code := exitOK
	for _, r := range runs {
		if !exportRun(ctx, st, "export-results", r, cfg) {
			code = exitRunError
		}
	}
	return code
}
