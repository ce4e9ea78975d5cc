package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/compose"
)

// newInitCmd writes a starter scenario for a Compose project.
func newInitCmd(st *State) *cobra.Command {
	var f compose.InitFlags
	cmd := &cobra.Command{
		Use:   "init --compose FILE [--out DIR] [--force]",
		Short: "write a starter scenario (and its k6 script) for a Compose project",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.Init(cmd.Context(), st.files(), st.Stdout)
		},
	}
	f.Register(cmd.Flags())
	return cmd
}
