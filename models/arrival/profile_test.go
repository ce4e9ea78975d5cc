package arrival

import (
	"math"
	"testing"
	"time"
)

func mustSchedule(t *testing.T, p Profile) *Schedule {
	t.Helper()
	s, err := NewSchedule(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// instants lists every arrival of s.
func instants(s *Schedule) []time.Duration {
	var out []time.Duration
	for i := uint64(0); ; i++ {
		at, ok := s.At(i)
		if !ok {
			return out
		}
		out = append(out, at)
	}
}

func TestScheduleConstant(t *testing.T) {
	tests := []struct {
		name  string
		p     Profile
		total uint64
		first time.Duration
		step  time.Duration
	}{
		{"10/s for 10s", Constant(10, 0, 10*time.Second), 100, 0, 100 * time.Millisecond},
		{"a window from 5s", Constant(4, 5*time.Second, 2*time.Second), 8, 5 * time.Second, 250 * time.Millisecond},
		{"a fraction of a request", Constant(0.5, 0, 3*time.Second), 2, 0, 2 * time.Second},
		{"rate zero", Constant(0, 0, time.Minute), 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSchedule(t, tt.p)
			got := instants(s)
			if uint64(len(got)) != tt.total || s.Total() != tt.total {
				t.Fatalf("%d arrivals (Total %d), want %d", len(got), s.Total(), tt.total)
			}
			for i, at := range got {
				if want := tt.first + time.Duration(i)*tt.step; absDur(at-want) > time.Microsecond {
					t.Fatalf("arrival %d at %s, want %s", i, at, want)
				}
			}
		})
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// TestScheduleFollowsRate checks, for every shape, that each 100 ms slice
// holds the arrivals the rate integrates to there, within one.
func TestScheduleFollowsRate(t *testing.T) {
	bursts, _ := BurstShape{Base: 10, Peak: 300, Every: 4 * time.Second, Length: 2 * time.Second, Rise: 500 * time.Millisecond, Duration: 9 * time.Second, StartTime: time.Second}.Profile()
	step, _ := StepShape{Capacity: 200, Factor: 3, Baseline: 0.5, Before: 2 * time.Second, Hold: 3 * time.Second, After: 2 * time.Second}.Profile()
	ramp := Profile{StartRate: 0, Segments: []Segment{{100, 2 * time.Second}, {100, time.Second}, {0, 2 * time.Second}, {0, time.Second}, {50, time.Second}}}
	for name, p := range map[string]Profile{"bursts": bursts, "step": step, "ramp": ramp} {
		t.Run(name, func(t *testing.T) {
			s := mustSchedule(t, p)
			got := instants(s)
			const slice = 100 * time.Millisecond
			counts := map[int]int{}
			for i, at := range got {
				if i > 0 && at < got[i-1] {
					t.Fatalf("arrival %d at %s before arrival %d at %s", i, at, i-1, got[i-1])
				}
				if p.RateAt(at) == 0 && p.RateAt(at+time.Millisecond) == 0 {
					t.Fatalf("arrival %d at %s where the rate is 0", i, at)
				}
				counts[int(at/slice)]++
			}
			var want, have float64
			for k := 0; time.Duration(k)*slice < p.End(); k++ {
				want += integrate(p, time.Duration(k)*slice, time.Duration(k+1)*slice)
				have += float64(counts[k])
				if math.Abs(have-want) > 1 {
					t.Fatalf("by %s: %v arrivals, the rate integrates to %.2f", time.Duration(k+1)*slice, have, want)
				}
			}
		})
	}
}

// integrate sums p's rate over [a, b) numerically.
func integrate(p Profile, a, b time.Duration) float64 {
	const n = 200
	var sum float64
	h := (b - a) / n
	for i := range n {
		sum += p.RateAt(a+h*time.Duration(i)+h/2) * h.Seconds()
	}
	return sum
}

func TestScheduleRampFromZero(t *testing.T) {
	// 0 → 100/s over 10 s: arrival i is due at sqrt(i/5) s.
	s := mustSchedule(t, Profile{Segments: []Segment{{100, 10 * time.Second}}})
	if s.Total() != 500 {
		t.Fatalf("total %d, want 500", s.Total())
	}
	for _, i := range []uint64{0, 1, 20, 499} {
		at, _ := s.At(i)
		want := time.Duration(math.Sqrt(float64(i)/5) * float64(time.Second))
		if absDur(at-want) > time.Microsecond {
			t.Errorf("arrival %d at %s, want %s", i, at, want)
		}
	}
}

// TestScheduleShards checks that shards taking every n-th arrival together
// take exactly the arrivals of the whole schedule.
func TestScheduleShards(t *testing.T) {
	p, _ := BurstShape{Base: 5, Peak: 80, Every: 3 * time.Second, Length: 1 * time.Second, Duration: 7 * time.Second}.Profile()
	s := mustSchedule(t, p)
	all := instants(s)
	for _, n := range []uint64{1, 2, 3, 7} {
		seen := make([]bool, len(all))
		for shard := range n {
			for c := uint64(0); ; c++ {
				g := c*n + shard
				at, ok := s.At(g)
				if !ok {
					break
				}
				if at != all[g] || seen[g] {
					t.Fatalf("%d shards: arrival %d at %s (seen %v), want %s once", n, g, at, seen[g], all[g])
				}
				seen[g] = true
			}
		}
		for g, ok := range seen {
			if !ok {
				t.Fatalf("%d shards: arrival %d taken by none", n, g)
			}
		}
	}
}

func TestProfileMatchesK6Scenario(t *testing.T) {
	b := BurstShape{Base: 10, Peak: 100, Every: 20 * time.Second, Length: 5 * time.Second, Duration: 70 * time.Second}
	p, err := b.Profile()
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := Bursts(b)
	for at := time.Duration(0); at < 70*time.Second; at += 250 * time.Millisecond {
		if got, want := p.RateAt(at), rateAt(t, sc.StartRate, sc.Stages, at); math.Abs(got-want) > 1e-9 {
			t.Fatalf("rate at %s: profile %v, k6 stages %v", at, got, want)
		}
	}
	if p.Peak() != 100 || p.End() != 70*time.Second {
		t.Errorf("peak %v end %s, want 100 and 70s", p.Peak(), p.End())
	}
}

func TestClip(t *testing.T) {
	p := Profile{StartRate: 0, Segments: []Segment{{100, 10 * time.Second}, {100, 10 * time.Second}}}
	c := p.Clip(5 * time.Second)
	if c.End() != 5*time.Second || c.RateAt(4*time.Second) != 40 || c.Peak() != 50 {
		t.Errorf("clipped at 5s: end %s rate(4s) %v peak %v", c.End(), c.RateAt(4*time.Second), c.Peak())
	}
	if c := Constant(10, 30*time.Second, time.Second).Clip(20 * time.Second); len(c.Segments) != 0 {
		t.Errorf("a window after the end: %+v", c)
	}
	if c := p.Clip(time.Hour); c.End() != p.End() {
		t.Errorf("clip past the end changed the profile: %+v", c)
	}
}

func TestProfileErrors(t *testing.T) {
	for _, p := range []Profile{
		{Start: -time.Second},
		{StartRate: math.NaN()},
		{Segments: []Segment{{-1, time.Second}}},
		{Segments: []Segment{{1, -time.Second}}},
		{Segments: []Segment{{math.Inf(1), time.Second}}},
	} {
		if _, err := NewSchedule(p); err == nil {
			t.Errorf("NewSchedule(%+v): want an error", p)
		}
	}
}

func BenchmarkScheduleAt(b *testing.B) {
	p, _ := BurstShape{Base: 100, Peak: 30000, Every: 20 * time.Second, Length: 5 * time.Second, Duration: time.Hour}.Profile()
	s, _ := NewSchedule(p)
	var i uint64
	for b.Loop() {
		s.At(i % s.Total())
		i += 7919
	}
}

func TestPeakOfSum(t *testing.T) {
	ramp := Profile{StartRate: 0, Segments: []Segment{{1000, 10 * time.Second}, {0, 10 * time.Second}}}
	for _, c := range []struct {
		name string
		ps   []Profile
		want float64
	}{
		{"none", nil, 0},
		{"one constant", []Profile{Constant(4000, 0, 5*time.Second)}, 4000},
		{"one after another", []Profile{Constant(4000, 0, time.Second), Constant(4000, time.Second, 4*time.Second)}, 4000},
		{"overlapping", []Profile{Constant(4000, 0, 2*time.Second), Constant(3000, time.Second, 4*time.Second)}, 7000},
		{"a burst across a ramp's peak", []Profile{ramp, Constant(500, 9*time.Second, 2*time.Second)}, 1500},
		{"a burst before a ramp's peak", []Profile{ramp, Constant(500, 0, time.Second)}, 1000},
	} {
		if got := PeakOfSum(c.ps); math.Abs(got-c.want) > 0.01 {
			t.Errorf("%s: peak %v, want %v", c.name, got, c.want)
		}
	}
}
