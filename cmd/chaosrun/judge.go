package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/judge"
)

func newJudgeCmd(st *State) *cobra.Command {
	c := judge.Command{Options: judge.DefaultOptions()}
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
			return c.Run(cmd.Context(), st.scenarios(), st.Stdout, st.Stderr, args)
		},
	}
	fl, o := cmd.Flags(), &c.Options
	fl.StringArrayVar(&o.Sets, "set", nil, "override a scenario value, e.g. workload.duration=30s (repeatable)")
	fl.StringVar(&o.Faults, "faults", "", "the fault timeline: a run record (run.json) or fault apply's --events-out file (files only)")
	fl.BoolVar(&o.Partial, "partial", false, "judge what results files cut short or with malformed lines hold; the record is marked incomplete")
	fl.StringVar(&o.OutDir, "out-dir", o.OutDir, "folder for the record and reports (one sub-folder per scenario)")
	fl.BoolVar(&o.Quiet, "quiet", false, "no progress lines while waiting")
	fl.StringVar(&o.Listen, "listen", "", "receive the shards' results streams on HOST:PORT")
	fl.StringVar(&o.Events, "events-listen", "", "receive fault apply's events on HOST:PORT (default: --listen's host, the next port)")
	fl.IntVar(&o.Shards, "shards", o.Shards, "how many load shards stream to --listen")
	fl.StringVar(&o.Token, "token", st.Getenv("CHAOSRUN_RESULTS_TOKEN"), "the token of every stream's hello and event request (default: one made and printed; env CHAOSRUN_RESULTS_TOKEN)")
	fl.StringVar(&o.Cert, "tls-cert", "", "PEM certificate: streams and events speak TLS (with --tls-key)")
	fl.StringVar(&o.Key, "tls-key", "", "PEM private key of --tls-cert")
	fl.DurationVar(&o.Wait, "wait", o.Wait, "how long to wait for the first shard's hello")
	fl.DurationVar(&o.Margin, "margin", o.Margin, "how long past load's planned duration the shards have to end")
	exportFlags(cmd.Flags(), &c.Export, st.Getenv)
	return cmd
}
