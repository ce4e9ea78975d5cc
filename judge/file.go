package judge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// FileOptions say what to judge besides the scenario.
type FileOptions struct {
	// Files are results files, one per load shard; their windows merge.
	Files []string
	// Timeline is the fault timeline (ReadTimeline), when given.
	Timeline *Timeline
	// Partial judges what the files hold though one is cut short or has
	// malformed lines; the record is then marked incomplete, with why.
	Partial bool
	// Versions go into the record.
	Versions map[string]string
}

// InputError is a results file that cannot be judged as it is: cut in the
// middle, malformed, or not a results file.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// FromFiles judges sc over results files: their windows merged, load from
// the timeline's start to its end (a run record's), else from the first
// window's start to the last one's end. A file cut short (no end marker,
// a last line cut) or with malformed lines is an InputError, naming the
// file and line, unless o.Partial. It gives up when ctx ends.
func FromFiles(ctx context.Context, sc *scenario.Scenario, o FileOptions) (*record.Run, error) {
	if len(o.Files) == 0 {
		return nil, errors.New("no results file")
	}
	rec := newRecord(sc, o.Versions)
	tl := o.Timeline
	if tl != nil && tl.FromRecord {
		rec.ScriptChecks, rec.LoadParts, rec.Aborted = tl.ScriptChecks, tl.LoadParts, tl.Aborted
	}
	keep := runner.KeepAlso(workloads.KeepMetric(sc), runner.ScriptChecksOf(rec))
	var lists [][]record.Window
	var bad []error
	for _, f := range o.Files {
		ws, problems, err := readResults(ctx, f, keep)
		if err != nil {
			return nil, err
		}
		lists = append(lists, ws)
		bad = append(bad, problems...)
	}
	if len(bad) > 0 && !o.Partial {
		return nil, &InputError{fmt.Errorf("%w\n(--partial judges what the files hold, the record marked incomplete)", errors.Join(bad...))}
	}
	for _, p := range bad {
		fail(rec, p)
	}
	ws, err := record.MergeWindows(lists...)
	if err != nil {
		return nil, &InputError{fmt.Errorf("merging the files' windows: %w", err)}
	}
	rec.Windows = ws
	var events []record.FaultEvent
	switch {
	case tl != nil && tl.FromRecord:
		rec.Start, rec.End, rec.Faults, rec.Scrapes, rec.EndChecks = tl.Start, tl.End, tl.Faults, tl.Scrapes, tl.EndChecks
	case len(ws) > 0:
		rec.Start, rec.End = ws[0].Start, ws[len(ws)-1].Start.Add(time.Second)
	}
	if tl != nil && !tl.FromRecord {
		events = tl.Faults
	}
	if len(ws) == 0 {
		fail(rec, errors.New("the results files hold no window: load never ran"))
	}
	rec.Timings.Load = record.Duration(rec.End.Sub(rec.Start))
	Fill(sc, rec, events, tl != nil && tl.FromRecord)
	return rec, nil
}

// readResults decodes one results file, keeping the metrics keep keeps;
// a line over stream.MaxLine ends it (stream.DecodeResults). problems say
// what is wrong with it (file:line, what was expected); err is a file that
// cannot be read or is no results file at all, or ctx's end.
func readResults(ctx context.Context, path string, keep func(string) bool) (ws []record.Window, problems []error, err error) {
	type decoded struct {
		sum stream.Summary
		err error
	}
	d, err := workdir.Read(ctx, path, 0, workdir.OS(path), func(r io.Reader) (decoded, error) {
		sum, err := stream.DecodeResults(r)
		return decoded{sum, err}, nil
	})
	switch {
	case ctx.Err() != nil:
		return nil, nil, err
	case err != nil:
		return nil, nil, &InputError{fmt.Errorf("results file: %w", err)}
	}
	sum, derr := d.sum, d.err
	if sum.Hello.Version == 0 {
		why := "its first line is no hello"
		if derr != nil {
			why += ": " + errors.Join(sum.Errors...).Error()
		}
		return nil, nil, &InputError{fmt.Errorf("%s is not a results file (what k6 --out resilience=FILE or chaosrun load --results FILE write: a hello line, window lines, an end line): %s", path, why)}
	}
	for _, e := range sum.Errors {
		// "line 12: …" becomes "FILE:12: …".
		if rest, ok := strings.CutPrefix(e.Error(), "line "); ok {
			problems = append(problems, fmt.Errorf("%s:%s", path, rest))
			continue
		}
		problems = append(problems, fmt.Errorf("%s: %w", path, e))
	}
	if sum.Malformed > len(sum.Errors) {
		problems = append(problems, fmt.Errorf("%s: %d malformed lines in all", path, sum.Malformed))
	}
	if !sum.Ended {
		problems = append(problems, fmt.Errorf("%s: no end marker: the file is cut short (its load stopped early, or the file was copied before its end); want a last line {\"type\":\"end\",…}", path))
	}
	for _, w := range sum.Windows {
		kept := w.Series[:0]
		for _, s := range w.Series {
			if keep == nil || keep(s.Metric) {
				kept = append(kept, s)
			}
		}
		ws = append(ws, record.Window{Start: w.Start, Series: kept})
	}
	return ws, problems, nil
}
