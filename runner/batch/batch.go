// Package batch runs scenarios one after another, as `chaosrun run` does:
// each into its own folder with its record, reports and logs, a combined
// report over several, and the worst outcome as the exit code.
package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
)

// Options say what to run and where its results go.
type Options struct {
	// Scenarios run in this order, each into OutDir/NAME.
	Scenarios []*scenario.Scenario
	// Setup makes each run's load and testbed.
	Setup *setup.Setup
	// OutDir is the folder of the runs' folders.
	OutDir string
	// Testbed names where services run, for each run's first line.
	Testbed string
	// Timeout bounds each run (zero: its own default); TotalTimeout all
	// of them (zero: none): those not finished by then are not run.
	Timeout, TotalTimeout time.Duration
	// Overrides are the --set overrides the scenarios were loaded with.
	Overrides []string
	// Allow is what load may reach besides loopback and the services.
	Allow []string
	// Quiet shows no live progress line; Overwrite rewrites it in place
	// (a terminal).
	Quiet, Overwrite bool
	// Stdout gets each run's verdict table, Stderr everything else.
	Stdout, Stderr io.Writer
	// Export, when set, sends each run elsewhere once its reports are
	// written; it reports on its own, and a failed export is no breach.
	Export func(context.Context, *record.Run)
}

// Run runs every scenario in turn until one is interrupted or
// TotalTimeout ends, and returns the worst exit code (see exitcode).
func Run(ctx context.Context, o Options) int {
	if o.TotalTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.TotalTimeout)
		defer cancel()
	}
	worst := exitcode.OK
	var done []*record.Run
	for i, sc := range o.Scenarios {
		ro := runner.Options{Scenario: sc, Load: o.Setup.Load(sc)}
		if i == 0 {
			ro.BuildTime = o.Setup.Took
		}
		code := o.one(ctx, ro, filepath.Join(o.OutDir, sc.Name))
		// Kept for the combined report without their windows, which are
		// read from the file again when needed: memory stays flat in the
		// catalog's length.
		if rec, err := record.OpenJSON(filepath.Join(o.OutDir, sc.Name, "run.json")); err == nil {
			done = append(done, rec)
		}
		if o.TotalTimeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintf(o.Stderr, "chaosrun run: --total-timeout %s reached in %s; the scenarios after it were not run\n", o.TotalTimeout, sc.Name)
			// Cut by the total bound, not by the user: a run error.
			if worst = max(worst, exitcode.RunError); code != exitcode.Interrupted {
				worst = max(worst, code)
			}
			break
		}
		if worst = max(worst, code); code == exitcode.Interrupted {
			break
		}
	}
	if len(o.Scenarios) > 1 {
		if err := report.WriteCombined(o.OutDir, done); err != nil {
			fmt.Fprintf(o.Stderr, "chaosrun run: combined report: %v\n", err)
			worst = max(worst, exitcode.RunError)
		} else {
			fmt.Fprintf(o.Stderr, "combined report: %s\n", filepath.Join(o.OutDir, "index.html"))
		}
	}
	return worst
}

// one runs one scenario into dir, writes its record and reports, and
// returns its exit code.
func (o *Options) one(ctx context.Context, ro runner.Options, dir string) int {
	sc := ro.Scenario
	if err := report.ClearStale(dir); err != nil {
		fmt.Fprintf(o.Stderr, "chaosrun run: out dir: an earlier run's files: %v\n", err)
		return exitcode.RunError
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		fmt.Fprintf(o.Stderr, "chaosrun run: out dir: %v\n", err)
		return exitcode.RunError
	}
	fmt.Fprintf(o.Stderr, "▶ %s: %s of load, %d fault(s), %d assertion(s); testbed %s\n",
		sc.Name, sc.Workload.Duration.Std(), len(sc.Faults), len(sc.Assertions), o.Testbed)
	ro.Testbed, ro.OutDir = o.Setup.Testbed(sc, filepath.Join(dir, "logs")), dir
	ro.Versions, ro.Timeout, ro.Overwrite, ro.Overrides = o.Setup.Versions(sc), o.Timeout, o.Overwrite, o.Overrides
	ro.Allowed, _ = scenarioload.BlastRadius(sc, o.Allow)
	if ro.Progress = o.Stderr; o.Quiet {
		ro.Progress = nil
	}
	rec, err := runner.Run(ctx, ro)
	defer rec.Close()
	werr := report.WriteAll(dir, rec)
	if o.Export != nil {
		o.Export(ctx, rec)
	}
	report.Table(o.Stdout, rec)
	report.PrintLines(o.Stderr, "chaosrun run", werr)
	fmt.Fprintf(o.Stderr, "run record: %s\n", filepath.Join(dir, "run.json"))
	switch {
	case err != nil && (errors.Is(err, runner.ErrInterrupted) || ctx.Err() != nil):
		fmt.Fprintf(o.Stderr, "chaosrun run: %s interrupted; the record is marked incomplete\n", sc.Name)
		return exitcode.Interrupted
	case err != nil:
		fmt.Fprintf(o.Stderr, "chaosrun run: %s: %v\n", sc.Name, err)
		return exitcode.RunError
	case werr != nil:
		return exitcode.RunError
	case !report.Passed(rec):
		if rec.Aborted != "" {
			fmt.Fprintf(o.Stderr, "chaosrun run: %s aborted: %s\n", sc.Name, rec.Aborted)
		}
		fmt.Fprintf(o.Stderr, "chaosrun run: %s breached: %s\n", sc.Name, strings.Join(report.Failed(rec), ", "))
		return exitcode.Breach
	}
	return exitcode.OK
}
