package report

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

// DiffFlags are chaosrun diff's flags: the comparison's options, whether
// to compare the assertions' checks only, and the extra files to write.
type DiffFlags struct {
	DiffOptions
	AssertionsOnly bool
	JSON, Markdown string
}

// Register adds diff's flags to fl.
func (f *DiffFlags) Register(fl *pflag.FlagSet) {
	o := &f.DiffOptions
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
	fl.BoolVar(&f.AssertionsOnly, "assertions-only", false, "compare only the assertions' checks, not the per-API key figures")
	fl.StringVar(&f.JSON, "json", "", "also write the comparison as JSON to this file (its schema: chaosrun schema --diff)")
	fl.StringVar(&f.Markdown, "markdown", "", "also write the comparison as Markdown to this file")
}

// Options checks the flags and gives the comparison's options; errors are
// usage errors.
func (f *DiffFlags) Options() (DiffOptions, error) {
	o := f.DiffOptions
	switch {
	case o.Iterations < 100 || o.Iterations > 100000:
		return o, fmt.Errorf("--iterations %d: allowed 100 to 100000", o.Iterations)
	case o.Confidence < 0.5 || o.Confidence > 0.9999:
		return o, fmt.Errorf("--confidence %g: allowed 0.5 to 0.9999", o.Confidence)
	case o.Block < 1 || o.Block > 60:
		return o, fmt.Errorf("--block %d: allowed 1 to 60 seconds", o.Block)
	case o.MinChange < 0 || o.MinChangeTail < 0 || o.MinLatency < 0 || o.MinRate < 0 || o.MinThroughput < 0:
		return o, errors.New("--min-* flags must not be negative")
	}
	o.NoKeyFigures = f.AssertionsOnly
	return o, nil
}

// Diff is chaosrun diff: it compares the run records base and head name
// (paths resolve against wd), prints the comparison on stdout and writes
// --json's and --markdown's files. Exit 1 on a significant regression; 2
// on bad flags or when nothing could be compared; 3 when a record cannot
// be read or is of a failed run. It gives up when ctx ends.
func (f *DiffFlags) Diff(ctx context.Context, wd workdir.FS, stdout io.Writer, base, head string) error {
	o, err := f.Options()
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	d, err := CompareFiles(ctx, wd.Path(base), wd.Path(head), o)
	if d == nil {
		return exitcode.Fail(exitcode.RunError, err)
	}
	d.Table(stdout)
	if werr := d.WriteFiles(wd.Path(f.JSON), wd.Path(f.Markdown)); werr != nil {
		return exitcode.Fail(exitcode.RunError, werr)
	}
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	if d.Regressed() {
		return exitcode.Exit(exitcode.Breach)
	}
	return nil
}
