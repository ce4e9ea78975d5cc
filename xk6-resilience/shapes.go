package resilience

import (
	"fmt"
	"time"
)

// Stage is one stage of k6's ramping-arrival-rate executor: the rate moves
// linearly to Target over Duration.
type Stage struct {
	Target   int    `json:"target"`
	Duration string `json:"duration"`
}

// Scenario is a k6 scenario object for an arrival-rate executor; fields left
// zero are omitted so a script can spread it and add its own (exec, tags, …).
type Scenario struct {
	Executor        string  `json:"executor"`
	StartRate       int     `json:"startRate,omitempty"`
	Rate            int     `json:"rate,omitempty"`
	TimeUnit        string  `json:"timeUnit"`
	Duration        string  `json:"duration,omitempty"`
	StartTime       string  `json:"startTime,omitempty"`
	Stages          []Stage `json:"stages,omitempty"`
	PreAllocatedVUs int     `json:"preAllocatedVUs"`
	MaxVUs          int     `json:"maxVUs"`
}

// VUs says how many VUs an arrival-rate scenario may use; zero fields
// default to peak/10 pre-allocated (at least 1) and four times that at most.
type VUs struct {
	PreAllocated, Max int
}

func (v VUs) resolve(peak int) (int, int) {
	pre, mx := v.PreAllocated, v.Max
	if pre <= 0 {
		pre = max(1, (peak+9)/10)
	}
	if mx <= 0 {
		mx = 4 * pre
	}
	return pre, max(mx, pre)
}

// BurstShape is a base rate with periodic bursts: every Every, the rate
// rises to Peak over Rise, holds there for the rest of Length, then falls
// back over Rise. Duration is the whole scenario.
type BurstShape struct {
	Base, Peak                    int
	Every, Length, Rise, Duration time.Duration
	StartTime                     time.Duration
	VUs                           VUs
}

// Bursts returns a ramping-arrival-rate scenario of the shape.
func Bursts(b BurstShape) (Scenario, error) {
	if b.Rise == 0 {
		b.Rise = time.Second
	}
	switch {
	case b.Base < 0 || b.Peak < b.Base:
		return Scenario{}, fmt.Errorf("bursts: base %d, peak %d: want 0 <= base <= peak", b.Base, b.Peak)
	case b.Length < b.Rise:
		return Scenario{}, fmt.Errorf("bursts: length %s shorter than rise %s", b.Length, b.Rise)
	case b.Every < b.Length+b.Rise:
		return Scenario{}, fmt.Errorf("bursts: every %s: want at least length %s + rise %s", b.Every, b.Length, b.Rise)
	case b.Duration < b.Every:
		return Scenario{}, fmt.Errorf("bursts: duration %s shorter than one period (every %s)", b.Duration, b.Every)
	case b.Duration > 24*time.Hour:
		return Scenario{}, fmt.Errorf("bursts: duration %s: at most 24h", b.Duration)
	}
	var st []Stage
	var at time.Duration
	for at+b.Every <= b.Duration {
		if hold := b.Every - b.Length - b.Rise; hold > 0 {
			st = append(st, Stage{b.Base, fmtDur(hold)})
		}
		st = append(st, Stage{b.Peak, fmtDur(b.Rise)})
		if hold := b.Length - b.Rise; hold > 0 {
			st = append(st, Stage{b.Peak, fmtDur(hold)})
		}
		st = append(st, Stage{b.Base, fmtDur(b.Rise)})
		at += b.Every
	}
	if rest := b.Duration - at; rest > 0 {
		st = append(st, Stage{b.Base, fmtDur(rest)})
	}
	pre, mx := b.VUs.resolve(b.Peak)
	return Scenario{Executor: "ramping-arrival-rate", StartRate: b.Base, TimeUnit: "1s",
		StartTime: optDur(b.StartTime), Stages: st, PreAllocatedVUs: pre, MaxVUs: mx}, nil
}

// StepShape runs at Baseline×Capacity for Before, steps to Factor×Capacity
// over Rise and holds for Hold, then returns to the baseline for After.
type StepShape struct {
	Capacity                  int
	Factor, Baseline          float64
	Before, Rise, Hold, After time.Duration
	StartTime                 time.Duration
	VUs                       VUs
}

// StepOverload returns a ramping-arrival-rate scenario of the shape.
func StepOverload(s StepShape) (Scenario, error) {
	if s.Rise == 0 {
		s.Rise = time.Second
	}
	switch {
	case s.Capacity < 1:
		return Scenario{}, fmt.Errorf("stepOverload: capacity %d: want at least 1 request/s", s.Capacity)
	case !(s.Factor > 0 && s.Factor <= 1000):
		return Scenario{}, fmt.Errorf("stepOverload: factor %v: allowed (0, 1000]", s.Factor)
	case !(s.Baseline >= 0 && s.Baseline <= s.Factor):
		return Scenario{}, fmt.Errorf("stepOverload: baseline %v: allowed 0..factor (%v)", s.Baseline, s.Factor)
	case s.Hold <= 0 || s.Before < 0 || s.After < 0:
		return Scenario{}, fmt.Errorf("stepOverload: hold %s must be positive, before %s and after %s not negative", s.Hold, s.Before, s.After)
	}
	base := int(float64(s.Capacity)*s.Baseline + 0.5)
	peak := int(float64(s.Capacity)*s.Factor + 0.5)
	var st []Stage
	if s.Before > 0 {
		st = append(st, Stage{base, fmtDur(s.Before)})
	}
	st = append(st, Stage{peak, fmtDur(s.Rise)}, Stage{peak, fmtDur(s.Hold)})
	if s.After > 0 {
		st = append(st, Stage{base, fmtDur(s.Rise)}, Stage{base, fmtDur(s.After)})
	}
	pre, mx := s.VUs.resolve(peak)
	return Scenario{Executor: "ramping-arrival-rate", StartRate: base, TimeUnit: "1s",
		StartTime: optDur(s.StartTime), Stages: st, PreAllocatedVUs: pre, MaxVUs: mx}, nil
}

// FloodShape is a constant arrival rate for Duration, from StartTime.
type FloodShape struct {
	Rate                int
	Duration, StartTime time.Duration
	VUs                 VUs
}

// Flood returns a constant-arrival-rate scenario of the shape.
func Flood(f FloodShape) (Scenario, error) {
	if f.Rate < 1 || f.Duration <= 0 {
		return Scenario{}, fmt.Errorf("flood: rate %d and duration %s: want a rate ≥ 1/s for a positive duration", f.Rate, f.Duration)
	}
	pre, mx := f.VUs.resolve(f.Rate)
	return Scenario{Executor: "constant-arrival-rate", Rate: f.Rate, TimeUnit: "1s",
		Duration: fmtDur(f.Duration), StartTime: optDur(f.StartTime), PreAllocatedVUs: pre, MaxVUs: mx}, nil
}

// fmtDur writes d the way k6 reads it: whole seconds as "Ns", else "Nms".
func fmtDur(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}

func optDur(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmtDur(d)
}
