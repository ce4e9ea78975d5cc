package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/report"
)

// diffFlags are diff's flags beyond report.DiffOptions.
type diffFlags struct {
	o                 report.DiffOptions
	assertionsOnly    bool
	jsonOut, markdown string
}

// newDiffCmd compares run records: exit 0 when nothing regressed beyond
// the noise, 1 on a significant regression, 2 on bad flags or when
// nothing could be compared (records of different scenarios, none with
// samples enough), 3 when a record cannot be read or shows a failed run
// (incomplete, no windows).
func newDiffCmd(st *State) *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE HEAD",
		Short: "compare run records: what got worse beyond the noise",
		Long: `BASE and HEAD are run records (run.json) or folders of them; several records of one
scenario on a side are repeated runs. Exit 1 when a figure got significantly worse;
2 when nothing could be compared (no scenario on both sides, no figure with samples
enough); 3 when a record cannot be read, is of an incomplete run or holds no windows.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return untilDone(cmd.Context(), func() error { return diff(st, &f, args) })
		},
	}
	fl, o := cmd.Flags(), &f.o
	fl.IntVar(&o.Iterations, "iterations", 2000, "bootstrap replicates per figure")
	fl.Float64Var(&o.Confidence, "confidence", 0.99, "one-sided confidence a change must reach (0.5 to 0.9999)")
	fl.Float64Var(&o.MinChange, "min-change", 0.15, "smallest relative change that counts (0.15 = 15%)")
	fl.Float64Var(&o.MinChangeTail, "min-change-tail", 1.5, "smallest relative change of a tail figure (p90 and above, max) that counts")
	fl.Float64Var(&o.MinLatency, "min-latency", 0.2, "smallest latency change that counts, in ms")
	fl.Float64Var(&o.MinRate, "min-rate", 0.02, "smallest change of a failure rate that counts (fraction)")
	fl.Float64Var(&o.MinThroughput, "min-throughput", 1, "smallest change of a per-second rate that counts")
	fl.Uint64Var(&o.Seed, "seed", 1, "seed of the bootstrap")
	fl.IntVar(&o.Block, "block", 2, "seconds per block: the bootstrap resamples blocks of consecutive one-second windows")
	fl.BoolVar(&o.GateAllPhases, "gate-all-phases", false, "key figures before and after faults fail the diff too (default: reported only)")
	fl.BoolVar(&f.assertionsOnly, "assertions-only", false, "compare only the assertions' checks, not the per-API key figures")
	fl.StringVar(&f.jsonOut, "json", "", "also write the comparison as JSON to this file (its schema: chaosrun schema --diff)")
	fl.StringVar(&f.markdown, "markdown", "", "also write the comparison as Markdown to this file")
	return cmd
}

func diff(st *State, f *diffFlags, args []string) error {
	o := f.o
	switch {
	case o.Iterations < 100 || o.Iterations > 100000:
		return failf(exitUsage, "--iterations %d: allowed 100 to 100000", o.Iterations)
	case o.Confidence < 0.5 || o.Confidence > 0.9999:
		return failf(exitUsage, "--confidence %g: allowed 0.5 to 0.9999", o.Confidence)
	case o.Block < 1 || o.Block > 60:
		return failf(exitUsage, "--block %d: allowed 1 to 60 seconds", o.Block)
	case o.MinChange < 0 || o.MinChangeTail < 0 || o.MinLatency < 0 || o.MinRate < 0 || o.MinThroughput < 0:
		return failf(exitUsage, "--min-* flags must not be negative")
	}
	o.NoKeyFigures = f.assertionsOnly
	d, err := report.CompareFiles(st.path(args[0]), st.path(args[1]), o)
	if d == nil {
		return fail(exitRunError, err)
	}
	d.Table(st.Stdout)
	if werr := d.WriteFiles(st.path(f.jsonOut), st.path(f.markdown)); werr != nil {
		return fail(exitRunError, werr)
	}
	if err != nil {
		return fail(exitUsage, err)
	}
	if d.Regressed() {
		return exit(exitBreach)
	}
	return nil
}
