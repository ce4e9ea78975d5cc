package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/k8s"
	"github.com/chaosrun/chaosrun/internal/signals"
)

// newExportCmd writes a scenario for another platform; k8s is the one there is.
func newExportCmd(st *State) *cobra.Command {
	return group(st, &cobra.Command{
		Use:   "export",
		Short: "write a scenario as Kubernetes manifests (export k8s)",
	}, newExportK8sCmd(st))
}

func newExportK8sCmd(st *State) *cobra.Command {
	f := k8s.DefaultFlags()
	cmd := &cobra.Command{
		Use:               "k8s SCENARIO.yaml [--out DIR] [--parallelism N] [--image IMG] [--k6-image IMG] [--results-addr HOST:PORT] [flags]",
		Short:             "Kubernetes manifests for a scenario (exit 2 for one a cluster cannot run)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return signals.UntilDone(cmd.Context(), func() error { return f.Export(cmd.Context(), st.scenarios(), st.Stdout, st.Stderr, args[0]) })
		},
	}
	fl, o := cmd.Flags(), &f.Options
	fl.StringVar(&f.Out, "out", "", "write DIR/SCENARIO.yaml instead of printing the manifests")
	fl.IntVar(&o.Parallelism, "parallelism", o.Parallelism, fmt.Sprintf("load shards (1 to %d): Pods of the native load's Indexed Job, or k6 runners of the TestRun (engine: k6), each on its execution segment", k8s.MaxParallelism))
	fl.StringVar(&o.Image, "image", o.Image, "the chaosrun image you pushed (entrypoint: the chaosrun binary); serves the targets and Toxiproxy, runs the fault Job and the native load")
	fl.StringVar(&o.K6Image, "k6-image", o.K6Image, "for engine: k6, a k6 image built with xk6-resilience, for the TestRun's runners")
	fl.StringVar(&o.Namespace, "namespace", "", "namespace of every object (default chaosrun-SCENARIO)")
	fl.StringVar(&o.ResultsAddr, "results-addr", "", "HOST:PORT of a results receiver outside the manifests (chaosrun judge --listen, chaosrun run --results-listen); default: a judge in the manifests receives")
	fl.StringVar(&o.ResultsToken, "results-token", st.Getenv("CHAOSRUN_RESULTS_TOKEN"), "the receiver's token (default: generated and printed; env CHAOSRUN_RESULTS_TOKEN)")
	fl.BoolVar(&o.ResultsTLS, "results-tls", false, "runners connect to the receiver with TLS (system roots)")
	fl.StringVar(&f.CA, "results-ca", "", "PEM file of the CA the runners trust for the receiver; implies --results-tls")
	fl.DurationVar(&o.FaultDelay, "fault-delay", o.FaultDelay, "with --results-addr: time from Toxiproxy being ready to the fault schedule's zero (with the manifests' judge, the schedule counts from load's start there)")
	return cmd
}
