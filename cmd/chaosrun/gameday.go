package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/gameday"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
)

// gamedayFlags are gameday's flags.
type gamedayFlags struct {
	sets, guards, allow         []string
	grace, slide, maxDur        time.Duration
	listen, token, bed, k6, out string
	shards                      int
	results                     runner.ResultsFlags
}

// newGamedayCmd runs a game day: steady load, a page to inject faults by
// hand and watch the SLOs live, stop conditions, and the run's report at
// the end.
func newGamedayCmd(st *State) *cobra.Command {
	var f gamedayFlags
	cmd := &cobra.Command{
		Use:   "gameday [flags] SCENARIO.yaml",
		Short: "steady load, a live page to inject faults and watch SLOs, stop conditions",
		Long: `Stand up the scenario's testbed, run its workload at steady load until stopped
(Ctrl-C, the page's Stop button or --max-duration) and serve a page to inject and
clear faults while the scenario's SLOs are shown live. OUT-DIR/SCENARIO-gameday
gets the run's record and reports.`,
		Example:           "  chaosrun gameday --guard check-p99-isolated --grace 5s scenarios/bank-slow-vault.yaml",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGameday(cmd.Context(), st, &f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	fl.StringArrayVar(&f.guards, "guard", nil, "assertion of the scenario that is a stop condition: when it breaches for longer than --grace, every fault is reverted (repeatable)")
	fl.StringArrayVar(&f.allow, "allow-target", nil, "let load reach this host or host:port besides loopback and the testbed's services (repeatable)")
	fl.DurationVar(&f.grace, "grace", 5*time.Second, "how long a guard may breach before every fault is reverted")
	fl.DurationVar(&f.slide, "window", 10*time.Second, "sliding window of the live SLOs")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:0", "address of the game day's page and API (other than loopback needs --token)")
	fl.StringVar(&f.token, "token", "", "token the page and API require (default: none on loopback; env CHAOSRUN_GAMEDAY_TOKEN)")
	fl.DurationVar(&f.maxDur, "max-duration", time.Hour, "stop the load after this long at the latest")
	testbedFlag(cmd, &f.bed)
	fl.StringVar(&f.k6, "k6", "", "for a workload with engine: k6, use this k6 binary (built with xk6-resilience) instead of building one")
	fl.StringVar(&f.out, "out-dir", "chaosrun-results", "folder for the record, report and logs (sub-folder SCENARIO-gameday)")
	shardsFlag(cmd, &f.shards)
	f.results.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	return cmd
}

// check checks the flags and loads the scenario.
func (f *gamedayFlags) check(ctx context.Context, st *State, file string) (*scenario.Scenario, error) {
	if f.token == "" {
		f.token = st.Getenv("CHAOSRUN_GAMEDAY_TOKEN")
	}
	if err := checkTestbed(f.bed); err != nil {
		return nil, err
	}
	if f.grace <= 0 || f.slide < 2*time.Second || f.maxDur <= 0 {
		return nil, failf(exitUsage, "--grace and --max-duration must be positive and --window at least 2s")
	}
	if err := gameday.CheckListen(f.listen, f.token); err != nil {
		return nil, fail(exitUsage, err)
	}
	sc, err := loadScenario(ctx, st, file, f.sets)
	if err != nil {
		return nil, scenarioFailed(ctx, st, err)
	}
	if err := gameday.CheckGuards(sc, f.guards); err != nil {
		return nil, fail(exitUsage, err)
	}
	return sc, nil
}

func runGameday(ctx context.Context, st *State, f *gamedayFlags, file string) error {
	sc, err := f.check(ctx, st, file)
	if err != nil {
		return err
	}
	allowed, err := scenarioload.BlastRadius(sc, f.allow)
	if err != nil {
		fmt.Fprintln(st.Stderr, err)
		return exit(exitUsage)
	}
	results, err := f.results.Settings(st.files(), st.Stderr)
	if err != nil {
		return fail(exitUsage, err)
	}
	if err := checkShards(f.shards); err != nil {
		return err
	}
	s, err := prepare(ctx, st, f.k6, f.bed, f.shards, results, []*scenario.Scenario{sc})
	if err != nil {
		return err
	}
	dir := filepath.Join(st.path(f.out), sc.Name+"-gameday")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return failf(exitRunError, "out dir: %w", err)
	}
	fmt.Fprintf(st.Stderr, "▶ game day %s: testbed %s, load until stopped (at most %s)\n", sc.Name, f.bed, f.maxDur)
	rec, rerr := gameday.Run(ctx, gameday.Options{
		Scenario: sc, Testbed: s.Testbed(sc, filepath.Join(dir, "logs")), Load: s.Load(sc), OutDir: dir,
		Listen: f.listen, Token: f.token, Guards: f.guards, Grace: f.grace, Slide: f.slide, MaxDuration: f.maxDur,
		Allowed: allowed, Log: st.Stderr, Versions: s.Versions(sc), Overrides: f.sets,
		Ready: func(url string) {
			fmt.Fprintf(st.Stdout, "game day page: %s\n", url)
			fmt.Fprintln(st.Stderr, "press Ctrl-C or the page's Stop button to end the game day")
		},
	})
	if rec == nil {
		return fail(exitUsage, rerr)
	}
	defer rec.Close()
	werr := report.WriteAll(dir, rec)
	printLines(st, "chaosrun gameday", werr)
	report.Table(st.Stdout, rec)
	fmt.Fprintf(st.Stderr, "game day record: %s (report: %s)\n", filepath.Join(dir, "run.json"), filepath.Join(dir, "report.html"))
	switch {
	case rerr != nil && (errors.Is(rerr, gameday.ErrInterrupted) || ctx.Err() != nil):
		// Ctrl-C is the ordinary way to end a game day.
		return failf(exitInterrupted, "ended by interrupt")
	case rerr != nil:
		return fail(exitRunError, rerr)
	case werr != nil:
		return exit(exitRunError)
	}
	return nil
}
