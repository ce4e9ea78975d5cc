package main

// RateSearch finds the highest rate that passes: it doubles from Start until
// a rate fails (or Max is reached), then bisects between the highest pass
// and the lowest failure until they are within max(MinStep, Resolution×pass)
// or MaxSteps trials were made. It is a pure state machine: the caller runs
// each trial and records the outcome.
type RateSearch struct {
	Start, Max, MinStep int
	// Resolution is the relative width at which bisection stops (0.05: 5%).
	Resolution float64
	MaxSteps   int

	pass, fail int // highest passing and lowest failing rate; 0 = none yet
	steps      int
}

// Next returns the next rate to try, or false when the search is done.
func (s *RateSearch) Next() (int, bool) {
	if s.steps >= s.MaxSteps || s.Start <= 0 || s.MinStep <= 0 {
		return 0, false
	}
	var next int
	switch {
	case s.steps == 0:
		next = min(s.Start, s.Max)
	case s.fail == 0: // still growing
		if s.pass >= s.Max {
			return 0, false
		}
		next = min(2*s.pass, s.Max)
	default:
		gap := max(float64(s.MinStep), s.Resolution*float64(s.pass))
		if float64(s.fail-s.pass) <= gap {
			return 0, false
		}
		next = s.pass + (s.fail-s.pass)/2
		next = next / s.MinStep * s.MinStep
		if next <= s.pass {
			next = s.pass + s.MinStep
		}
		if next >= s.fail {
			return 0, false
		}
	}
	return next, true
}

// Record notes the outcome of a trial at rate.
func (s *RateSearch) Record(rate int, ok bool) {
	s.steps++
	if ok {
		s.pass = max(s.pass, rate)
		return
	}
	if s.fail == 0 || rate < s.fail {
		s.fail = rate
	}
}

// Best is the highest rate that passed (0 if none did).
func (s *RateSearch) Best() int { return s.pass }

// Steps is how many trials were recorded.
func (s *RateSearch) Steps() int { return s.steps }
