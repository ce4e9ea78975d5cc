package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/metrics"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/judge"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/scenario"
)

func newJudgeCmd(st *State) *cobra.Command {
	var (
		o  judge.Options
		ef metrics.Flags
	)
	cmd := &cobra.Command{
		Use:   "judge [flags] SCENARIO.yaml (RESULTS.jsonl… | --listen HOST:PORT --shards N)",
		Short: "judge a scenario over results files, or over N load shards' streams received from anywhere",
		Long: `Give a scenario's verdicts, record and reports without a testbed.
Files: over results files (k6 --out resilience=FILE, chaosrun load --results
FILE, a run's logs/results*.jsonl), one per shard, merged exactly; --faults
adds the fault timeline (a run record, which also gives load's start and end,
/metrics and end checks; or chaosrun fault apply --events-out's file).
Receive: listen for N shards' streams (chaosrun load --shard I/N, k6 --out
resilience=tcp://…) and for fault apply --report-to's events on the next
port, wait for every shard's end, and judge the merged stream; a shard that
never connects or dies fails the verdict by name.
Exit codes: 0 every check holds, 1 a breach, 2 bad usage, scenario or input
(a results file cut short or malformed), 3 incomplete (a shard missing or
dead, no load), 130 interrupted.`,
		Example: `  chaosrun judge scenarios/bank-slow-vault.yaml results.jsonl --faults run.json
  chaosrun judge --listen 0.0.0.0:7000 --shards 4 --token "$TOKEN" scenarios/bank-slow-vault.yaml`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := ef.Config()
			if err != nil {
				return exitcode.Fail(exitUsage, err)
			}
			return runJudge(cmd.Context(), st, &o, cfg, args)
		},
	}
	o.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	ef.Register(cmd.Flags(), st.Getenv)
	return cmd
}

func runJudge(ctx context.Context, st *State, o *judge.Options, cfg metrics.Config, args []string) error {
	sc, err := loadScenario(ctx, st, args[0], o.Sets)
	if err != nil {
		return scenarioFailed(ctx, st, err)
	}
	versions := map[string]string{"chaosrun": version(), "engine": sc.Workload.EngineName()}
	var rec *record.Run
	switch {
	case o.Listen != "" && len(args) > 1:
		return exitcode.Failf(exitUsage, "give results files or --listen, not both")
	case o.Listen != "":
		ro, err := o.ReceiveOptions(st.files(), st.Stderr)
		if err != nil {
			return exitcode.Fail(exitUsage, err)
		}
		ro.Versions, ro.SpillDir = versions, ""
		rec, err = judge.Receive(ctx, sc, ro)
		if err != nil {
			return exitcode.Fail(exitRunError, err)
		}
	default:
		fo, err := o.FileOptions(st.files(), args[1:], versions)
		if err != nil {
			return exitcode.Fail(exitUsage, err)
		}
		rec, err = judge.FromFiles(sc, fo)
		if ie := (*judge.InputError)(nil); errors.As(err, &ie) {
			return exitcode.Fail(exitUsage, err)
		}
		if err != nil {
			return exitcode.Fail(exitRunError, err)
		}
	}
	defer rec.Close()
	// Sent as run sends a finished run; a failed export is reported, not a breach.
	if cfg.Enabled() {
		metrics.Send(ctx, st.Stderr, "judge", rec, cfg)
	}
	return judgeOutcome(ctx, st, o.OutDir, sc, rec)
}

// judgeOutcome writes the record and reports and says the verdict, with
// run's exit codes.
func judgeOutcome(ctx context.Context, st *State, outDir string, sc *scenario.Scenario, rec *record.Run) error {
	dir := filepath.Join(st.path(outDir), sc.Name)
	werr := judge.WriteRecord(dir, rec, st.Stdout, st.Stderr)
	switch {
	case ctx.Err() != nil:
		return exitcode.Failf(exitInterrupted, "%s interrupted; the record is marked incomplete", sc.Name)
	case werr != nil:
		return exitcode.Exit(exitRunError)
	case rec.Incomplete:
		return exitcode.Failf(exitRunError, "%s incomplete: %s", sc.Name, strings.Join(rec.Problems, "; "))
	case !report.Passed(rec):
		return exitcode.Failf(exitBreach, "%s breached: %s", sc.Name, strings.Join(judge.Failed(rec), ", "))
	}
	return nil
}
