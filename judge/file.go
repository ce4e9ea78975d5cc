package judge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
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
	// SpillDir holds the files' window logs ("": the system's temporary
	// folder).
	SpillDir string
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
// file and line, unless o.Partial. It gives up when ctx ends. The files
// are read a line at a time and their windows moved to logs on disk as
// they are read, so that memory does not grow with the files' length; the
// record reads them from there until it is closed.
func FromFiles(ctx context.Context, sc *scenario.Scenario, o FileOptions) (*record.Run, error) {
	if len(o.Files) == 0 {
		return nil, errors.New("no results file")
	}
	rec := newRecord(sc, o.Versions)
	tl := o.Timeline
	if tl != nil && tl.FromRecord {
		rec.ScriptChecks, rec.LoadParts, rec.Aborted = tl.ScriptChecks, tl.LoadParts, tl.Aborted
	}
	keep := workloads.KeepAlso(workloads.KeepMetric(sc), assertions.ScriptChecksOf(rec))
	src, bad, notes, err := spillFiles(ctx, o, keep)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 && !o.Partial {
		src.Close()
		return nil, &InputError{fmt.Errorf("%w\n(--partial judges what the files hold, the record marked incomplete)", errors.Join(bad...))}
	}
	rec.Source = src
	rec.Problems = append(rec.Problems, notes...)
	for _, p := range bad {
		fail(rec, p)
	}
	first, last, held, err := src.Span()
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("the files' windows: %w", err)
	}
	var events []record.FaultEvent
	switch {
	case tl != nil && tl.FromRecord:
		rec.Start, rec.End, rec.Faults, rec.Scrapes, rec.EndChecks = tl.Start, tl.End, tl.Faults, tl.Scrapes, tl.EndChecks
	case held:
		rec.Start, rec.End = first, last.Add(time.Second)
	}
	if tl != nil && !tl.FromRecord {
		events = tl.Faults
	}
	if !held {
		fail(rec, errors.New("the results files hold no window: load never ran"))
	}
	rec.Timings.Load = record.Duration(rec.End.Sub(rec.Start))
	Fill(sc, rec, events, tl != nil && tl.FromRecord)
	return rec, nil
}

// spillFiles reads o's files into a window log each, keeping the metrics
// keep keeps. bad are the files' problems (readResults); notes say what
// did not go to disk and stayed in memory instead. err is a file that
// cannot be judged, or ctx's end; the logs are then closed.
func spillFiles(ctx context.Context, o FileOptions, keep func(string) bool) (src stream.Spilled, bad []error, notes []string, err error) {
	for _, f := range o.Files {
		log, lerr := stream.CreateWindowLog(o.SpillDir)
		if lerr != nil {
			notes = append(notes, fmt.Sprintf("%s: its windows are held in memory: %v", f, lerr))
			log = nil
		}
		held, problems, logErr, err := readResults(ctx, f, keep, log)
		if log != nil {
			src.Logs = append(src.Logs, log)
		}
		if err != nil {
			src.Close()
			return stream.Spilled{}, nil, nil, err
		}
		if logErr != nil {
			notes = append(notes, fmt.Sprintf("%s: %d of its windows are held in memory: %v", f, len(held), logErr))
		}
		src.Held = append(src.Held, held...)
		bad = append(bad, problems...)
	}
	return src, bad, notes, nil
}

// readResults decodes one results file a line at a time, keeping the
// metrics keep keeps, its windows going to log (stream.DecodeResultsTo);
// a line over stream.MaxLine ends it. held are the windows log did not
// take, logErr why. problems say what is wrong with the file (file:line,
// what was expected); err is a file that cannot be read or is no results
// file at all, or ctx's end.
func readResults(ctx context.Context, path string, keep func(string) bool, log *stream.WindowLog) (held []record.Window, problems []error, logErr, err error) {
	type decoded struct {
		sum stream.Summary
		err error
	}
	if fi, err := os.Stat(path); err == nil && (fi.IsDir() || fi.Mode()&(os.ModeDevice|os.ModeCharDevice|os.ModeSocket) != 0) {
		return nil, nil, nil, &InputError{fmt.Errorf("%s is a %s, not a results file (what k6 --out resilience=FILE or chaosrun load --results FILE write)", path, kindOf(fi))}
	}
	d, err := workdir.Read(ctx, path, 0, workdir.OS(path), func(r io.Reader) (decoded, error) {
		sum, err := stream.DecodeResultsTo(r, log, keep)
		return decoded{sum, err}, nil
	})
	switch {
	case ctx.Err() != nil:
		return nil, nil, nil, err
	case err != nil:
		return nil, nil, nil, &InputError{fmt.Errorf("results file: %w", err)}
	}
	sum, derr := d.sum, d.err
	if sum.Hello.Version == 0 {
		why := "its first line is no hello"
		if len(sum.Errors) > 0 {
			why += ": " + errors.Join(sum.Errors...).Error()
		} else if derr != nil {
			why += ": " + derr.Error()
		}
		return nil, nil, nil, &InputError{fmt.Errorf("%s is not a results file (what k6 --out resilience=FILE or chaosrun load --results FILE write: a hello line, window lines, an end line): %s", path, why)}
	}
	return sum.Windows, fileProblems(path, sum), sum.LogErr, nil
}

// fileProblems are what sum says is wrong with the results file path.
func fileProblems(path string, sum stream.Summary) []error {
	var problems []error
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
	return problems
}

// kindOf names what a path that is no regular file is.
func kindOf(fi os.FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode()&os.ModeSocket != 0:
		return "socket"
	}
	return "device"
}
