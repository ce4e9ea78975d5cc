package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/gameday"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
)

// gamedayFlags are gameday's flags.
type gamedayFlags struct {
	gameday.Flags
	setup   setup.Flags
	results runner.ResultsFlags
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
	f.Register(cmd.Flags())
	setupFlags(cmd, &f.setup)
	f.results.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	return cmd
}

// check checks the flags and loads the scenario.
func (f *gamedayFlags) check(ctx context.Context, st *State, file string) (*scenario.Scenario, error) {
	if err := f.setup.CheckTestbed(); err != nil {
		return nil, exitcode.Fail(exitUsage, err)
	}
	if err := f.Check(st.Getenv); err != nil {
		return nil, exitcode.Fail(exitUsage, err)
	}
	sc, err := loadScenario(ctx, st, file, f.Sets)
	if err != nil {
		return nil, scenarioFailed(ctx, st, err)
	}
	if err := gameday.CheckGuards(sc, f.Guards); err != nil {
		return nil, exitcode.Fail(exitUsage, err)
	}
	return sc, nil
}

func runGameday(ctx context.Context, st *State, f *gamedayFlags, file string) error {
	sc, err := f.check(ctx, st, file)
	if err != nil {
		return err
	}
	allowed, err := scenarioload.BlastRadius(sc, f.Allow)
	if err != nil {
		fmt.Fprintln(st.Stderr, err)
		return exitcode.Exit(exitUsage)
	}
	results, err := f.results.Settings(st.files(), st.Stderr)
	if err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	if err := f.setup.CheckShards(); err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	s, err := prepare(ctx, st, f.K6, f.setup, results, []*scenario.Scenario{sc})
	if err != nil {
		return err
	}
	dir := filepath.Join(st.path(f.OutDir), sc.Name+"-gameday")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return exitcode.Failf(exitRunError, "out dir: %w", err)
	}
	fmt.Fprintf(st.Stderr, "▶ game day %s: testbed %s, load until stopped (at most %s)\n", sc.Name, f.setup.Testbed, f.MaxDuration)
	o := f.Options()
	o.Scenario, o.Testbed, o.Load, o.OutDir = sc, s.Testbed(sc, filepath.Join(dir, "logs")), s.Load(sc), dir
	o.Allowed, o.Log, o.Versions = allowed, st.Stderr, s.Versions(sc)
	o.Ready = func(url string) {
		fmt.Fprintf(st.Stdout, "game day page: %s\n", url)
		fmt.Fprintln(st.Stderr, "press Ctrl-C or the page's Stop button to end the game day")
	}
	rec, rerr := gameday.Run(ctx, o)
	if rec == nil {
		return exitcode.Fail(exitUsage, rerr)
	}
	defer rec.Close()
	werr := gameday.WriteRecord(dir, rec, st.Stdout, st.Stderr)
	switch {
	case rerr != nil && (errors.Is(rerr, gameday.ErrInterrupted) || ctx.Err() != nil):
		// Ctrl-C is the ordinary way to end a game day.
		return exitcode.Failf(exitInterrupted, "ended by interrupt")
	case rerr != nil:
		return exitcode.Fail(exitRunError, rerr)
	case werr != nil:
		return exitcode.Exit(exitRunError)
	}
	return nil
}
