package metrics

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

// Flags say where a run's series, verdicts and fault windows go (run and
// export-results).
type Flags struct {
	PromRW, OTLP, Grafana, GrafanaToken string
	Labels                              []string
}

// Register adds the export flags to fl; getenv gives their defaults
// (CHAOSRUN_EXPORT_PROM_RW, CHAOSRUN_EXPORT_OTLP, CHAOSRUN_GRAFANA_URL,
// CHAOSRUN_GRAFANA_TOKEN).
func (f *Flags) Register(fl *pflag.FlagSet, getenv func(string) string) {
	fl.StringVar(&f.PromRW, "export-prom-rw", getenv("CHAOSRUN_EXPORT_PROM_RW"), "send the run to this Prometheus remote-write URL, e.g. http://127.0.0.1:9090/api/v1/write (env CHAOSRUN_EXPORT_PROM_RW)")
	fl.StringVar(&f.OTLP, "export-otlp", getenv("CHAOSRUN_EXPORT_OTLP"), "send the run to this OTLP/HTTP metrics URL, e.g. http://127.0.0.1:4318/v1/metrics (env CHAOSRUN_EXPORT_OTLP)")
	fl.StringVar(&f.Grafana, "grafana-url", getenv("CHAOSRUN_GRAFANA_URL"), "add the run and its fault windows as annotations to this Grafana (env CHAOSRUN_GRAFANA_URL)")
	fl.StringVar(&f.GrafanaToken, "grafana-token", getenv("CHAOSRUN_GRAFANA_TOKEN"), "Grafana service-account token (env CHAOSRUN_GRAFANA_TOKEN)")
	fl.StringArrayVar(&f.Labels, "export-label", nil, "add NAME=VALUE to every exported series, e.g. env=ci (repeatable)")
}

// Config checks the flags; its errors are usage errors.
func (f *Flags) Config() (Config, error) {
	cfg := Config{PromRW: f.PromRW, OTLP: f.OTLP, GrafanaURL: f.Grafana, GrafanaToken: f.GrafanaToken}
	for _, l := range f.Labels {
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

// Send exports one run where cfg says and says how it went on stderr,
// as command cmd; it returns false when a sink failed.
func Send(ctx context.Context, stderr io.Writer, cmd string, r *record.Run, cfg Config) bool {
	res, err := Export(ctx, r, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "chaosrun %s: export %s: %v\n", cmd, r.Scenario, err)
		return false
	}
	fmt.Fprintf(stderr, "exported %s (run %s): %s\n", r.Scenario, RunID(r), res)
	return true
}

// ExportResults is chaosrun export-results: it sends the finished runs
// args name (run records or folders of them, resolved against wd) where
// the flags say, saying how each went on stderr. Bad flags, nowhere to
// send to and records that cannot be read exit 2; a failed sink 3.
func (f *Flags) ExportResults(ctx context.Context, wd workdir.FS, stderr io.Writer, args []string) error {
	cfg, err := f.Config()
	if err == nil && !cfg.Enabled() {
		err = fmt.Errorf("nowhere to send: give --export-prom-rw, --export-otlp or --grafana-url")
	}
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	paths := make([]string, len(args))
	for i, a := range args {
		paths[i] = wd.Path(a)
	}
	runs, err := report.ReadRuns(ctx, paths)
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	code := exitcode.OK
	for _, r := range runs {
		if !Send(ctx, stderr, "export-results", r, cfg) {
			code = exitcode.RunError
		}
	}
	return exitcode.Exit(code)
}
