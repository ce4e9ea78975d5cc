package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/k8s"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// newExportCmd writes a scenario for another platform; k8s is the one there is.
func newExportCmd(st *State) *cobra.Command {
	return group(st, &cobra.Command{
		Use:   "export",
		Short: "write a scenario as Kubernetes manifests (export k8s)",
	}, newExportK8sCmd(st))
}

// k8sFlags are export k8s's flags.
type k8sFlags struct {
	o       k8s.Options
	out, ca string
}

func newExportK8sCmd(st *State) *cobra.Command {
	var f k8sFlags
	cmd := &cobra.Command{
		Use:               "k8s SCENARIO.yaml [--out DIR] [--parallelism N] [--image IMG] [--k6-image IMG] [--results-addr HOST:PORT] [flags]",
		Short:             "Kubernetes manifests for a scenario (exit 2 for one a cluster cannot run)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return untilDone(cmd.Context(), func() error { return exportK8s(cmd.Context(), st, &f, args[0]) })
		},
	}
	fl, o := cmd.Flags(), &f.o
	fl.StringVar(&f.out, "out", "", "write DIR/SCENARIO.yaml instead of printing the manifests")
	fl.IntVar(&o.Parallelism, "parallelism", 1, fmt.Sprintf("load shards (1 to %d): Pods of the native load's Indexed Job, or k6 runners of the TestRun (engine: k6), each on its execution segment", k8s.MaxParallelism))
	fl.StringVar(&o.Image, "image", "chaosrun:latest", "the chaosrun image you pushed (entrypoint: the chaosrun binary); serves the targets and Toxiproxy, runs the fault Job and the native load")
	fl.StringVar(&o.K6Image, "k6-image", "chaosrun-k6:latest", "for engine: k6, a k6 image built with xk6-resilience, for the TestRun's runners")
	fl.StringVar(&o.Namespace, "namespace", "", "namespace of every object (default chaosrun-SCENARIO)")
	fl.StringVar(&o.ResultsAddr, "results-addr", "", "HOST:PORT of a results receiver outside the manifests (chaosrun judge --listen, chaosrun run --results-listen); default: a judge in the manifests receives")
	fl.StringVar(&o.ResultsToken, "results-token", st.Getenv("CHAOSRUN_RESULTS_TOKEN"), "the receiver's token (default: generated and printed; env CHAOSRUN_RESULTS_TOKEN)")
	fl.BoolVar(&o.ResultsTLS, "results-tls", false, "runners connect to the receiver with TLS (system roots)")
	fl.StringVar(&f.ca, "results-ca", "", "PEM file of the CA the runners trust for the receiver; implies --results-tls")
	fl.DurationVar(&o.FaultDelay, "fault-delay", 30*time.Second, "with --results-addr: time from Toxiproxy being ready to the fault schedule's zero (with the manifests' judge, the schedule counts from load's start there)")
	return cmd
}

func exportK8s(ctx context.Context, st *State, f *k8sFlags, file string) error {
	sc, err := loadScenario(ctx, st, file, nil)
	if err != nil {
		return scenarioFailed(ctx, st, err)
	}
	o := f.o
	o.ToxiproxyToken, o.Seed = stream.NewToken(), rand.Int64N(1<<31)+1
	generated := o.ResultsToken == ""
	if generated {
		o.ResultsToken = stream.NewToken()
	}
	if err := f.readFiles(ctx, st, file, sc, &o); err != nil {
		return fail(exitUsage, err)
	}
	m, err := k8s.Build(sc, o)
	if err != nil {
		return fail(exitUsage, err)
	}
	load := fmt.Sprintf("the load runs as Job %s, %d Pod(s) of `chaosrun load`, one shard each", k8s.LoadJobName, o.Parallelism)
	if m.TestRun != nil {
		load = "the TestRun needs the k6-operator"
	}
	header := fmt.Sprintf("chaosrun export k8s: scenario %s (%s).\nkubectl apply -f this file; %s. The Secret holds tokens.", sc.Name, filepath.Base(file), load)
	doc, err := m.YAML(header)
	if err != nil {
		return fail(exitRunError, err)
	}
	if generated && o.ResultsAddr != "" {
		fmt.Fprintf(st.Stderr, "results stream token: %s (generated; give it to the receiver: chaosrun judge --listen HOST:PORT --token …)\n", o.ResultsToken)
	}
	if m.JudgeJob != nil {
		fmt.Fprintf(st.Stderr, "chaosrun export k8s: Job %s judges the run: its log ends with the verdicts, and it fails on a breach\n", k8s.JudgeName)
	}
	if f.out == "" {
		_, err := st.Stdout.Write(doc)
		return err
	}
	dir := st.path(f.out)
	path := filepath.Join(dir, sc.Name+".yaml")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(path, doc, 0o600) // it holds the Secret
	}
	if err != nil {
		return fail(exitRunError, err)
	}
	fmt.Fprintf(st.Stdout, "wrote %s: %d objects\n", filepath.Join(f.out, sc.Name+".yaml"), len(m.Objects()))
	return nil
}

// readFiles reads what the manifests carry: the scenario, its k6 script
// (engine: k6) and the results CA.
func (f *k8sFlags) readFiles(ctx context.Context, st *State, file string, sc *scenario.Scenario, o *k8s.Options) error {
	var errs []error
	var err error
	if o.ScenarioFile, err = readScenario(ctx, st, file); err != nil {
		errs = append(errs, err)
	}
	if sc.Workload.EngineName() == scenario.EngineK6 {
		if o.Script, err = readScript(st, scenarioPath(st, file), sc.Workload.Script); err != nil {
			errs = append(errs, err)
		}
	}
	if f.ca != "" {
		if o.ResultsCA, err = st.readFile(f.ca); err != nil {
			errs = append(errs, fmt.Errorf("--results-ca: %w", err))
		}
	}
	return errors.Join(errs...)
}

// readScript reads the workload script: beside the scenario first, then in
// the bundled scripts (as a run finds it).
func readScript(st *State, scenarioFile, script string) ([]byte, error) {
	root, err := k6Options(st).Checkout()
	if err != nil {
		return nil, err
	}
	dir, err := bundledScripts(st, root)
	if err != nil {
		return nil, err
	}
	p, err := workloads.ResolveScript(scenarioFile, script, dir)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}
