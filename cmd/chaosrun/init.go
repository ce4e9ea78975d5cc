package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/compose"
)

// newInitCmd writes a starter scenario for a Compose project.
func newInitCmd(st *State) *cobra.Command {
	var file, out string
	var force bool
	cmd := &cobra.Command{
		Use:   "init --compose FILE [--out DIR] [--force]",
		Short: "write a starter scenario (and its k6 script) for a Compose project",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return failf(exitUsage, "--compose FILE is required")
			}
			return writeStarter(st, st.path(file), st.path(out), force)
		},
	}
	cmd.Flags().StringVar(&file, "compose", "", "the Compose file to start from (required)")
	cmd.Flags().StringVar(&out, "out", ".", "folder to write the scenario and its k6 script into")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite files that exist")
	return cmd
}

func writeStarter(st *State, file, out string, force bool) error {
	rel, err := filepath.Rel(out, file)
	if err != nil {
		return fail(exitUsage, err)
	}
	s, err := compose.NewStarter(file, filepath.ToSlash(rel))
	if err != nil {
		return fail(exitUsage, err)
	}
	scenarioPath, scriptPath := filepath.Join(out, s.Name+".yaml"), filepath.Join(out, s.ScriptName)
	for _, p := range []string{scenarioPath, scriptPath} {
		if _, err := os.Stat(p); err == nil && !force {
			return failf(exitUsage, "%s exists (--force overwrites it)", p)
		}
	}
	if err := errors.Join(os.MkdirAll(out, 0o755), os.WriteFile(scenarioPath, []byte(s.Scenario), 0o644),
		os.WriteFile(scriptPath, []byte(s.Script), 0o644)); err != nil {
		return fail(exitRunError, err)
	}
	fmt.Fprintf(st.Stdout, "wrote %s and %s\nnext: chaosrun validate %s, then chaosrun run --testbed docker %s\n", scenarioPath, scriptPath, scenarioPath, scenarioPath)
	return nil
}
