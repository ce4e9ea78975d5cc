package runner

import (
	"fmt"
	"strconv"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// abortWatch judges a run's abortOnFail checks as windows arrive; fired
// is closed when one failed.
type abortWatch struct {
	fired chan struct{}
	done  chan struct{}
	stop  func()
	v     record.Verdict
	ok    bool
}

// watchAborts watches live's checks for a run that started at start, with
// the fault events of evs; it does nothing when there are none.
func watchAborts(live *assertions.Live, start time.Time, evs *eventLog) *abortWatch {
	w := &abortWatch{done: make(chan struct{})}
	if live.Len() == 0 {
		close(w.done)
		return w
	}
	w.fired = make(chan struct{})
	stop := make(chan struct{})
	w.stop = func() { close(stop) }
	go func() {
		defer close(w.done)
		for {
			select {
			case <-stop:
				return
			case <-live.Changed():
				if v, ok := live.Check(start, evs.list()); ok {
					w.v, w.ok = v, true
					close(w.fired)
					return
				}
			}
		}
	}()
	return w
}

// end stops the watch and says which check failed, if one did.
func (w *abortWatch) end() (record.Verdict, bool) {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	<-w.done
	return w.v, w.ok
}

// abortReason says which check stopped the run, when, and with what.
func abortReason(v record.Verdict) string {
	return fmt.Sprintf("abortOnFail: %s: %q failed after %s of load (observed %s, bound %s over %s)",
		v.Assertion, v.Check, roundMS(time.Duration(v.To)), figure(v.Observed, v.Unit), figure(v.Bound, v.Unit), v.Window)
}

// NotApplied lists the scheduled faults of sc that have no event in rec:
// load ended, or the run was aborted, before their start.
func NotApplied(sc *scenario.Scenario, rec *record.Run) []record.NotApplied {
	seen := map[string]bool{}
	for _, ev := range rec.Faults {
		seen[ev.Fault] = true
	}
	ended := rec.End.Sub(rec.Start)
	why := fmt.Sprintf("load ended after %s, before its start", roundMS(ended))
	switch {
	case rec.Aborted != "":
		why = fmt.Sprintf("the run was aborted after %s of load, before its start", roundMS(ended))
	case rec.Start.IsZero():
		why = "load never started"
	}
	var out []record.NotApplied
	for _, f := range sc.Faults {
		if seen[f.Name] {
			continue
		}
		target := f.Edge
		if target == "" {
			target = f.Host
		}
		out = append(out, record.NotApplied{Fault: f.Name, Kind: f.Kind, Target: target, Start: record.Duration(f.Start), Reason: why})
	}
	return out
}

// LoadEndedEarly is a failing verdict when load ended by itself well
// before its planned duration (a k6 script that ran one iteration, or its
// own shorter schedule): more than a tenth of it, and at least 500ms,
// short. An incomplete or aborted run is not judged here: it failed for
// its own reason.
func LoadEndedEarly(rec *record.Run) (record.Verdict, bool) {
	planned, ran := time.Duration(rec.Planned), rec.End.Sub(rec.Start)
	if rec.Incomplete || rec.Aborted != "" || planned <= 0 || rec.Start.IsZero() {
		return record.Verdict{}, false
	}
	if ran >= planned-max(500*time.Millisecond, planned/10) {
		return record.Verdict{}, false
	}
	return record.Verdict{Assertion: "load", Check: "ran for its planned duration", Metric: "load duration", Window: assertions.Whole,
		To: record.Duration(ran), Observed: ran.Seconds(), Bound: planned.Seconds(), Unit: "s", Source: record.SourceRun}, true
}

// roundMS rounds a duration to the millisecond for messages.
func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// figure writes a value with its unit for messages.
func figure(v float64, unit string) string {
	return strconv.FormatFloat(v, 'g', 4, 64) + unit
}
