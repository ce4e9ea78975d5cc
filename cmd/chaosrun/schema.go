package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/scenario"
)

func newSchemaCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "print the JSON Schema of the scenario format",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b, err := scenario.Schema()
			if err != nil {
				return fail(exitRunError, err)
			}
			if _, err := st.Stdout.Write(b); err != nil {
				return fail(exitRunError, err)
			}
			return nil
		},
	}
}
