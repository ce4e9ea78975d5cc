package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/compose"
	"github.com/chaosrun/chaosrun/internal/exitcode"
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
				return exitcode.Failf(exitUsage, "--compose FILE is required")
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
		return exitcode.Fail(exitUsage, err)
	}
	s, err := compose.NewStarter(file, filepath.ToSlash(rel))
	if err != nil {
		return exitcode.Fail(exitUsage, err)
	}
	scenarioPath, scriptPath, err := s.Write(out, force)
	if errors.Is(err, fs.ErrExist) {
		return exitcode.Fail(exitUsage, err)
	} else if err != nil {
		return exitcode.Fail(exitRunError, err)
	}
	fmt.Fprintf(st.Stdout, "wrote %s and %s\nnext: chaosrun validate %s, then chaosrun run --testbed docker %s\n", scenarioPath, scriptPath, scenarioPath, scenarioPath)
	return nil
}
