package arrival

import (
	"fmt"
	"time"
)

// BurstShape is a base rate with periodic bursts: every Every, the rate
// rises to Peak over Rise, holds there for the rest of Length, then falls
// back over Rise. Duration is the whole scenario.
type BurstShape struct {
	Base, Peak                    int
	Every, Length, Rise, Duration time.Duration
	StartTime                     time.Duration
	VUs                           VUs
}

// Profile returns the shape's arrival rate over time.
func (b BurstShape) Profile() (Profile, error) {
	if b.Rise == 0 {
		b.Rise = time.Second
	}
	switch {
	case b.Base < 0 || b.Peak < b.Base:
		return Profile{}, fmt.Errorf("bursts: base %d, peak %d: want 0 <= base <= peak", b.Base, b.Peak)
	case b.Length < b.Rise:
		return Profile{}, fmt.Errorf("bursts: length %s shorter than rise %s", b.Length, b.Rise)
	case b.Every < b.Length+b.Rise:
		return Profile{}, fmt.Errorf("bursts: every %s: want at least length %s + rise %s", b.Every, b.Length, b.Rise)
	case b.Duration < b.Every:
		return Profile{}, fmt.Errorf("bursts: duration %s shorter than one period (every %s)", b.Duration, b.Every)
	case b.Duration > 24*time.Hour:
		return Profile{}, fmt.Errorf("bursts: duration %s: at most 24h", b.Duration)
	case b.StartTime < 0:
		return Profile{}, fmt.Errorf("bursts: start time %s must not be negative", b.StartTime)
	}
	base, peak := float64(b.Base), float64(b.Peak)
	var st []Segment
	var at time.Duration
	for at+b.Every <= b.Duration {
		if hold := b.Every - b.Length - b.Rise; hold > 0 {
			st = append(st, Segment{base, hold})
		}
		st = append(st, Segment{peak, b.Rise})
		if hold := b.Length - b.Rise; hold > 0 {
			st = append(st, Segment{peak, hold})
		}
		st = append(st, Segment{base, b.Rise})
		at += b.Every
	}
	if rest := b.Duration - at; rest > 0 {
		st = append(st, Segment{base, rest})
	}
	return Profile{Start: b.StartTime, StartRate: base, Segments: st}, nil
}

// Bursts returns a ramping-arrival-rate scenario of the shape.
func Bursts(b BurstShape) (Scenario, error) {
	p, err := b.Profile()
	if err != nil {
		return Scenario{}, err
	}
	return ramping(p, b.Peak, b.VUs), nil
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

// rates returns the step's base and peak rates, whole requests per second
// as k6 takes them.
func (s StepShape) rates() (base, peak int) {
	return int(float64(s.Capacity)*s.Baseline + 0.5), int(float64(s.Capacity)*s.Factor + 0.5)
}

// Profile returns the shape's arrival rate over time.
func (s StepShape) Profile() (Profile, error) {
	if s.Rise == 0 {
		s.Rise = time.Second
	}
	switch {
	case s.Capacity < 1:
		return Profile{}, fmt.Errorf("stepOverload: capacity %d: want at least 1 request/s", s.Capacity)
	case !(s.Factor > 0 && s.Factor <= 1000):
		return Profile{}, fmt.Errorf("stepOverload: factor %v: allowed (0, 1000]", s.Factor)
	case !(s.Baseline >= 0 && s.Baseline <= s.Factor):
		return Profile{}, fmt.Errorf("stepOverload: baseline %v: allowed 0..factor (%v)", s.Baseline, s.Factor)
	case s.Hold <= 0 || s.Before < 0 || s.After < 0 || s.Rise < 0:
		return Profile{}, fmt.Errorf("stepOverload: hold %s must be positive, before %s, rise %s and after %s not negative", s.Hold, s.Before, s.Rise, s.After)
	case s.StartTime < 0:
		return Profile{}, fmt.Errorf("stepOverload: start time %s must not be negative", s.StartTime)
	}
	b, p := s.rates()
	base, peak := float64(b), float64(p)
	var st []Segment
	if s.Before > 0 {
		st = append(st, Segment{base, s.Before})
	}
	st = append(st, Segment{peak, s.Rise}, Segment{peak, s.Hold})
	if s.After > 0 {
		st = append(st, Segment{base, s.Rise}, Segment{base, s.After})
	}
	return Profile{Start: s.StartTime, StartRate: base, Segments: st}, nil
}

// StepOverload returns a ramping-arrival-rate scenario of the shape.
func StepOverload(s StepShape) (Scenario, error) {
	p, err := s.Profile()
	if err != nil {
		return Scenario{}, err
	}
	_, peak := s.rates()
	return ramping(p, peak, s.VUs), nil
}

// FloodShape is a constant arrival rate for Duration, from StartTime.
type FloodShape struct {
	Rate                int
	Duration, StartTime time.Duration
	VUs                 VUs
}

// Profile returns the shape's arrival rate over time.
func (f FloodShape) Profile() (Profile, error) {
	if f.Rate < 1 || f.Duration <= 0 || f.StartTime < 0 {
		return Profile{}, fmt.Errorf("flood: rate %d and duration %s from %s: want a rate ≥ 1/s for a positive duration", f.Rate, f.Duration, f.StartTime)
	}
	return Constant(float64(f.Rate), f.StartTime, f.Duration), nil
}

// Flood returns a constant-arrival-rate scenario of the shape.
func Flood(f FloodShape) (Scenario, error) {
	if _, err := f.Profile(); err != nil {
		return Scenario{}, err
	}
	pre, mx := f.VUs.resolve(f.Rate)
	return Scenario{Executor: "constant-arrival-rate", Rate: f.Rate, TimeUnit: "1s",
		Duration: K6Duration(f.Duration), StartTime: optDur(f.StartTime), PreAllocatedVUs: pre, MaxVUs: mx}, nil
}
