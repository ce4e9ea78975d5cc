package judge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
)

// Timeline is what a judge of results files knows beside the windows:
// the fault events and, from a run record, when load ran, what the
// services said (/metrics, end checks) and what the load said of itself.
type Timeline struct {
	Faults []record.FaultEvent
	// FromRecord says the timeline is a run record's: the fields below
	// and Faults (scripted ones included) are the run's.
	FromRecord bool
	Start, End time.Time
	Scrapes    []record.Scrape
	EndChecks  []record.EndCheck
	// ScriptChecks are the load's own checks (a k6 script's thresholds),
	// LoadParts how its processes ended (k6's own verdicts), Aborted why
	// an abortOnFail check stopped the run.
	ScriptChecks []record.ScriptCheck
	LoadParts    []record.LoadPart
	Aborted      string
}

// maxTimelineLine bounds one line of an events file (a run record is one
// line: its windows are skipped, not held, by encoding/json's decoder
// only once read, so the bound is the file's).
const maxTimelineLine = 64 << 20

// ReadTimelineFile reads the fault timeline file name (ReadTimeline) from
// wd: at most workdir.MaxRecord bytes, and only once its first character
// that is not blank opens a JSON object, as both forms do, so that
// /dev/zero or a binary file is refused at its first byte. It gives up
// when ctx ends.
func ReadTimelineFile(ctx context.Context, wd workdir.FS, name string) (Timeline, error) {
	b, err := workdir.Read(ctx, name, workdir.MaxRecord, wd.Opener(name), func(r io.Reader) ([]byte, error) { return readObjects(name, r) })
	if err != nil {
		return Timeline{}, err
	}
	return ReadTimeline(name, b)
}

// readObjects reads r whole once its first character that is not blank
// is the "{" of a JSON object.
func readObjects(name string, r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	var head []byte
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return head, nil
		}
		if err != nil {
			return nil, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			head = append(head, c)
			continue
		case '{':
			rest, err := io.ReadAll(br)
			return append(append(head, c), rest...), err
		}
		line := bytes.Count(head, []byte("\n")) + 1
		col := len(head) - bytes.LastIndexByte(head, '\n')
		return nil, fmt.Errorf("%s:%d:%d: byte %q: not a fault timeline; want a run record (run.json) or fault events, one JSON object a line", name, line, col, c)
	}
}

// ReadTimeline reads a fault timeline: a run record (run.json: its
// faults, load start and end, scrapes and end checks), or fault events,
// one JSON object a line, as `chaosrun fault apply --events-out` writes
// them. Errors name the file and line and say what was expected.
func ReadTimeline(name string, b []byte) (Timeline, error) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return Timeline{}, fmt.Errorf("%s: empty; want a run record (run.json) or fault events, one JSON object a line", name)
	}
	if isRecord(trimmed) {
		return readRecordTimeline(name, trimmed)
	}
	var tl Timeline
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxTimelineLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ev, err := parseEvent(line)
		if err != nil {
			return Timeline{}, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		tl.Faults = append(tl.Faults, ev)
	}
	if err := sc.Err(); err != nil {
		return Timeline{}, fmt.Errorf("%s: %w", name, err)
	}
	return tl, nil
}

// isRecord says a file's first JSON object is a run record.
func isRecord(b []byte) bool {
	var head struct {
		Version *int `json:"schema_version"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	return dec.Decode(&head) == nil && head.Version != nil
}

func readRecordTimeline(name string, b []byte) (Timeline, error) {
	var r record.Run
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return Timeline{}, fmt.Errorf("%s: run record: %w", name, err)
	}
	if dec.More() {
		return Timeline{}, fmt.Errorf("%s: run record: more after the record; want one JSON object", name)
	}
	switch {
	case r.SchemaVersion != record.SchemaVersion:
		return Timeline{}, fmt.Errorf("%s: run record schema_version %d; this judge reads %d", name, r.SchemaVersion, record.SchemaVersion)
	case r.Start.IsZero() || r.End.Before(r.Start):
		return Timeline{}, fmt.Errorf("%s: run record: load start %s, end %s: want a start and an end after it (a run whose load never started has no timeline)",
			name, r.Start.Format(time.RFC3339Nano), r.End.Format(time.RFC3339Nano))
	}
	for i, ev := range r.Faults {
		if err := checkEvent(ev); err != nil {
			return Timeline{}, fmt.Errorf("%s: run record: faults[%d]: %w", name, i, err)
		}
	}
	return Timeline{Faults: r.Faults, FromRecord: true, Start: r.Start, End: r.End, Scrapes: r.Scrapes, EndChecks: r.EndChecks,
		ScriptChecks: r.ScriptChecks, LoadParts: r.LoadParts, Aborted: r.Aborted}, nil
}

// parseEvent decodes one fault event line strictly.
func parseEvent(line []byte) (record.FaultEvent, error) {
	var ev record.FaultEvent
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return ev, fmt.Errorf("not a fault event (want a JSON object with fault, kind, target, action, scheduled, actual): %w", err)
	}
	if dec.More() {
		return ev, errors.New("more than one JSON value on the line; want one fault event a line")
	}
	return ev, checkEvent(ev)
}

// checkEvent checks a fault event's required fields.
func checkEvent(ev record.FaultEvent) error {
	switch {
	case ev.Fault == "":
		return errors.New("fault event without a fault name")
	case ev.Action != record.Applied && ev.Action != record.Reverted && ev.Action != record.Failed:
		return fmt.Errorf("fault %s: action %q; allowed: applied, reverted, failed", ev.Fault, ev.Action)
	case ev.Actual.IsZero():
		return fmt.Errorf("fault %s: %s event without its actual time", ev.Fault, ev.Action)
	}
	return nil
}
