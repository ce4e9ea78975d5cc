package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/judge"
)

func newJudgeCmd(st *State) *cobra.Command {
	var c judge.Command
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
	c.Register(cmd.Flags(), st.Getenv)
	return cmd
}
