package server

import "time"

// CodelParams are CoDel's two knobs.
type CodelParams struct {
	// Target is the acceptable standing queueing delay (folly: 5 ms).
	Target time.Duration
	// Interval is how often the overload state is re-evaluated (folly: 100 ms).
	Interval time.Duration
}

// defaultCodel are folly's defaults: 5 ms target, 100 ms interval.
var defaultCodel = CodelParams{Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond}

// slough is the queueing delay above which an overloaded queue fails a request: 2×Target.
func (p CodelParams) slough() time.Duration { return 2 * p.Target }

// codelState is the CoDel controller of folly's Codel class, as a value whose
// decisions are functions of (state, now): the clock is always passed in.
//
// Each Interval the queue is judged: overloaded if the smallest queueing delay
// observed during the interval was above Target. While overloaded, a request
// that waited more than 2×Target is failed fast. The first request observed in
// an interval is never failed (it only starts the new interval's minimum).
type codelState struct {
	// IntervalEnd is when the current interval ends (zero: none started yet).
	IntervalEnd time.Time
	// MinDelay is the smallest delay observed in the current interval.
	MinDelay time.Duration
	// Reset says the next observation starts MinDelay afresh.
	Reset bool
	// Overloaded is the verdict of the last finished interval.
	Overloaded bool
}

// tick ends the current interval if it is over at now, judging it, and
// returns whether the queue is overloaded.
func (s *codelState) tick(p CodelParams, now time.Time) bool {
	if !now.Before(s.IntervalEnd) {
		s.IntervalEnd = now.Add(p.Interval)
		s.Overloaded = s.MinDelay > p.Target
		s.Reset = true
	}
	return s.Overloaded
}

// observe records that a request leaves the queue at now after waiting delay,
// and says whether to fail it (drop) instead of running it.
func (s *codelState) observe(p CodelParams, now time.Time, delay time.Duration) (drop bool) {
	s.tick(p, now)
	if s.Reset {
		s.Reset = false
		s.MinDelay = delay
		return false // more than one request must come in before CoDel drops
	}
	if delay < s.MinDelay {
		s.MinDelay = delay
	}
	return s.Overloaded && delay > p.slough()
}

// load is folly's load figure: min(100, 100 × MinDelay / Slough), in percent.
func (s *codelState) load(p CodelParams) int {
	if p.slough() <= 0 {
		return 0
	}
	l := int(100 * s.MinDelay / p.slough())
	return min(l, 100)
}

// backpressureOn is the back-pressure decision for an arrival that would have
// to queue: it starts when the queue is overloaded and holds until fewer than
// watermark requests are queued. active is the previous decision.
func backpressureOn(active, overloaded bool, queued, watermark int) bool {
	if queued < watermark {
		return false
	}
	return active || overloaded
}
