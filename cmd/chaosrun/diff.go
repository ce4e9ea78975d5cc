package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/signals"
	"github.com/chaosrun/chaosrun/report"
)

// newDiffCmd compares run records: exit 0 when nothing regressed beyond
// the noise, 1 on a significant regression, 2 on bad flags or when
// nothing could be compared (records of different scenarios, none with
// samples enough), 3 when a record cannot be read or shows a failed run
// (incomplete, no windows).
func newDiffCmd(st *State) *cobra.Command {
	f := report.DefaultDiffSettings()
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE HEAD",
		Short: "compare run records: what got worse beyond the noise",
		Long: `BASE and HEAD are run records (run.json) or folders of them; several records of one
scenario on a side are repeated runs. Exit 1 when a figure got significantly worse;
2 when nothing could be compared (no scenario on both sides, no figure with samples
enough); 3 when a record cannot be read, is of an incomplete run or holds no windows.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return signals.UntilDone(cmd.Context(), func() error { return f.Diff(cmd.Context(), st.files(), st.Stdout, args[0], args[1]) })
		},
	}
	diffFlags(cmd.Flags(), &f)
	return cmd
}

// diffFlags adds diff's flags to fl, filling f.
func diffFlags(fl *pflag.FlagSet, f *report.DiffSettings) {
	o := &f.DiffOptions
	fl.IntVar(&o.Iterations, "iterations", o.Iterations, "bootstrap replicates per figure")
	fl.Float64Var(&o.Confidence, "confidence", o.Confidence, "one-sided confidence a change must reach (0.5 to 0.9999)")
	fl.Float64Var(&o.MinChange, "min-change", o.MinChange, "smallest relative change that counts (0.15 = 15%)")
	fl.Float64Var(&o.MinChangeTail, "min-change-tail", o.MinChangeTail, "smallest relative change of a tail figure (p90 and above, max) that counts")
	fl.Float64Var(&o.MinLatency, "min-latency", o.MinLatency, "smallest latency change that counts, in ms")
	fl.Float64Var(&o.MinRate, "min-rate", o.MinRate, "smallest change of a failure rate that counts (fraction)")
	fl.Float64Var(&o.MinThroughput, "min-throughput", o.MinThroughput, "smallest change of a per-second rate that counts")
	fl.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the bootstrap")
	fl.IntVar(&o.Block, "block", o.Block, "seconds per block: the bootstrap resamples blocks of consecutive one-second windows")
	fl.BoolVar(&o.GateAllPhases, "gate-all-phases", o.GateAllPhases, "key figures before and after faults fail the diff too (default: reported only)")
	fl.BoolVar(&f.AssertionsOnly, "assertions-only", false, "compare only the assertions' checks, not the per-API key figures")
	fl.BoolVar(&f.All, "all", false, "show every figure, also those unchanged or not compared")
	fl.StringVar(&f.JSON, "json", "", "also write the comparison as JSON to this file (its schema: chaosrun schema --diff)")
	fl.StringVar(&f.Markdown, "markdown", "", "also write the comparison as Markdown to this file")
}
