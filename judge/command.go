package judge

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"

	"github.com/chaosrun/chaosrun/export/metrics"
	"github.com/chaosrun/chaosrun/internal/buildinfo"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
)

// Command is chaosrun judge: its options and where the judged run is
// exported.
type Command struct {
	Options
	Export metrics.Settings
}

// Run judges the scenario args[0] names over the results files the rest
// name, or over the shards' streams it receives; it writes the record and
// reports and ends the command with run's exit codes.
func (c *Command) Run(ctx context.Context, l scenarioload.Loader, stdout, stderr io.Writer, args []string) error {
	cfg, err := c.Export.Config()
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	sc, err := l.Scenario(ctx, args[0], c.Sets, stderr)
	if err != nil {
		return err
	}
	rec, err := c.judge(ctx, l, stderr, sc, args[1:])
	if err != nil {
		return err
	}
	defer rec.Close()
	// Sent as run sends a finished run; a failed export is reported, not a breach.
	if cfg.Enabled() {
		metrics.Send(ctx, stderr, "judge", rec, cfg)
	}
	return outcome(ctx, filepath.Join(l.FS.Path(c.OutDir), sc.Name), sc, rec, stdout, stderr)
}

// judge is sc's run: received when --listen is given, else read from
// files.
func (c *Command) judge(ctx context.Context, l scenarioload.Loader, stderr io.Writer, sc *scenario.Scenario, files []string) (*record.Run, error) {
	versions := map[string]string{"chaosrun": buildinfo.Version(), "engine": sc.Workload.EngineName()}
	switch {
	case c.Listen != "" && len(files) > 0:
		return nil, exitcode.Failf(exitcode.Usage, "give results files or --listen, not both")
	case c.Listen != "":
		ro, err := c.ReceiveOptions(ctx, l.FS, stderr)
		if err != nil {
			return nil, exitcode.Fail(exitcode.Usage, err)
		}
		ro.Versions, ro.SpillDir = versions, ""
		rec, err := Receive(ctx, sc, ro)
		if err != nil {
			return nil, exitcode.Fail(exitcode.RunError, err)
		}
		return rec, nil
	}
	fo, err := c.FileOptions(ctx, l.FS, files, versions)
	if err != nil {
		return nil, exitcode.Fail(exitcode.Usage, err)
	}
	rec, err := FromFiles(ctx, sc, fo)
	if ie := (*InputError)(nil); errors.As(err, &ie) {
		return nil, exitcode.Fail(exitcode.Usage, err)
	}
	if err != nil {
		return nil, exitcode.Fail(exitcode.RunError, err)
	}
	return rec, nil
}

// outcome writes the record and reports to dir and says the verdict,
// with run's exit codes.
func outcome(ctx context.Context, dir string, sc *scenario.Scenario, rec *record.Run, stdout, stderr io.Writer) error {
	werr := WriteRecord(dir, rec, stdout, stderr)
	switch {
	case ctx.Err() != nil:
		return exitcode.Failf(exitcode.Interrupted, "%s interrupted; the record is marked incomplete", sc.Name)
	case werr != nil:
		return exitcode.Exit(exitcode.RunError)
	case rec.Incomplete:
		return exitcode.Failf(exitcode.RunError, "%s incomplete: %s", sc.Name, strings.Join(rec.Problems, "; "))
	case !report.Passed(rec):
		return exitcode.Failf(exitcode.Breach, "%s breached: %s", sc.Name, strings.Join(report.Failed(rec), ", "))
	}
	return nil
}
