package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/chaosrun/chaosrun/record"
)

// ErrNothingCompared marks a comparison that compared nothing: no scenario
// has records on both sides, or none of their figures had samples enough.
// Such a diff says nothing about the code; it is not a pass.
var ErrNothingCompared = errors.New("nothing compared")

// ErrUnusableRecord marks a record a comparison cannot rest on: its run
// is incomplete, or it holds no windows.
var ErrUnusableRecord = errors.New("record unusable for a comparison")

// ReadRuns reads run records from files and folders (every run.json below a
// folder), in path order, each bounded as record.ReadJSON says; it gives
// up when ctx ends.
func ReadRuns(ctx context.Context, paths []string) ([]*record.Run, error) {
	return readRuns(ctx, paths, nil)
}

// ReadComparableRuns is ReadRuns for a comparison: a record of an
// incomplete run, or one without windows, is an error (ErrUnusableRecord)
// that names its file.
func ReadComparableRuns(ctx context.Context, paths []string) ([]*record.Run, error) {
	return readRuns(ctx, paths, comparable)
}

func readRuns(ctx context.Context, paths []string, check func(*record.Run) error) ([]*record.Run, error) {
	var out []*record.Run
	for _, p := range paths {
		files, err := runFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			r, err := record.ReadJSON(ctx, f)
			if err != nil {
				return nil, err
			}
			if check != nil {
				if err := check(r); err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// runFiles is p when it is a file, else every run.json below it, sorted.
func runFiles(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err // "stat P: no such file or directory"
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !de.IsDir() && de.Name() == "run.json" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no run.json below this folder", p)
	}
	sort.Strings(files)
	return files, nil
}

// errStop ends a walk over windows at the first one.
var errStop = errors.New("stop")

// comparable says why r cannot be compared, or nil.
func comparable(r *record.Run) error {
	if r.Incomplete {
		why := "no problem recorded"
		if len(r.Problems) > 0 {
			why = r.Problems[0]
		}
		return fmt.Errorf("%w: the run of %s is incomplete (%s): its figures say nothing about the code", ErrUnusableRecord, r.Scenario, why)
	}
	err := r.EachWindow(func(record.Window) error { return errStop })
	switch {
	case errors.Is(err, errStop):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: the run of %s holds no windows: its load sent no results", ErrUnusableRecord, r.Scenario)
}

// Compared counts the figures that were compared.
func (d *Diff) Compared() int {
	n := 0
	for _, c := range d.Changes {
		if c.Verdict != NotCompared {
			n++
		}
	}
	return n
}

// common counts the scenarios with records on both sides.
func (d *Diff) common() int {
	n := 0
	for s := range d.HeadRuns {
		if d.BaseRuns[s] > 0 {
			n++
		}
	}
	return n
}

// nothingCompared is nil when d compared a figure, else an error
// (ErrNothingCompared) that says why not.
func (d *Diff) nothingCompared() error {
	if d.Compared() > 0 {
		return nil
	}
	if d.common() == 0 {
		return fmt.Errorf("%w: no scenario has records on both sides (base: %s; head: %s)", ErrNothingCompared, names(d.BaseRuns), names(d.HeadRuns))
	}
	why := map[string]bool{}
	for _, c := range d.Changes {
		why[c.Why] = true
	}
	reasons := sortedKeys(why)
	if len(reasons) == 0 {
		reasons = []string{"the records name no assertion and no API"}
	}
	return fmt.Errorf("%w: none of %d figures could be compared (%s)", ErrNothingCompared, len(d.Changes), strings.Join(reasons, "; "))
}

func names(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(sortedKeys(m), ", ")
}
