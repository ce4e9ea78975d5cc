package main

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/k8s"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
)

// newExportCmd writes a scenario for another platform; k8s is the one there is.
func newExportCmd(st *State) *cobra.Command {
	return group(st, &cobra.Command{
		Use:   "export",
		Short: "write a scenario as Kubernetes manifests (export k8s)",
	}, newExportK8sCmd(st))
}

func newExportK8sCmd(st *State) *cobra.Command {
	var f k8s.Flags
	cmd := &cobra.Command{
		Use:               "k8s SCENARIO.yaml [--out DIR] [--parallelism N] [--image IMG] [--k6-image IMG] [--results-addr HOST:PORT] [flags]",
		Short:             "Kubernetes manifests for a scenario (exit 2 for one a cluster cannot run)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return untilDone(cmd.Context(), func() error { return exportK8s(cmd.Context(), st, &f, args[0]) })
		},
	}
	f.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	return cmd
}

func exportK8s(ctx context.Context, st *State, f *k8s.Flags, file string) error {
	sc, err := loadScenario(ctx, st, file, nil)
	if err != nil {
		return scenarioFailed(ctx, st, err)
	}
	o, generated, caErr := f.Settings(st.files())
	if err := readManifestFiles(ctx, st, file, sc, &o, caErr); err != nil {
		return fail(exitUsage, err)
	}
	m, err := k8s.Build(sc, o)
	if err != nil {
		return fail(exitUsage, err)
	}
	doc, err := m.YAML(k8s.Header(sc, file, m, o))
	if err != nil {
		return fail(exitRunError, err)
	}
	k8s.Notes(st.Stderr, m, o, generated)
	err = f.Write(st.files(), st.Stdout, sc.Name, doc, len(m.Objects()))
	if err != nil && f.Out != "" {
		return fail(exitRunError, err)
	}
	return err
}

// readManifestFiles reads what the manifests carry: the scenario and its
// k6 script (engine: k6); caErr is reading the results CA's.
func readManifestFiles(ctx context.Context, st *State, file string, sc *scenario.Scenario, o *k8s.Options, caErr error) error {
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
	return errors.Join(append(errs, caErr)...)
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
