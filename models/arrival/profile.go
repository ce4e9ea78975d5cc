// Package arrival is the arrival shapes of open-model load: constant rates,
// ramps (stages), periodic bursts, a step overload and flood windows. A
// shape is a Profile (arrival rate over time) that a Go scheduler turns into
// arrival instants (Schedule), or a k6 arrival-rate scenario object.
package arrival

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Segment is one piece of a profile: the rate moves linearly from where the
// previous piece ended to Rate (requests per second) over Duration.
type Segment struct {
	Rate     float64
	Duration time.Duration
}

// Profile is an arrival rate over time: nothing before Start (an offset
// from the start of load), then StartRate moving through Segments, and
// nothing after the last segment.
type Profile struct {
	Start     time.Duration
	StartRate float64
	Segments  []Segment
}

// Constant is rate requests per second from start for duration.
func Constant(rate float64, start, duration time.Duration) Profile {
	return Profile{Start: start, StartRate: rate, Segments: []Segment{{rate, duration}}}
}

// Validate reports the first rate or duration that is negative or not finite.
func (p Profile) Validate() error {
	if p.Start < 0 {
		return fmt.Errorf("arrival: start %s must not be negative", p.Start)
	}
	if !(p.StartRate >= 0) || math.IsInf(p.StartRate, 0) {
		return fmt.Errorf("arrival: start rate %v: want a finite rate ≥ 0", p.StartRate)
	}
	for i, s := range p.Segments {
		if !(s.Rate >= 0) || math.IsInf(s.Rate, 0) || s.Duration < 0 {
			return fmt.Errorf("arrival: segment %d: rate %v for %s: want a finite rate ≥ 0 for a duration ≥ 0", i+1, s.Rate, s.Duration)
		}
	}
	return nil
}

// End is when the profile's last segment ends.
func (p Profile) End() time.Duration {
	end := p.Start
	for _, s := range p.Segments {
		end += s.Duration
	}
	return end
}

// Peak is the highest rate the profile reaches.
func (p Profile) Peak() float64 {
	peak := p.StartRate
	for _, s := range p.Segments {
		peak = max(peak, s.Rate)
	}
	return peak
}

// PeakOfSum is the highest total rate of profiles that run together: the
// sum is piecewise linear, so its peak is at one of their breakpoints (the
// rate just before one, or at it).
func PeakOfSum(ps []Profile) float64 {
	var at []time.Duration
	for _, p := range ps {
		t := p.Start
		at = append(at, t)
		for _, s := range p.Segments {
			t += s.Duration
			at = append(at, t)
		}
	}
	peak := 0.0
	for _, t := range at {
		for _, u := range []time.Duration{t - 1, t} {
			sum := 0.0
			for _, p := range ps {
				sum += p.RateAt(u)
			}
			peak = max(peak, sum)
		}
	}
	return peak
}

// RateAt is the arrival rate at t (an offset from the start of load).
func (p Profile) RateAt(t time.Duration) float64 {
	if t < p.Start {
		return 0
	}
	at, prev := p.Start, p.StartRate
	for _, s := range p.Segments {
		if t < at+s.Duration {
			return prev + (s.Rate-prev)*float64(t-at)/float64(s.Duration)
		}
		at, prev = at+s.Duration, s.Rate
	}
	return 0
}

// Clip returns the profile cut off at end (a load's duration).
func (p Profile) Clip(end time.Duration) Profile {
	out := Profile{Start: p.Start, StartRate: p.StartRate}
	at, prev := p.Start, p.StartRate
	for _, s := range p.Segments {
		if at >= end {
			break
		}
		if at+s.Duration > end {
			f := float64(end-at) / float64(s.Duration)
			out.Segments = append(out.Segments, Segment{prev + (s.Rate-prev)*f, end - at})
			break
		}
		out.Segments = append(out.Segments, s)
		at, prev = at+s.Duration, s.Rate
	}
	return out
}

// Schedule is a profile's arrival instants: arrival i is due when the
// expected count of arrivals since the start first passes i, so a constant
// rate r has its arrivals at 0, 1/r, 2/r, … A Schedule is immutable and
// safe for concurrent use.
type Schedule struct {
	p Profile
	// from[k] is segment k's start (offset from load start), rate0[k] its
	// starting rate, cum[k] the arrivals expected before it; cum[len] is
	// the whole count.
	from  []time.Duration
	rate0 []float64
	cum   []float64
	total uint64
}

// NewSchedule returns the schedule of p.
func NewSchedule(p Profile) (*Schedule, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := &Schedule{p: p, cum: make([]float64, len(p.Segments)+1)}
	at, prev := p.Start, p.StartRate
	for k, seg := range p.Segments {
		s.from = append(s.from, at)
		s.rate0 = append(s.rate0, prev)
		s.cum[k+1] = s.cum[k] + (prev+seg.Rate)/2*seg.Duration.Seconds()
		at, prev = at+seg.Duration, seg.Rate
	}
	n := s.cum[len(p.Segments)]
	// A count within rounding of a whole number is that number: rate r for
	// d seconds is r·d arrivals, not one more at the very end.
	if r := math.Round(n); math.Abs(n-r) < 1e-9*max(1, n) {
		n = r
	}
	s.total = uint64(math.Ceil(n))
	return s, nil
}

// Profile returns the schedule's profile.
func (s *Schedule) Profile() Profile { return s.p }

// Total is how many arrivals the schedule has.
func (s *Schedule) Total() uint64 { return s.total }

// At returns when arrival i is due (an offset from the start of load);
// ok is false past the last arrival.
func (s *Schedule) At(i uint64) (at time.Duration, ok bool) {
	if i >= s.total {
		return 0, false
	}
	x := float64(i)
	// The first segment whose end count passes i holds the arrival.
	k := sort.Search(len(s.p.Segments), func(k int) bool { return s.cum[k+1] > x })
	if k == len(s.p.Segments) { // i rounds to the very end
		k = len(s.p.Segments) - 1
	}
	seg := s.p.Segments[k]
	d := seg.Duration.Seconds()
	r0 := s.rate0[k]
	x -= s.cum[k]
	var tau float64
	switch a := (seg.Rate - r0) / (2 * d); {
	case x <= 0 || d == 0:
	case math.Abs(a) < 1e-12:
		tau = x / r0
	default:
		// r0·τ + a·τ² = x, in the form that is stable for either sign of a.
		tau = 2 * x / (r0 + math.Sqrt(max(r0*r0+4*a*x, 0)))
	}
	tau = min(max(tau, 0), d)
	return s.from[k] + time.Duration(tau*float64(time.Second)), true
}
