package assertions

import (
	"fmt"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// Window kinds.
const (
	// All is every window of the run, the partial first and last seconds
	// included: every sample, as k6's thresholds see them.
	All    = "all"
	Whole  = "whole"
	Before = "before"
	During = "during"
	After  = "after"
)

// Window names a part of the run: the whole of it, or the time before,
// during or after a fault.
type Window struct {
	Kind string
	// Fault is the fault the window is relative to; empty means the first
	// fault applied in the run.
	Fault string
}

// String writes the window as it is spelled in a scenario.
func (w Window) String() string {
	if w.Kind == Whole || w.Kind == All || w.Fault == "" {
		return w.Kind
	}
	return w.Kind + " " + w.Fault
}

// ParseWindow parses "whole", "all", "before F", "during F" or "after F";
// an empty string is whole, and a kind without F refers to the first fault
// applied.
func ParseWindow(s string) (Window, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return Window{Kind: Whole}, nil
	}
	switch f[0] {
	case Whole, All:
		if len(f) > 1 {
			return Window{}, &ParseError{Col: strings.Index(s, f[1]) + 1, Msg: fmt.Sprintf("expected the end after %s, found %q", f[0], f[1])}
		}
		return Window{Kind: f[0]}, nil
	case Before, During, After:
		if len(f) > 2 {
			return Window{}, &ParseError{Col: strings.Index(s, f[2]) + 1, Msg: fmt.Sprintf("expected the end after the fault name, found %q", f[2])}
		}
		w := Window{Kind: f[0]}
		if len(f) == 2 {
			w.Fault = f[1]
		}
		return w, nil
	}
	return Window{}, &ParseError{Col: strings.Index(s, f[0]) + 1,
		Msg: fmt.Sprintf("expected whole, all, before FAULT, during FAULT or after FAULT, found %q", f[0])}
}

// ValidateWindow reports whether s is a well-formed window; the scenario
// loader uses it as a hook (it checks fault names itself).
func ValidateWindow(s string) error {
	_, err := ParseWindow(s)
	return err
}

// Range is a resolved window: the instants [From, To) of the run.
type Range struct {
	From, To time.Time
	// Desc says which window it is ("during slow-vault +2s settle").
	Desc string
}

// Resolve turns a window into instants of the run, using the actual times
// of the run's fault events:
//
//	whole     [run.Start, run.End)
//	all       [run.Start, run.End) widened to whole seconds, not clamped
//	before F  [run.Start, applied(F))
//	during F  [applied(F), reverted(F))
//	after F   [reverted(F), run.End)
//
// A fault never reverted (the run ended first, or the revert failed) counts
// as reverted at run.End. The range is clamped to [run.Start, run.End], then
// settle moves its start later. A fault with no applied event is an error.
func Resolve(run *record.Run, w Window, settle time.Duration) (Range, error) {
	r := Range{From: run.Start, To: run.End, Desc: w.String()}
	if w.Kind == All {
		r.From, r.To = run.Start.Truncate(time.Second), ceilSecond(run.End)
		return r.settled(settle), nil
	}
	if w.Kind != Whole {
		name := w.Fault
		if name == "" {
			first, ok := firstApplied(run)
			if !ok {
				return Range{}, fmt.Errorf("window %q refers to the first fault, but no fault was applied", w)
			}
			name = first
			r.Desc = w.Kind + " " + name
		}
		applied, reverted, err := faultTimes(run, name)
		if err != nil {
			return Range{}, err
		}
		switch w.Kind {
		case Before:
			r.To = applied
		case During:
			r.From, r.To = applied, reverted
		case After:
			r.From = reverted
		default:
			return Range{}, fmt.Errorf("window kind %q is not known (allowed: whole, before, during, after)", w.Kind)
		}
	}
	if r.From.Before(run.Start) {
		r.From = run.Start
	}
	if r.To.After(run.End) {
		r.To = run.End
	}
	return r.settled(settle), nil
}

// settled moves the range's start settle later.
func (r Range) settled(settle time.Duration) Range {
	if settle > 0 {
		r.From = r.From.Add(settle)
		r.Desc += " +" + settle.String() + " settle"
	}
	return r
}

// ceilSecond is t rounded up to a whole second.
func ceilSecond(t time.Time) time.Time {
	if c := t.Truncate(time.Second); c.Before(t) {
		return c.Add(time.Second)
	}
	return t
}

// Contains reports whether a one-second window starting at start lies
// wholly inside the range: start ≥ From and start+1s ≤ To.
func (r Range) Contains(start time.Time) bool {
	return !start.Before(r.From) && !start.Add(time.Second).After(r.To)
}

// Seconds is how many whole wall-clock seconds lie inside the range: the
// divisor of per-second rates.
func (r Range) Seconds() int64 {
	first := r.From.Truncate(time.Second)
	if first.Before(r.From) {
		first = first.Add(time.Second)
	}
	last := r.To.Truncate(time.Second)
	if !last.After(first) {
		return 0
	}
	return int64(last.Sub(first) / time.Second)
}

// faultTimes finds when a fault was applied and reverted.
func faultTimes(run *record.Run, name string) (applied, reverted time.Time, err error) {
	idx := -1
	var failure string
	for i, ev := range run.Faults {
		if ev.Fault != name {
			continue
		}
		if ev.Action == record.Applied {
			idx = i
			applied = ev.Actual
			break
		}
		if ev.Action == record.Failed && failure == "" {
			failure = ev.Error
		}
	}
	if idx < 0 {
		for _, na := range run.NotApplied {
			if na.Fault == name && failure == "" {
				failure = fmt.Sprintf("%s (+%s)", na.Reason, time.Duration(na.Start))
			}
		}
		if failure != "" {
			return time.Time{}, time.Time{}, fmt.Errorf("fault %s was never applied: %s", name, failure)
		}
		return time.Time{}, time.Time{}, fmt.Errorf("fault %s was never applied", name)
	}
	reverted = run.End
	for _, ev := range run.Faults[idx+1:] {
		if ev.Fault == name && ev.Action == record.Reverted {
			reverted = ev.Actual
			break
		}
	}
	return applied, reverted, nil
}

// firstApplied is the fault applied earliest in the run.
func firstApplied(run *record.Run) (string, bool) {
	var name string
	var at time.Time
	for _, ev := range run.Faults {
		if ev.Action == record.Applied && (name == "" || ev.Actual.Before(at)) {
			name, at = ev.Fault, ev.Actual
		}
	}
	return name, name != ""
}
