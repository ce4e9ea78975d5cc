package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/workloads/native"
	"github.com/chaosrun/chaosrun/workloads/nativerun"
)

// resultsTokenEnv holds the results stream's token for `chaosrun load`,
// off its command line.
const resultsTokenEnv = nativerun.TokenEnv

// loadFlags are load's flags.
type loadFlags struct {
	spec, shard, results string
	sets, targets        []string
	seed                 int64
}

// newLoadCmd runs one shard of a native workload: what the harness starts
// per shard, and what each Pod of the Kubernetes export runs.
func newLoadCmd(st *State) *cobra.Command {
	var f loadFlags
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
			return runLoad(cmd.Context(), st, &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.spec, "spec", "", "the workload as a native spec in JSON (instead of a scenario)")
	fl.StringVar(&f.shard, "shard", "0/1", "shard I of N to run, I from 0 (e.g. $(JOB_COMPLETION_INDEX)/4)")
	fl.StringVar(&f.results, "results", "", "where the windows go: tcp://HOST:PORT[?tls=true&ca=FILE&server_name=NAME] or a file (required)")
	fl.StringArrayVar(&f.targets, "target", nil, "a service's base URLs, SVC=URL[,URL…] in replica order (with a scenario; repeatable)")
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario value, e.g. workload.duration=30s (repeatable)")
	fl.Int64Var(&f.seed, "seed", 0, "seed of the keys and jitter (default: the scenario's)")
	return cmd
}

func runLoad(ctx context.Context, st *State, f *loadFlags, args []string) error {
	shard, err := native.ParseShard(f.shard)
	if err != nil {
		return failf(exitUsage, "--shard: %w", err)
	}
	spec, err := f.workload(ctx, st, args)
	if err != nil {
		return err
	}
	if f.results == "" {
		return failf(exitUsage, "--results is required: tcp://HOST:PORT of a receiver, or a file")
	}
	res, err := native.ParseResults(f.results, st.Getenv(resultsTokenEnv), st.readFile)
	if err != nil {
		return failf(exitUsage, "--results: %w", err)
	}
	if res.Dial == nil {
		res.File = st.path(res.File)
	}
	if err := native.Check(spec, shard); err != nil {
		return fail(exitUsage, err)
	}
	if err := nativerun.Shard(ctx, spec, shard, res, st.Stderr); err != nil {
		return fail(harnessCode(ctx), err)
	}
	return nil
}

// workload is the spec the flags and arguments name: --spec's JSON, or
// a scenario's native workload aimed at --target's URLs.
func (f *loadFlags) workload(ctx context.Context, st *State, args []string) (native.Spec, error) {
	switch {
	case f.spec != "" && len(args) > 0:
		return native.Spec{}, failf(exitUsage, "give --spec FILE or a scenario, not both")
	case f.spec != "" && (len(f.targets) > 0 || len(f.sets) > 0 || f.seed != 0):
		return native.Spec{}, failf(exitUsage, "--target, --set and --seed go with a scenario; a --spec is complete")
	case f.spec != "":
		b, err := st.readFile(f.spec)
		if err == nil {
			var spec native.Spec
			if spec, err = native.ReadSpec(f.spec, b); err == nil {
				return spec, nil
			}
		}
		return native.Spec{}, fail(exitUsage, err)
	case len(args) == 0:
		return native.Spec{}, failf(exitUsage, "no workload: give --spec FILE or a scenario file")
	}
	sc, err := loadScenario(ctx, st, args[0], f.sets)
	if err != nil {
		fmt.Fprintln(st.Stderr, err)
		return native.Spec{}, exit(exitUsage)
	}
	spec, err := native.ForTargets(sc, f.targets, f.seed)
	if err != nil {
		return native.Spec{}, fail(exitUsage, err)
	}
	return spec, nil
}
