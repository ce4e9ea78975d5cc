package assertions

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// AbortReason says which check stopped the run, when, and with what.
func AbortReason(v record.Verdict) string {
	return fmt.Sprintf("abortOnFail: %s: %q failed after %s of load (observed %s, bound %s over %s)",
		v.Assertion, v.Check, roundMS(time.Duration(v.To)), figure(v.Observed, v.Unit), figure(v.Bound, v.Unit), v.Window)
}

// roundMS rounds a duration to the millisecond for messages.
func roundMS(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// figure writes a value with its unit for messages.
func figure(v float64, unit string) string {
	return strconv.FormatFloat(v, 'g', 4, 64) + unit
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
	return record.Verdict{Assertion: "load", Check: "ran for its planned duration", Metric: "load duration", Window: Whole,
		To: record.Duration(ran), Observed: ran.Seconds(), Bound: planned.Seconds(), Unit: "s", Source: record.SourceRun}, true
}

// endedEarly says load that ran ran of its planned duration ended well
// before it: by more than a tenth of it, and at least 500ms.
func endedEarly(planned, ran time.Duration) bool {
	return ran < planned-max(500*time.Millisecond, planned/10)
}

// k6Outcome holds k6's own verdicts (exit 99 per process) against sv,
// the verdicts of the script's checks over the windows, changed in place.
// One process saw every sample: its exit 99 fails the run. A threshold it
// names crossed (its summary) fails, saying so, though the windows hold
// it; when its summary names none and every verdict passed, a verdict
// "k6 thresholds" fails. Several processes: the verdicts over their
// samples merged stand, and a process that found the thresholds crossed
// over its own share is a problem naming it. k6 stopping the test early on
// a failed abortOnFail threshold marks the run aborted.
func k6Outcome(rec *record.Run, checks []scenario.Assertion, sv []record.Verdict) (extra []record.Verdict, notes []string) {
	var crossed []record.LoadPart
	for _, p := range rec.LoadParts {
		if p.ThresholdsCrossed {
			crossed = append(crossed, p)
		}
	}
	if len(crossed) == 0 {
		return nil, nil
	}
	if len(rec.LoadParts) == 1 {
		extra = k6Crossed(crossed[0], sv)
	}
	var failed []record.Verdict
	for _, v := range slices.Concat(sv, extra) {
		if !v.Pass {
			failed = append(failed, v)
		}
	}
	if len(failed) == 0 {
		var names []string
		for _, p := range crossed {
			names = append(names, p.Name+crossedList(p.Crossed))
		}
		return nil, []string{fmt.Sprintf("k6 disagrees: %s found the script's thresholds crossed over its own share of the samples (exit 99); over every sample of the run merged they hold, and the verdicts are those",
			strings.Join(names, "; "))}
	}
	planned, ran := time.Duration(rec.Planned), rec.End.Sub(rec.Start)
	if rec.Aborted != "" || rec.Incomplete || !endedEarly(planned, ran) {
		return extra, nil
	}
	for _, v := range failed {
		if abortsOnFail(checks, v) {
			rec.Aborted = fmt.Sprintf("abortOnFail: %s: %q failed: k6 stopped the test (exit 99) after %s of load (observed %s, bound %s)",
				v.Assertion, v.Check, roundMS(ran), figure(v.Observed, v.Unit), figure(v.Bound, v.Unit))
			break
		}
	}
	return extra, nil
}

// k6Crossed fails the verdicts in sv of the thresholds the one k6 process
// p found crossed, and returns a failing verdict for each crossed one sv
// lacks, or, when p's summary names none and every verdict in sv passed,
// one for k6's exit 99 itself.
func k6Crossed(p record.LoadPart, sv []record.Verdict) []record.Verdict {
	var extra []record.Verdict
	for _, c := range p.Crossed {
		name := "threshold " + c.Key
		i := slices.IndexFunc(sv, func(v record.Verdict) bool { return v.Assertion == name && v.Check == c.Expr })
		switch {
		case i < 0:
			extra = append(extra, record.Verdict{Assertion: name, Check: c.Expr, Metric: c.Key, Window: All,
				Error: "k6 found this threshold crossed (exit 99); chaosrun does not judge it over the windows", Source: record.SourceScript})
		case sv[i].Pass:
			sv[i].Pass = false
			sv[i].Error = fmt.Sprintf("k6 found this threshold crossed over the same samples (exit 99), though the windows give %s against %s",
				figure(sv[i].Observed, sv[i].Unit), figure(sv[i].Bound, sv[i].Unit))
		}
	}
	if len(p.Crossed) > 0 || slices.ContainsFunc(sv, func(v record.Verdict) bool { return !v.Pass }) {
		return extra
	}
	return append(extra, record.Verdict{Assertion: "k6 thresholds", Check: "k6's own verdict (exit 99)", Metric: "thresholds", Window: All,
		Error:  fmt.Sprintf("%s found the script's thresholds crossed (exit 99); its summary does not say which, and over the windows every one holds", p.Name),
		Source: record.SourceScript})
}

// crossedList is " (KEY: EXPR, …)" of the thresholds a part found
// crossed, "" when none is known.
func crossedList(ts []record.Threshold) string {
	if len(ts) == 0 {
		return ""
	}
	var out []string
	for _, t := range ts {
		out = append(out, t.Key+": "+t.Expr)
	}
	return " (" + strings.Join(out, ", ") + ")"
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

// Judge is the one function from a run record to verdicts, once the
// record's windows, scrapes, end checks and fault timeline are in: sc's
// assertions, then script (the load's own checks: a k6 script's
// thresholds, held against k6's own outcome per process), then whether
// load ran for its planned duration. It sets rec.NotApplied, puts the
// verdicts before those rec holds already, and returns the problems to
// note. `chaosrun run`, game days, `chaosrun judge` and the bench all
// judge through it.
func Judge(sc *scenario.Scenario, rec *record.Run, script []scenario.Assertion) []string {
	sv := Evaluate(rec, script)
	for i := range sv {
		sv[i].Source = record.SourceScript
	}
	extra, notes := k6Outcome(rec, script, sv)
	rec.NotApplied = NotApplied(sc, rec)
	vs := slices.Concat(Evaluate(rec, sc.Assertions), sv, extra)
	notes = append(notes, CoordinatedOmission(sc, rec, vs)...)
	effects, enotes := judgeEffects(sc, rec)
	vs, notes = append(vs, effects...), append(notes, enotes...)
	if v, ok := LoadEndedEarly(rec); ok {
		vs = append(vs, v)
		notes = append(notes, fmt.Sprintf("load ended by itself after %s of its planned %s", roundMS(time.Duration(v.To)), time.Duration(rec.Planned)))
	}
	rec.Verdicts = append(vs, rec.Verdicts...)
	return notes
}

// RecordChecks are a load's own checks as the record keeps them.
func RecordChecks(defs []scenario.Assertion) []record.ScriptCheck {
	var out []record.ScriptCheck
	for _, d := range defs {
		for _, c := range d.Checks {
			out = append(out, record.ScriptCheck{Assertion: d.Name, Metric: d.Metric, Window: d.Window, Check: c.Threshold,
				AbortOnFail: c.AbortOnFail, DelayAbortEval: record.Duration(c.DelayAbortEval)})
		}
	}
	return out
}

// ScriptChecksOf are the load's own checks a record keeps (RecordChecks),
// one assertion per name, in their order.
func ScriptChecksOf(rec *record.Run) []scenario.Assertion {
	var out []scenario.Assertion
	at := map[string]int{}
	for _, c := range rec.ScriptChecks {
		i, ok := at[c.Assertion]
		if !ok {
			i = len(out)
			at[c.Assertion] = i
			out = append(out, scenario.Assertion{Name: c.Assertion, Metric: c.Metric, Window: c.Window})
		}
		out[i].Checks = append(out[i].Checks, scenario.Check{Threshold: c.Check, AbortOnFail: c.AbortOnFail,
			DelayAbortEval: scenario.Duration(c.DelayAbortEval)})
	}
	return out
}
