package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/workloads/native"
	"github.com/chaosrun/chaosrun/workloads/nativerun"
)

// resultsTokenEnv holds the results stream's token for `chaosrun load`,
// off its command line.
const resultsTokenEnv = nativerun.TokenEnv

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
			return runLoad(cmd.Context(), st, &o, args)
		},
	}
	o.Register(cmd.Flags())
	return cmd
}

func runLoad(ctx context.Context, st *State, o *nativerun.Options, args []string) error {
	shard, err := o.ParseShard()
	if err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	spec, err := loadWorkload(ctx, st, o, args)
	if err != nil {
		return err
	}
	res, err := o.ResultsTo(st.files(), st.Getenv(resultsTokenEnv))
	if err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	if err := native.Check(spec, shard); err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	if err := nativerun.Shard(ctx, spec, shard, res, st.Stderr); err != nil {
		return exitcode.Fail(exitcode.Harness(ctx), err)
	}
	return nil
}

// loadWorkload is the spec the flags and arguments name: --spec's JSON,
// or a scenario's native workload aimed at --target's URLs.
func loadWorkload(ctx context.Context, st *State, o *nativerun.Options, args []string) (native.Spec, error) {
	if err := o.CheckWorkload(len(args) > 0); err != nil {
		return native.Spec{}, exitcode.Fail(exitUsage, err)
	}
	if o.Spec != "" {
		spec, err := o.ReadSpec(st.files())
		if err != nil {
			return native.Spec{}, exitcode.Fail(exitUsage, err)
		}
		return spec, nil
	}
	sc, err := loadScenario(ctx, st, args[0], o.Sets)
	if err != nil {
		fmt.Fprintln(st.Stderr, err)
		return native.Spec{}, exitcode.Exit(exitUsage)
	}
	spec, err := native.ForTargets(sc, o.Targets, o.Seed)
	if err != nil {
		return native.Spec{}, exitcode.Fail(exitUsage, err)
	}
	return spec, nil
}
