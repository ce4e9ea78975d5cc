package gameday

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
)

// Command is chaosrun gameday: its own flags, the testbed and shards, and
// where the results stream is received.
type Command struct {
	Flags
	Setup   setup.Flags
	Results runner.ResultsFlags
}

// NewCommand is gameday with every flag at its default.
func NewCommand() Command { return Command{Flags: DefaultFlags(), Setup: setup.DefaultFlags()} }

// Run runs a game day of the scenario in file: it checks the flags, sets
// the run up, runs it until stopped and writes its record and reports to
// OUT-DIR/SCENARIO-gameday. Ctrl-C, the ordinary end, stops it as the
// page's Stop does; the exit code follows the verdict (verdictExit).
func (c *Command) Run(ctx context.Context, env setup.Env, file string) error {
	o, err := c.prepare(ctx, env, file)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "▶ game day %s: testbed %s, load until stopped (at most %s)\n", o.Scenario.Name, c.Setup.Testbed, c.MaxDuration)
	o.Ready = func(url string) {
		fmt.Fprintf(env.Stdout, "game day page: %s\n", url)
		fmt.Fprintln(env.Stderr, "press Ctrl-C or the page's Stop button to end the game day")
	}
	rec, rerr := Run(ctx, o)
	if rec == nil {
		return exitcode.Fail(exitcode.Usage, rerr)
	}
	defer rec.Close()
	werr := WriteRecord(o.OutDir, rec, env.Stdout, env.Stderr)
	return verdictExit(o.Scenario.Name, rec, rerr, werr)
}

// verdictExit is the game day's exit code, which follows its printed
// verdict as run's does: 0 pass, 1 breach, 3 incomplete or a harness
// error, 130 an interrupt while the testbed was starting. Ctrl-C once
// load runs ends the day as Stop does, and is judged.
func verdictExit(name string, rec *record.Run, rerr, werr error) error {
	switch {
	case rerr != nil && errors.Is(rerr, ErrInterrupted):
		return exitcode.Failf(exitcode.Interrupted, "%s interrupted while starting; the record is marked incomplete", name)
	case rerr != nil:
		return exitcode.Fail(exitcode.RunError, rerr)
	case werr != nil:
		return exitcode.Exit(exitcode.RunError)
	case rec.Incomplete:
		return exitcode.Verdictf(exitcode.RunError, "%s incomplete: %s", name, strings.Join(rec.Problems, "; "))
	case !report.Passed(rec):
		return exitcode.Verdictf(exitcode.Breach, "%s breached: %s", name, strings.Join(report.Failed(rec), ", "))
	}
	return nil
}

// prepare checks the flags and the scenario, sets the run up and makes
// its out dir; it gives the game day's options but Ready.
func (c *Command) prepare(ctx context.Context, env setup.Env, file string) (Options, error) {
	sc, err := c.check(ctx, env, file)
	if err != nil {
		return Options{}, err
	}
	allowed, err := scenarioload.BlastRadius(sc, c.Allow)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return Options{}, exitcode.Exit(exitcode.Usage)
	}
	results, err := c.Results.Settings(ctx, env.Scenarios.FS, env.Stderr)
	if err == nil {
		err = c.Setup.CheckShards()
	}
	if err != nil {
		return Options{}, exitcode.Fail(exitcode.Usage, err)
	}
	s, err := c.Setup.Prepare(ctx, env, c.K6, results, []*scenario.Scenario{sc})
	if err != nil {
		return Options{}, err
	}
	dir := filepath.Join(env.Scenarios.FS.Path(c.OutDir), sc.Name+"-gameday")
	if err := report.ClearStale(dir); err != nil {
		return Options{}, exitcode.Failf(exitcode.RunError, "out dir: an earlier game day's files: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return Options{}, exitcode.Failf(exitcode.RunError, "out dir: %w", err)
	}
	o := c.Options()
	o.Scenario, o.Testbed, o.Load, o.OutDir = sc, s.Testbed(sc, filepath.Join(dir, "logs")), s.Load(sc), dir
	o.Allowed, o.Log, o.Versions = allowed, env.Stderr, s.Versions(sc)
	return o, nil
}

// check checks the flags and loads the scenario.
func (c *Command) check(ctx context.Context, env setup.Env, file string) (*scenario.Scenario, error) {
	if err := c.Setup.CheckTestbed(); err != nil {
		return nil, exitcode.Fail(exitcode.Usage, err)
	}
	if err := c.Check(env.Getenv); err != nil {
		return nil, exitcode.Fail(exitcode.Usage, err)
	}
	sc, err := env.Scenarios.Scenario(ctx, file, c.Sets, env.Stderr)
	if err != nil {
		return nil, err
	}
	if err := CheckGuards(sc, c.Guards); err != nil {
		return nil, exitcode.Fail(exitcode.Usage, err)
	}
	return sc, nil
}
