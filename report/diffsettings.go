package report

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

// DiffSettings are chaosrun diff's settings: the comparison's options,
// whether to compare the assertions' checks only, and the extra files to
// write. The command line fills them (DefaultDiffSettings before its
// flags).
type DiffSettings struct {
	DiffOptions
	AssertionsOnly bool
	// All shows every figure, not only those that changed significantly.
	All            bool
	JSON, Markdown string
}

// DefaultDiffSettings are diff's settings when no flag changes them.
func DefaultDiffSettings() DiffSettings {
	return DiffSettings{DiffOptions: DiffOptions{Iterations: 2000, Confidence: 0.99, MinChange: 0.15, MinChangeTail: 1.5,
		MinLatency: 0.2, MinRate: 0.02, MinThroughput: 1, Seed: 1, Block: 2}}
}

// Options checks the settings and gives the comparison's options; errors are
// usage errors.
func (f *DiffSettings) Options() (DiffOptions, error) {
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
func (f *DiffSettings) Diff(ctx context.Context, wd workdir.FS, stdout io.Writer, base, head string) error {
	o, err := f.Options()
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	d, err := CompareFiles(ctx, wd.Path(base), wd.Path(head), o)
	if d == nil {
		return exitcode.Fail(exitcode.RunError, err)
	}
	d.Table(stdout, f.All)
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
