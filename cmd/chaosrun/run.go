package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/scenario"
)

// runFlags are run's flags.
type runFlags struct {
	sets, allow           []string
	bed, k6, outDir       string
	timeout, totalTimeout time.Duration
	seed                  int64
	quiet                 bool
	shards                int
	results               resultsFlags
	export                exportFlags
}

func newRunCmd(st *State) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:               "run [flags] SCENARIO.yaml|DIR ...",
		Short:             "run scenarios (files or folders) and judge them",
		Example:           "  chaosrun run scenarios/bank-slow-vault.yaml --set bank.bulkheads=off",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScenarios(cmd.Context(), st, &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	testbedFlag(cmd, &f.bed)
	fl.StringVar(&f.k6, "k6", "", "for workloads with engine: k6, use this k6 binary (built with xk6-resilience) instead of building one")
	fl.StringVar(&f.outDir, "out-dir", "chaosrun-results", "folder for run records, summaries and logs (one sub-folder per scenario)")
	fl.DurationVar(&f.timeout, "timeout", 0, "hard wall-clock limit per scenario (default: load duration + 3m, or the scenario's timeout)")
	fl.DurationVar(&f.totalTimeout, "total-timeout", 0, "wall-clock limit for all scenarios together; those not finished by then are not run (default: none)")
	fl.Int64Var(&f.seed, "seed", 0, "seed for every random choice (default: the scenario's, else random)")
	fl.BoolVar(&f.quiet, "quiet", false, "no live progress line")
	shardsFlag(cmd, &f.shards)
	f.results.register(cmd, st)
	f.export.register(cmd, st)
	fl.StringArrayVar(&f.allow, "allow-target", nil, "let load reach this host or host:port besides loopback and the testbed's services (repeatable)")
	return cmd
}

// runScenarios validates every scenario, then runs them in turn until one
// is interrupted or --total-timeout ends; the worst exit code is run's.
func runScenarios(ctx context.Context, st *State, f *runFlags, args []string) error {
	if err := checkShards(f.shards); err != nil {
		return err
	}
	if err := checkTestbed(f.bed); err != nil {
		return err
	}
	results, err := f.results.settings(st)
	if err != nil {
		return fail(exitUsage, err)
	}
	if _, err := f.export.config(); err != nil {
		return fail(exitUsage, err)
	}
	scs, err := loadAll(ctx, st, f, args)
	if err != nil {
		return err
	}
	eng, err := prepare(ctx, st, f.k6, f.bed, scs)
	if err != nil {
		return err
	}
	if f.totalTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.totalTimeout)
		defer cancel()
	}
	outDir, worst := st.path(f.outDir), exitOK
	var done []*record.Run
	for i, sc := range scs {
		o := runner.Options{Scenario: sc, Load: eng.load(st, sc, f.shards, results)}
		if i == 0 {
			o.BuildTime = eng.took
		}
		code := runOne(ctx, st, f, eng, o, filepath.Join(outDir, sc.Name))
		// Kept for the combined report without their windows, which are
		// read from the file again when needed: memory stays flat in the
		// catalog's length.
		if rec, err := record.OpenJSON(filepath.Join(outDir, sc.Name, "run.json")); err == nil {
			done = append(done, rec)
		}
		if f.totalTimeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintf(st.Stderr, "chaosrun run: --total-timeout %s reached in %s; the scenarios after it were not run\n", f.totalTimeout, sc.Name)
			// Cut by the total bound, not by the user: a run error.
			if worst = max(worst, exitRunError); code != exitInterrupted {
				worst = max(worst, code)
			}
			break
		}
		if worst = max(worst, code); code == exitInterrupted {
			break
		}
	}
	if len(scs) > 1 {
		if err := report.WriteCombined(outDir, done); err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun run: combined report: %v\n", err)
			worst = max(worst, exitRunError)
		} else {
			fmt.Fprintf(st.Stderr, "combined report: %s\n", filepath.Join(outDir, "index.html"))
		}
	}
	return exit(worst)
}

// loadAll loads and validates every scenario before anything starts,
// saying what is wrong with each.
func loadAll(ctx context.Context, st *State, f *runFlags, args []string) ([]*scenario.Scenario, error) {
	files, err := scenarioFiles(st, args)
	if err != nil {
		return nil, fail(exitUsage, err)
	}
	var scs []*scenario.Scenario
	for _, file := range files {
		sc, err := loadScenario(ctx, st, file, f.sets)
		if ctx.Err() != nil {
			return nil, scenarioFailed(ctx, st, err)
		}
		if err == nil {
			_, err = blastRadius(sc, f.allow)
		}
		if err != nil {
			fmt.Fprintln(st.Stderr, err)
			continue
		}
		if f.seed != 0 {
			sc.Seed = f.seed
		}
		scs = append(scs, sc)
	}
	if len(scs) < len(files) {
		return nil, exit(exitUsage)
	}
	return scs, nil
}

// runOne runs one scenario into dir, writes its record and reports, and
// returns its exit code.
func runOne(ctx context.Context, st *State, f *runFlags, eng engine, o runner.Options, dir string) int {
	sc := o.Scenario
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun run: out dir: %v\n", err)
		return exitRunError
	}
	fmt.Fprintf(st.Stderr, "▶ %s: %s of load, %d fault(s), %d assertion(s); testbed %s\n",
		sc.Name, sc.Workload.Duration.Std(), len(sc.Faults), len(sc.Assertions), f.bed)
	o.Testbed, o.OutDir = newTestbed(st, f.bed, eng.image, sc, filepath.Join(dir, "logs")), dir
	o.Versions, o.Timeout, o.Overwrite, o.Overrides = eng.versions(sc), f.timeout, st.IsTerminal, f.sets
	o.Allowed, _ = blastRadius(sc, f.allow)
	if o.Progress = st.Stderr; f.quiet {
		o.Progress = nil
	}
	rec, err := runner.Run(ctx, o)
	defer rec.Close()
	werr := report.WriteAll(dir, rec)
	if cfg, _ := f.export.config(); cfg.Enabled() {
		exportRun(ctx, st, "run", rec, cfg) // a failed export is reported, not a breach
	}
	report.Table(st.Stdout, rec)
	printLines(st, "chaosrun run", werr)
	fmt.Fprintf(st.Stderr, "run record: %s\n", filepath.Join(dir, "run.json"))
	switch {
	case err != nil && (errors.Is(err, runner.ErrInterrupted) || ctx.Err() != nil):
		fmt.Fprintf(st.Stderr, "chaosrun run: %s interrupted; the record is marked incomplete\n", sc.Name)
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(st.Stderr, "chaosrun run: %s: %v\n", sc.Name, err)
		return exitRunError
	case werr != nil:
		return exitRunError
	case !report.Passed(rec):
		var failed []string
		for _, v := range rec.Verdicts {
			if !v.Pass {
				failed = append(failed, v.Assertion)
			}
		}
		if rec.Aborted != "" {
			fmt.Fprintf(st.Stderr, "chaosrun run: %s aborted: %s\n", sc.Name, rec.Aborted)
		}
		fmt.Fprintf(st.Stderr, "chaosrun run: %s breached: %s\n", sc.Name, strings.Join(failed, ", "))
		return exitBreach
	}
	return exitOK
}

// printLines prints each line of err after prefix.
func printLines(st *State, prefix string, err error) {
	if err == nil {
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(st.Stderr, "%s: %s\n", prefix, line)
	}
}
