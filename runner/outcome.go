package runner

import (
	"fmt"
	"strconv"
	"strings"
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
// own shorter schedule; see endedEarly). An incomplete or aborted run is not judged here: it failed for
// its own reason.
func LoadEndedEarly(rec *record.Run) (record.Verdict, bool) {
	planned, ran := time.Duration(rec.Planned), rec.End.Sub(rec.Start)
	if rec.Incomplete || rec.Aborted != "" || planned <= 0 || rec.Start.IsZero() {
		return record.Verdict{}, false
	}
	if !endedEarly(planned, ran) {
		return record.Verdict{}, false
	}
	return record.Verdict{Assertion: "load", Check: "ran for its planned duration", Metric: "load duration", Window: assertions.Whole,
		To: record.Duration(ran), Observed: ran.Seconds(), Bound: planned.Seconds(), Unit: "s", Source: record.SourceRun}, true
}

// endedEarly says load that ran ran of its planned duration ended well
// before it: by more than a tenth of it, and at least 500ms.
func endedEarly(planned, ran time.Duration) bool {
	return ran < planned-max(500*time.Millisecond, planned/10)
}

// roundMS rounds a duration to the millisecond for messages.
func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// figure writes a value with its unit for messages.
func figure(v float64, unit string) string {
	return strconv.FormatFloat(v, 'g', 4, 64) + unit
}

// k6Outcome holds k6's own verdicts (exit 99 per process) against the
// record's over the merged stream: a process that found the thresholds
// crossed where the merged samples hold them is noted, and k6 stopping
// the test early on a failed abortOnFail threshold marks the run aborted.
func k6Outcome(s *Session, script []record.Verdict) {
	rec := s.Record()
	var crossed []string
	for _, p := range rec.LoadParts {
		if p.ThresholdsCrossed {
			crossed = append(crossed, p.Name)
		}
	}
	if len(crossed) == 0 {
		return
	}
	var failed []record.Verdict
	for _, v := range script {
		if !v.Pass {
			failed = append(failed, v)
		}
	}
	if len(failed) == 0 {
		s.Note(fmt.Sprintf("%s found the script's thresholds crossed over its own samples (exit 99); over every sample of the run they hold",
			strings.Join(crossed, ", ")))
		return
	}
	planned, ran := time.Duration(rec.Planned), rec.End.Sub(rec.Start)
	if rec.Aborted != "" || rec.Incomplete || !endedEarly(planned, ran) {
		return
	}
	for _, v := range failed {
		if abortsOnFail(s.ScriptChecks(), v) {
			rec.Aborted = fmt.Sprintf("abortOnFail: %s: %q failed: k6 stopped the test (exit 99) after %s of load (observed %s, bound %s)",
				v.Assertion, v.Check, roundMS(ran), figure(v.Observed, v.Unit), figure(v.Bound, v.Unit))
			return
		}
	}
}

// abortsOnFail says v is the verdict of a check with abortOnFail.
func abortsOnFail(defs []scenario.Assertion, v record.Verdict) bool {
	for _, d := range defs {
		for _, c := range d.Checks {
			if d.Name == v.Assertion && c.Threshold == v.Check && c.AbortOnFail {
				return true
			}
		}
	}
	return false
}
