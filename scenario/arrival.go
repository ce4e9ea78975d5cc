package scenario

import (
	"fmt"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
)

// maxRate bounds a stream's rate (requests per second).
const maxRate = 1e6

// Profile is the arrival's rate over time in a load of length load: a
// rate or bursts without a duration last to its end.
func (a *Arrival) Profile(load time.Duration) (arrival.Profile, error) {
	start := a.Start.Std()
	rest := load - start
	if a.Duration > 0 {
		rest = a.Duration.Std()
	}
	switch {
	case a.Bursts != nil:
		b := a.Bursts
		return arrival.BurstShape{Base: b.Base, Peak: b.Peak, Every: b.Every.Std(), Length: b.Length.Std(),
			Rise: b.Rise.Std(), Duration: rest, StartTime: start}.Profile()
	case a.Step != nil:
		return a.Step.shape(start).Profile()
	case len(a.Stages) > 0:
		p := arrival.Profile{Start: start, StartRate: a.StartRate}
		for _, st := range a.Stages {
			p.Segments = append(p.Segments, arrival.Segment{Rate: st.Target, Duration: st.Duration.Std()})
		}
		return p, p.Validate()
	}
	return arrival.Constant(a.rate(), start, rest), nil
}

// rate is the constant rate, 0 when there is none.
func (a *Arrival) rate() float64 {
	if a.Rate == nil {
		return 0
	}
	return *a.Rate
}

// shape is the step with its defaults filled.
func (s *Step) shape(start time.Duration) arrival.StepShape {
	sh := arrival.StepShape{Capacity: s.Capacity, Factor: s.Factor, Baseline: 0.5, Before: s.Before.Std(),
		Rise: s.Rise.Std(), Hold: s.Hold.Std(), After: s.After.Std(), StartTime: start}
	if sh.Factor == 0 {
		sh.Factor = 2
	}
	if s.Baseline != nil {
		sh.Baseline = *s.Baseline
	}
	return sh
}

// arrival checks a stream's arrival at path p.
func (v *validator) arrival(p string, a *Arrival) {
	if !v.ok(p) {
		return
	}
	load := v.s.Workload.Duration.Std()
	forms := 0
	for _, set := range []bool{a.Rate != nil, len(a.Stages) > 0, a.Bursts != nil, a.Step != nil} {
		if set {
			forms++
		}
	}
	switch {
	case forms == 0:
		v.errf(p, "rate, stages, bursts or step", "no schedule: set one of rate, stages, bursts, step")
		return
	case forms > 1:
		v.errf(p, "rate, stages, bursts or step", "more than one schedule: set one of rate, stages, bursts, step")
		return
	}
	v.nonNegative(p+".start", a.Start)
	v.nonNegative(p+".duration", a.Duration)
	if r := a.rate(); r < 0 || r > maxRate {
		v.errf(p+".rate", fmt.Sprintf("0 to %g requests/s", maxRate), "rate %g out of range", r)
	}
	if a.StartRate < 0 || a.StartRate > maxRate {
		v.errf(p+".start_rate", fmt.Sprintf("0 to %g requests/s", maxRate), "start_rate %g out of range", a.StartRate)
	}
	if a.Duration > 0 && (len(a.Stages) > 0 || a.Step != nil) {
		v.errf(p+".duration", "", "duration is for rate and bursts; stages and step have their own")
	}
	if a.StartRate != 0 && len(a.Stages) == 0 {
		v.errf(p+".start_rate", "", "start_rate is the first stage's start; there are no stages")
	}
	before := len(v.errs)
	for i, st := range a.Stages {
		sp := fmt.Sprintf("%s.stages[%d]", p, i)
		if st.Target < 0 || st.Target > maxRate {
			v.errf(sp+".target", fmt.Sprintf("0 to %g requests/s", maxRate), "target %g out of range", st.Target)
		}
		if v.nonNegative(sp+".duration", st.Duration) && st.Duration == 0 && v.ok(sp+".duration") {
			v.errf(sp+".duration", "", "must be greater than 0")
		}
	}
	if len(v.errs) > before || a.Start < 0 || a.Duration < 0 || load <= 0 || !v.ok(p+".start") || !v.ok(p+".duration") {
		return
	}
	if a.Start.Std() >= load {
		v.errf(p+".start", "", "the stream starts at %s, after the load ends (workload.duration %s)", a.Start.Std(), load)
		return
	}
	prof, err := a.Profile(load)
	switch {
	case err != nil:
		v.errf(p+"."+a.form(), "", "%s", err.Error())
	case prof.End() > load:
		v.errf(p, "", "the stream ends at %s, after the load ends (workload.duration %s)", prof.End(), load)
	}
}

// form names the schedule's field.
func (a *Arrival) form() string {
	switch {
	case a.Bursts != nil:
		return "bursts"
	case a.Step != nil:
		return "step"
	case len(a.Stages) > 0:
		return "stages"
	}
	return "rate"
}
