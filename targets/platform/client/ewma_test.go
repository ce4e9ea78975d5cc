package client

import (
	"math"
	"testing"
	"time"
)

// sample is one latency observation at t0+at.
type sample struct {
	at, rtt time.Duration
}

// TestLatencyEstimate drives the estimate with samples at given instants
// (the time is passed in: no clock runs) and reads it at a later instant.
func TestLatencyEstimate(t *testing.T) {
	const tau = 10 * time.Second
	ms := float64(time.Millisecond)
	tests := []struct {
		name    string
		samples []sample
		readAt  time.Duration
		want    float64 // in ms
	}{
		{"nothing known", nil, 0, 0},
		{"first sample taken whole", []sample{{0, 5 * time.Millisecond}}, 0, 5},
		{"a peak replaces the average at once",
			[]sample{{0, 2 * time.Millisecond}, {time.Second, 120 * time.Millisecond}}, time.Second, 120},
		{"a lower sample right after counts for almost nothing",
			[]sample{{0, 120 * time.Millisecond}, {0, 2 * time.Millisecond}}, 0, 120},
		{"a lower sample one tau later: decayed, then 1-1/e of the weight",
			[]sample{{0, 120 * time.Millisecond}, {tau, 2 * time.Millisecond}}, tau,
			120*math.Exp(-2) + 2*(1-math.Exp(-1))},
		{"a sample above the decayed estimate replaces it",
			[]sample{{0, 120 * time.Millisecond}, {tau, 50 * time.Millisecond}}, tau, 50},
		{"the estimate decays with time since the last sample",
			[]sample{{0, 120 * time.Millisecond}}, tau, 120 * math.Exp(-1)},
		{"... and after ln(60) tau a 120 ms record reads as 2 ms",
			[]sample{{0, 120 * time.Millisecond}}, time.Duration(math.Log(60) * float64(tau)), 2},
		{"a clock step back does not grow it",
			[]sample{{time.Second, 10 * time.Millisecond}}, 0, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e latencyEstimate
			for _, s := range tt.samples {
				e.observe(s.rtt, ot0.Add(s.at), tau)
			}
			if got := e.value(ot0.Add(tt.readAt), tau) / ms; math.Abs(got-tt.want) > 1e-6 {
				t.Errorf("estimate = %.6f ms, want %.6f ms", got, tt.want)
			}
		})
	}
}

func TestEWMACost(t *testing.T) {
	const tau = 10 * time.Second
	known := latencyEstimate{}
	known.observe(4*time.Millisecond, ot0, tau)
	tests := []struct {
		name     string
		e        latencyEstimate
		inflight int
		want     float64
	}{
		{"unknown and idle: tried first", latencyEstimate{}, 0, 0},
		{"unknown and busy: one at a time", latencyEstimate{}, 2, 2 * unknownCost},
		{"known and idle", known, 0, float64(4 * time.Millisecond)},
		{"known, two in flight: three times", known, 2, float64(12 * time.Millisecond)},
	}
	for _, tt := range tests {
		if got := ewmaCost(tt.e, tt.inflight, ot0, tau); got != tt.want {
			t.Errorf("%s: cost %g, want %g", tt.name, got, tt.want)
		}
	}
}

// TestCheaperEWMAMatchesCost: the one-exponential order of two hosts is the
// order of their costs at any now.
func TestCheaperEWMAMatchesCost(t *testing.T) {
	const tau = 10 * time.Second
	est := func(rtt, at time.Duration) latencyEstimate {
		var e latencyEstimate
		if rtt > 0 {
			e.observe(rtt, ot0.Add(at), tau)
		}
		return e
	}
	hosts := []struct {
		e latencyEstimate
		n int
	}{
		{est(0, 0), 0}, {est(0, 0), 1}, {est(2*time.Millisecond, 0), 0}, {est(2*time.Millisecond, 0), 3},
		{est(120*time.Millisecond, 0), 0}, {est(120*time.Millisecond, 30*time.Second), 0},
		{est(2*time.Millisecond, 50*time.Second), 1}, {est(5*time.Millisecond, 5*time.Second), 0},
	}
	for _, now := range []time.Duration{50 * time.Second, 60 * time.Second, 10 * time.Minute} {
		at := ot0.Add(now)
		for i, y := range hosts {
			for j, x := range hosts {
				want := ewmaCost(y.e, y.n, at, tau) < ewmaCost(x.e, x.n, at, tau)
				if got := cheaperEWMA(y.e, y.n, x.e, x.n, at, tau); got != want {
					t.Errorf("now +%s: host %d cheaper than host %d = %v, costs say %v", now, i, j, got, want)
				}
			}
		}
	}
}
