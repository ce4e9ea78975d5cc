package arrival

import (
	"strings"
	"testing"
	"time"
)

// stagesTotal sums stage durations.
func stagesTotal(t *testing.T, st []Stage) time.Duration {
	t.Helper()
	var d time.Duration
	for _, s := range st {
		x, err := time.ParseDuration(s.Duration)
		if err != nil {
			t.Fatalf("stage duration %q: %v", s.Duration, err)
		}
		d += x
	}
	return d
}

// rateAt returns the ramping-arrival-rate target at time at (linear within stages).
func rateAt(t *testing.T, start int, st []Stage, at time.Duration) float64 {
	prev := float64(start)
	var t0 time.Duration
	for _, s := range st {
		d, _ := time.ParseDuration(s.Duration)
		if at < t0+d {
			f := float64(at-t0) / float64(d)
			return prev + f*(float64(s.Target)-prev)
		}
		t0 += d
		prev = float64(s.Target)
	}
	return prev
}

func TestBursts(t *testing.T) {
	sc, err := Bursts(BurstShape{Base: 10, Peak: 100, Every: 20 * time.Second, Length: 5 * time.Second, Duration: 70 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Executor != "ramping-arrival-rate" || sc.StartRate != 10 || sc.TimeUnit != "1s" {
		t.Errorf("scenario %+v", sc)
	}
	if d := stagesTotal(t, sc.Stages); d != 70*time.Second {
		t.Errorf("stages last %s, want 70s", d)
	}
	// Three bursts, each at peak for its last 4 s (1 s rise): 15-19 s, 35-39 s, 55-59 s.
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{5 * time.Second, 10}, {16 * time.Second, 100}, {18500 * time.Millisecond, 100}, {19500 * time.Millisecond, 55}, {25 * time.Second, 10},
		{36 * time.Second, 100}, {57 * time.Second, 100}, {65 * time.Second, 10}} {
		if got := rateAt(t, sc.StartRate, sc.Stages, c.at); got != c.want {
			t.Errorf("rate at %s = %v, want %v", c.at, got, c.want)
		}
	}
	if sc.PreAllocatedVUs != 10 || sc.MaxVUs != 40 {
		t.Errorf("VUs %d/%d, want 10/40", sc.PreAllocatedVUs, sc.MaxVUs)
	}
}

func TestStepOverloadAndFlood(t *testing.T) {
	sc, err := StepOverload(StepShape{Capacity: 200, Factor: 3, Baseline: 0.5, Before: 30 * time.Second, Hold: 20 * time.Second, After: 10 * time.Second,
		VUs: VUs{PreAllocated: 50, Max: 300}, StartTime: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sc.StartRate != 100 || sc.StartTime != "5s" || sc.PreAllocatedVUs != 50 || sc.MaxVUs != 300 {
		t.Errorf("scenario %+v", sc)
	}
	if got := rateAt(t, sc.StartRate, sc.Stages, 40*time.Second); got != 600 {
		t.Errorf("rate during the step %v, want 600", got)
	}
	if got := rateAt(t, sc.StartRate, sc.Stages, 59*time.Second); got != 100 {
		t.Errorf("rate after the step %v, want 100", got)
	}
	f, err := Flood(FloodShape{Rate: 500, Duration: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if f.Executor != "constant-arrival-rate" || f.Rate != 500 || f.Duration != "1500ms" || f.StartTime != "" {
		t.Errorf("flood %+v", f)
	}
}

func TestShapeErrors(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		err  error
		want string
	}{
		{func() error {
			_, e := Bursts(BurstShape{Base: 5, Peak: 1, Every: 10 * s, Length: 2 * s, Duration: 20 * s})
			return e
		}(), "base <= peak"},
		{func() error {
			_, e := Bursts(BurstShape{Peak: 1, Every: 2 * s, Length: 2 * s, Duration: 20 * s})
			return e
		}(), "every 2s"},
		{func() error {
			_, e := Bursts(BurstShape{Peak: 1, Every: 10 * s, Length: 2 * s, Duration: 5 * s})
			return e
		}(), "shorter than one period"},
		{func() error { _, e := StepOverload(StepShape{Capacity: 0, Factor: 2, Hold: s}); return e }(), "capacity 0"},
		{func() error { _, e := StepOverload(StepShape{Capacity: 10, Factor: 2, Baseline: 3, Hold: s}); return e }(), "baseline 3"},
		{func() error { _, e := StepOverload(StepShape{Capacity: 10, Factor: 2}); return e }(), "hold 0s"},
		{func() error { _, e := Flood(FloodShape{Rate: 10}); return e }(), "flood"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one with %q", c.err, c.want)
		}
	}
}
