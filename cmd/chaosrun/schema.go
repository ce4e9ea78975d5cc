package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/scenario"
)

func newSchemaCmd(st *State) *cobra.Command {
	var recordSchema, diffSchema bool
	cmd := &cobra.Command{
		Use:   "schema [--record | --diff]",
		Short: "print a JSON Schema: of scenario files (default), run records or diff results",
		Long: `Prints a JSON Schema (draft 2020-12): by default of scenario files, for editors;
with --record of run records (run.json); with --diff of diff results (chaosrun diff --json).`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			gen := scenario.Schema
			if recordSchema {
				gen = record.Schema
			} else if diffSchema {
				gen = report.DiffSchema
			}
			b, err := gen()
			if err == nil {
				_, err = st.Stdout.Write(b)
			}
			return err // a harness error, 3
		},
	}
	cmd.Flags().BoolVar(&recordSchema, "record", false, "the schema of run records (run.json)")
	cmd.Flags().BoolVar(&diffSchema, "diff", false, "the schema of diff results (chaosrun diff --json)")
	cmd.MarkFlagsMutuallyExclusive("record", "diff")
	return cmd
}
