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

	"github.com/chaosrun/chaosrun/guard"
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
}

func newRunCmd(st *State) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] SCENARIO.yaml|DIR ...",
		Short: "run scenarios (files or folders) and judge them",
		Long: `Run scenarios (files, or folders of *.yaml/*.yml) one after the other and judge
each: exit 0 when all hold, 1 on a breach, 2 for a bad scenario or flags, 3 on a
harness error, 130 when interrupted. Every scenario is validated before any starts.`,
		Example:           "  chaosrun run --set bank.bulkheads=off scenarios/bank-slow-vault.yaml",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScenarios(cmd.Context(), st, &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	testbedFlag(cmd, &f.bed)
	fl.StringVar(&f.k6, "k6", "", "use this k6 binary (built with xk6-resilience) instead of building one")
	fl.StringVar(&f.outDir, "out-dir", "chaosrun-results", "folder for run records, summaries and logs (one sub-folder per scenario)")
	fl.DurationVar(&f.timeout, "timeout", 0, "hard wall-clock limit per scenario (default: load duration + 3m, or the scenario's timeout)")
	fl.DurationVar(&f.totalTimeout, "total-timeout", 0, "wall-clock limit for all scenarios together; those not finished by then are not run (default: none)")
	fl.Int64Var(&f.seed, "seed", 0, "seed for every random choice (default: the scenario's, else random)")
	fl.BoolVar(&f.quiet, "quiet", false, "no live progress line")
	fl.IntVar(&f.shards, "load-shards", 1, "run the workload as N k6 processes (k6 execution segments) and merge their results")
	f.results.register(cmd, st)
	fl.StringArrayVar(&f.allow, "allow-target", nil, "let load reach this host or host:port besides loopback and the testbed's services (repeatable)")
	return cmd
}

func runScenarios(ctx context.Context, st *State, f *runFlags, args []string) error {
	if f.shards < 1 || f.shards > 16 {
		return failf(exitUsage, "--load-shards %d out of range (allowed: 1 to 16)", f.shards)
	}
	if err := checkTestbed(f.bed); err != nil {
		return err
	}
	results, err := f.results.settings(st)
	if err != nil {
		return fail(exitUsage, err)
	}
	scs, err := loadAll(st, f, args)
	if err != nil {
		return err
	}
	eng, err := prepare(ctx, st, f.k6, f.bed)
	if err != nil {
		return err
	}
	if f.totalTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.totalTimeout)
		defer cancel()
	}
	worst, done := runEach(ctx, st, f, scs, runSettings{eng: eng, shards: f.shards, results: results, bed: f.bed,
		outDir: st.path(f.outDir), timeout: f.timeout, quiet: f.quiet, sets: f.sets, build: eng.took})
	if len(scs) > 1 {
		dir := st.path(f.outDir)
		if err := report.WriteCombined(dir, done); err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun run: combined report: %v\n", err)
			worst = max(worst, exitRunError)
		} else {
			fmt.Fprintf(st.Stderr, "combined report: %s\n", filepath.Join(dir, "index.html"))
		}
	}
	return exit(worst)
}

// loadAll loads and validates every scenario before anything starts,
// saying what is wrong with each.
func loadAll(st *State, f *runFlags, args []string) ([]*scenario.Scenario, error) {
	files, err := scenarioFiles(st, args)
	if err != nil {
		return nil, fail(exitUsage, err)
	}
	var scs []*scenario.Scenario
	bad := false
	for _, file := range files {
		sc, err := loadScenario(st, file, f.sets)
		if err == nil && f.seed != 0 {
			sc.Seed = f.seed
		}
		if err == nil {
			if _, err = blastRadius(sc, f.allow); err != nil {
				err = fmt.Errorf("%s: %w", file, err)
			}
		}
		if err != nil {
			fmt.Fprintln(st.Stderr, err)
			bad = true
			continue
		}
		scs = append(scs, sc)
	}
	if bad {
		return nil, exit(exitUsage)
	}
	return scs, nil
}

// runEach runs the scenarios in turn until one is interrupted or the
// total timeout ends; it returns the worst exit code and the records.
func runEach(ctx context.Context, st *State, f *runFlags, scs []*scenario.Scenario, rs runSettings) (int, []*record.Run) {
	var done []*record.Run
	worst := exitOK
	for _, sc := range scs {
		rs.allowed, _ = blastRadius(sc, f.allow)
		code := runOne(ctx, st, sc, rs)
		rs.build = 0
		// Kept for the combined report without their windows, which are
		// read from the file again when needed: memory stays flat in the
		// catalog's length.
		if rec, err := report.OpenJSON(filepath.Join(rs.outDir, sc.Name, "run.json")); err == nil {
			done = append(done, rec)
		}
		if f.totalTimeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintf(st.Stderr, "chaosrun run: --total-timeout %s reached in %s; the scenarios after it were not run\n", f.totalTimeout, sc.Name)
			// Cut by the total bound, not by the user: a run error.
			worst = max(worst, exitRunError)
			if code != exitInterrupted {
				worst = max(worst, code)
			}
			break
		}
		worst = max(worst, code)
		if code == exitInterrupted {
			break
		}
	}
	return worst, done
}

// runSettings are what every scenario of one `chaosrun run` shares.
type runSettings struct {
	eng     engine
	shards  int
	results runner.Results
	allowed *guard.Allowed
	outDir  string
	bed     string
	timeout time.Duration
	quiet   bool
	sets    []string
	build   time.Duration
}

// runOne runs one scenario, writes its record and reports, and returns
// its exit code.
func runOne(ctx context.Context, st *State, sc *scenario.Scenario, rs runSettings) int {
	dir := filepath.Join(rs.outDir, sc.Name)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun run: out dir: %v\n", err)
		return exitRunError
	}
	fmt.Fprintf(st.Stderr, "▶ %s: %s of load, %d fault(s), %d assertion(s); testbed %s\n",
		sc.Name, sc.Workload.Duration.Std(), len(sc.Faults), len(sc.Assertions), rs.bed)
	progress := st.Stderr
	if rs.quiet {
		progress = nil
	}
	rec, err := runner.Run(ctx, runner.Options{
		Scenario: sc, Testbed: newTestbed(st, rs.bed, rs.eng.image, sc, filepath.Join(dir, "logs")),
		K6: rs.eng.k6.Path, ScriptDir: filepath.Join(rs.eng.root, "workloads"), OutDir: dir,
		Timeout: rs.timeout, Progress: progress, Overwrite: st.IsTerminal,
		Versions: rs.eng.versions(), Overrides: rs.sets, BuildTime: rs.build,
		Allowed: rs.allowed, LoadShards: rs.shards, Results: rs.results,
	})
	defer rec.Close()
	werr := report.WriteAll(dir, rec)
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
