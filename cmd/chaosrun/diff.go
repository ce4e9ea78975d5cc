package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/report"
)

// newDiffCmd compares run records: exit 0 when nothing regressed beyond
// the noise, 1 on a significant regression, 2 on bad flags or when
// nothing could be compared (records of different scenarios, none with
// samples enough), 3 when a record cannot be read or shows a failed run
// (incomplete, no windows).
func newDiffCmd(st *State) *cobra.Command {
	var f report.DiffFlags
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE HEAD",
		Short: "compare run records: what got worse beyond the noise",
		Long: `BASE and HEAD are run records (run.json) or folders of them; several records of one
scenario on a side are repeated runs. Exit 1 when a figure got significantly worse;
2 when nothing could be compared (no scenario on both sides, no figure with samples
enough); 3 when a record cannot be read, is of an incomplete run or holds no windows.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return untilDone(cmd.Context(), func() error { return f.Diff(cmd.Context(), st.files(), st.Stdout, args[0], args[1]) })
		},
	}
	f.Register(cmd.Flags())
	return cmd
}
