package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/workloads/nativerun"
)

// newLoadCmd runs one shard of a native workload: what the harness starts
// per shard, and what each Pod of the Kubernetes export runs.
func newLoadCmd(st *State) *cobra.Command {
	var o nativerun.Options
	cmd := &cobra.Command{
		Use:   "load (--spec FILE | SCENARIO.yaml --target SVC=URL…) --results tcp://HOST:PORT [flags]",
		Short: "run one shard of a native workload, streaming its results to a receiver",
		Long: `Run shard I of N of a native workload (every Nth arrival of each stream, from
the Ith) and stream its one-second windows to a results receiver: a harness's
(chaosrun run, gameday, judge) or a file. The workload is a spec as JSON
(--spec, what the harness hands its load processes) or a scenario whose
workload is native, with its services' URLs given by --target. The token
comes from CHAOSRUN_RESULTS_TOKEN; TLS options are the k6 output's (tls=true,
ca=FILE, server_name=NAME). SIGINT or SIGTERM stops the arrivals, lets
requests in flight finish and ends the stream with its end marker.
Exit codes: 0 the workload ran to its end, 2 bad usage, spec or scenario,
3 the receiver could not be reached or the stream broke, 130 interrupted.`,
		Example: `  chaosrun load scenarios/bank-slow-vault.yaml --target bank=http://127.0.0.1:8080 --results tcp://127.0.0.1:7000
  chaosrun load --spec logs/load-spec.json --shard 1/2 --results results.jsonl`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l := st.scenarios()
			return o.RunShard(cmd.Context(), l.FS, l, st.Stderr, st.Getenv(nativerun.TokenEnv), args)
		},
	}
	loadFlags(cmd.Flags(), &o)
	return cmd
}

// loadFlags adds load's flags to fl, filling o.
func loadFlags(fl *pflag.FlagSet, o *nativerun.Options) {
	fl.StringVar(&o.Spec, "spec", "", "the workload as a native spec in JSON (instead of a scenario)")
	fl.StringVar(&o.Shard, "shard", nativerun.DefaultShard, "shard I of N to run, I from 0 (e.g. $(JOB_COMPLETION_INDEX)/4)")
	fl.StringVar(&o.Results, "results", "", "where the windows go: tcp://HOST:PORT[?tls=true&ca=FILE&server_name=NAME] or a file (required)")
	fl.StringArrayVar(&o.Targets, "target", nil, "a service's base URLs, SVC=URL[,URL…] in replica order (with a scenario; repeatable)")
	fl.StringArrayVar(&o.Sets, "set", nil, "override a scenario value, e.g. workload.duration=30s (repeatable)")
	fl.Int64Var(&o.Seed, "seed", 0, "seed of the keys and jitter (default: the scenario's)")
	fl.StringVar(&o.CPUProfile, "cpu-profile", "", "write the load process's CPU profile (pprof) to FILE: where its time goes")
}
