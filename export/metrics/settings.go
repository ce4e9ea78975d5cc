package metrics

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

// Settings say where a run's series, verdicts and fault windows go (run,
// judge and export-results; the command line fills them).
type Settings struct {
	PromRW, OTLP, Grafana, GrafanaToken string
	Labels                              []string
}

// Config checks the settings; its errors are usage errors.
func (f *Settings) Config() (Config, error) {
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
func (f *Settings) ExportResults(ctx context.Context, wd workdir.FS, stderr io.Writer, args []string) error {
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
