package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// scenarioOptions wires the fault and assertion checkers into the loader.
func scenarioOptions() scenario.Options {
	return scenario.Options{
		FaultKind: faults.Check,
		Check:     assertions.ValidateCheck,
		Metric:    assertions.ValidateMetric,
		Targets:   targetNames(),
		HostKind:  faults.IsHostKind,
	}
}

// loadScenario loads a file, applies --set overrides and validates the result.
func loadScenario(file string, sets []string) (*scenario.Scenario, error) {
	sc, err := scenario.Load(file, scenarioOptions())
	if err != nil {
		return nil, err
	}
	if err := scenario.Apply(sc, sets); err != nil {
		return nil, err
	}
	if err := scenario.Validate(sc, scenarioOptions()); err != nil {
		return nil, err
	}
	return sc, nil
}

// blastRadius is what a scenario's load may reach beyond loopback and its
// own services; it refuses parameters that point anywhere else.
func blastRadius(sc *scenario.Scenario, allow []string) (*guard.Allowed, error) {
	a, err := guard.Parse(append(append([]string{}, allow...), sc.AllowTargets...))
	if err != nil {
		return nil, err
	}
	return a, a.CheckParams(sc.Workload.Params)
}

// scenarioFiles expands folders into their *.yaml/*.yml files, in name order.
func scenarioFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		for _, pat := range []string{"*.yaml", "*.yml"} {
			m, _ := filepath.Glob(filepath.Join(a, pat))
			found = append(found, m...)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no scenario files (*.yaml, *.yml)", a)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func cmdRun(ctx context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	var sets stringList
	fs.Var(&sets, "set", "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	bed := fs.String("testbed", "local", "where services run: local (child processes) or docker (containers)")
	k6path := fs.String("k6", "", "use this k6 binary (built with xk6-resilience) instead of building one")
	outDir := fs.String("out-dir", "chaosrun-results", "folder for run records, summaries and logs (one sub-folder per scenario)")
	timeout := fs.Duration("timeout", 0, "hard wall-clock limit per scenario (default: load duration + 3m, or the scenario's timeout)")
	totalTimeout := fs.Duration("total-timeout", 0, "wall-clock limit for all scenarios together; those not finished by then are not run (default: none)")
	seed := fs.Int64("seed", 0, "seed for every random choice (default: the scenario's, else random)")
	quiet := fs.Bool("quiet", false, "no live progress line")
	shards := fs.Int("load-shards", 1, "run the workload as N k6 processes (k6 execution segments) and merge their results")
	var rf resultsFlags
	rf.register(fs, st)
	var allow stringList
	fs.Var(&allow, "allow-target", "let load reach this host or host:port besides loopback and the testbed's services (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun run [flags] SCENARIO.yaml|DIR ...")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	if *shards < 1 || *shards > 16 {
		fmt.Fprintf(st.Stderr, "chaosrun run: --load-shards %d out of range (allowed: 1 to 16)\n", *shards)
		return exitUsage
	}
	if *bed != "local" && *bed != "docker" {
		fmt.Fprintf(st.Stderr, "chaosrun run: --testbed %q is not available (allowed: local, docker)\n", *bed)
		return exitUsage
	}
	results, err := rf.settings(st)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun run: %v\n", err)
		return exitUsage
	}
	files, err := scenarioFiles(fs.Args())
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun run: %v\n", err)
		return exitUsage
	}
	// Every scenario is loaded and validated before anything starts.
	var scs []*scenario.Scenario
	bad := false
	for _, f := range files {
		sc, err := loadScenario(f, sets)
		if err != nil {
			fmt.Fprintln(st.Stderr, err)
			bad = true
			continue
		}
		if *seed != 0 {
			sc.Seed = *seed
		}
		if _, err := blastRadius(sc, allow); err != nil {
			fmt.Fprintf(st.Stderr, "%s: %v\n", f, err)
			bad = true
			continue
		}
		scs = append(scs, sc)
	}
	if bad {
		return exitUsage
	}

	root, err := k6build.FindRoot("")
	if err != nil && *k6path == "" {
		fmt.Fprintf(st.Stderr, "chaosrun run: %v\n", err)
		return exitRunError
	}
	t0 := time.Now()
	bin, err := k6build.Ensure(ctx, k6build.Options{K6Path: *k6path, Root: root, Progress: st.Stderr})
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun run: k6: %v\n", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitRunError
	}
	var image string
	if *bed == "docker" {
		if image, err = dockerImage(ctx, st, root); err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun run: %v\n", err)
			if ctx.Err() != nil {
				return exitInterrupted
			}
			return exitRunError
		}
	}
	buildTime := time.Since(t0)

	if *totalTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *totalTimeout)
		defer cancel()
	}
	var done []*record.Run
	worst := exitOK
	for _, sc := range scs {
		allowed, _ := blastRadius(sc, allow)
		code := runOne(ctx, st, sc, runSettings{allowed: allowed, shards: *shards, results: results, bed: *bed, image: image, k6: bin.Path, k6Version: bin.Version, root: root, outDir: *outDir, timeout: *timeout, quiet: *quiet, sets: sets, build: buildTime})
		buildTime = 0
		// Kept for the combined report without their windows, which are
		// read from the file again when needed: memory stays flat in the
		// catalog's length.
		if rec, err := record.OpenJSON(filepath.Join(*outDir, sc.Name, "run.json")); err == nil {
			done = append(done, rec)
		}
		if *totalTimeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			fmt.Fprintf(st.Stderr, "chaosrun run: --total-timeout %s reached in %s; the scenarios after it were not run\n", *totalTimeout, sc.Name)
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
	if len(scs) > 1 {
		if err := report.WriteCombined(*outDir, done); err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun run: combined report: %v\n", err)
			worst = max(worst, exitRunError)
		} else {
			fmt.Fprintf(st.Stderr, "combined report: %s\n", filepath.Join(*outDir, "index.html"))
		}
	}
	return worst
}

type runSettings struct {
	shards                      int
	results                     runner.Results
	allowed                     *guard.Allowed
	k6, k6Version, root, outDir string
	bed, image                  string
	timeout                     time.Duration
	quiet                       bool
	sets                        []string
	build                       time.Duration
}

func runOne(ctx context.Context, st *State, sc *scenario.Scenario, rs runSettings) int {
	dir := filepath.Join(rs.outDir, sc.Name)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun run: out dir: %v\n", err)
		return exitRunError
	}
	fmt.Fprintf(st.Stderr, "▶ %s: %s of load, %d fault(s), %d assertion(s); testbed %s\n",
		sc.Name, sc.Workload.Duration.Std(), len(sc.Faults), len(sc.Assertions), rs.bed)
	var progress = st.Stderr
	if rs.quiet {
		progress = nil
	}
	rec, err := runner.Run(ctx, runner.Options{
		Scenario:   sc,
		Testbed:    newTestbed(st, rs, sc, filepath.Join(dir, "logs")),
		K6:         rs.k6,
		ScriptDir:  filepath.Join(rs.root, "workloads"),
		OutDir:     dir,
		Timeout:    rs.timeout,
		Progress:   progress,
		Overwrite:  st.IsTerminal,
		Versions:   map[string]string{"chaosrun": version(), "k6": rs.k6Version},
		Overrides:  rs.sets,
		BuildTime:  rs.build,
		Allowed:    rs.allowed,
		LoadShards: rs.shards,
		Results:    rs.results,
	})
	defer rec.Close()
	var writeErrs []string
	if werr := record.WriteJSON(filepath.Join(dir, "run.json"), rec); werr != nil {
		writeErrs = append(writeErrs, werr.Error())
	}
	if werr := report.WriteMarkdown(filepath.Join(dir, "summary.md"), rec); werr != nil {
		writeErrs = append(writeErrs, werr.Error())
	}
	if werr := report.WriteHTML(filepath.Join(dir, "report.html"), rec); werr != nil {
		writeErrs = append(writeErrs, werr.Error())
	}
	if werr := report.WriteJUnit(filepath.Join(dir, "junit.xml"), rec); werr != nil {
		writeErrs = append(writeErrs, werr.Error())
	}
	report.Table(st.Stdout, rec)
	for _, w := range writeErrs {
		fmt.Fprintf(st.Stderr, "chaosrun run: %s\n", w)
	}
	fmt.Fprintf(st.Stderr, "run record: %s\n", filepath.Join(dir, "run.json"))
	switch {
	case err != nil && (errors.Is(err, runner.ErrInterrupted) || ctx.Err() != nil):
		fmt.Fprintf(st.Stderr, "chaosrun run: %s interrupted; the record is marked incomplete\n", sc.Name)
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(st.Stderr, "chaosrun run: %s: %v\n", sc.Name, err)
		return exitRunError
	case len(writeErrs) > 0:
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

func cmdValidate(_ context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	var sets stringList
	fs.Var(&sets, "set", "apply an override before validating (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun validate [--set K=V] SCENARIO.yaml|DIR ...")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	files, err := scenarioFiles(fs.Args())
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun validate: %v\n", err)
		return exitUsage
	}
	code := exitOK
	for _, f := range files {
		sc, err := loadScenario(f, sets)
		if err != nil {
			fmt.Fprintln(st.Stderr, err)
			code = exitUsage
			continue
		}
		fmt.Fprintf(st.Stdout, "%s: ok (%s: %d services, %d faults, %d assertions)\n", f, sc.Name, len(sc.Services), len(sc.Faults), len(sc.Assertions))
	}
	return code
}

func cmdSchema(_ context.Context, st *State, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(st.Stderr, "usage: chaosrun schema   (prints the scenario JSON Schema)")
		return exitUsage
	}
	b, err := scenario.Schema()
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun schema: %v\n", err)
		return exitRunError
	}
	st.Stdout.Write(b)
	return exitOK
}
