package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/export/k8s"
	"github.com/chaosrun/chaosrun/internal/exitcode"
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
	o.ScenarioFile, o.Script, err = st.scenarios().Sources(ctx, file, sc)
	if err := errors.Join(err, caErr); err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	m, err := k8s.Build(sc, o)
	if err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	doc, err := m.YAML(k8s.Header(sc, file, m, o))
	if err != nil {
		return exitcode.Fail(exitRunError, err)
	}
	k8s.Notes(st.Stderr, m, o, generated)
	err = f.Write(st.files(), st.Stdout, sc.Name, doc, len(m.Objects()))
	if err != nil && f.Out != "" {
		return exitcode.Fail(exitRunError, err)
	}
	return err
}
