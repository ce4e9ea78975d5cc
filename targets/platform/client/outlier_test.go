package client

import (
	"slices"
	"testing"
	"time"
)

var ot0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func testOutlierConfig() OutlierConfig {
	c := defaultOutlierConfig()
	c.Interval = time.Second
	c.BaseEjection = 5 * time.Second
	c.MaxEjection = 12 * time.Second
	c.MaxEjectionPercent = 100
	return c
}

// feed records succ successes and fail failures on host i at now.
func feed(o *outliers, i, succ, fail int, now time.Time) []ejection {
	var out []ejection
	for range succ {
		out = append(out, o.record(i, result{oc: outcomeSuccess}, now)...)
	}
	for range fail {
		out = append(out, o.record(i, result{oc: outcomeFailure}, now)...)
	}
	return out
}

func TestOutlierConsecutive5xx(t *testing.T) {
	tests := []struct {
		name    string
		pattern string // s = success, f = failure, n = neutral
		ejected bool
	}{
		{"four failures", "ffff", false},
		{"five failures", "fffff", true},
		{"a success resets the count", "ffffsffff", false},
		{"neutral outcomes do not reset it", "ffnnfff", true},
		{"back to back after a success", "sfffff", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOutliers(testOutlierConfig(), 3, ot0)
			var got []ejection
			for _, ch := range tt.pattern {
				oc := map[rune]outcome{'s': outcomeSuccess, 'f': outcomeFailure, 'n': outcomeNeutral}[ch]
				got = append(got, o.record(1, result{oc: oc}, ot0)...)
			}
			if o.ejected(1) != tt.ejected {
				t.Fatalf("ejected = %v, want %v", o.ejected(1), tt.ejected)
			}
			if tt.ejected && (len(got) != 1 || got[0] != (ejection{1, detectConsecutive5xx})) {
				t.Errorf("events = %v, want one consecutive_5xx ejection of host 1", got)
			}
		})
	}
}

func TestOutlierSuccessRate(t *testing.T) {
	tests := []struct {
		name    string
		rates   [][2]int // succ, fail per host
		minHost int
		want    []int // hosts ejected by the sweep
	}{
		{"one bad host among five", [][2]int{{100, 0}, {100, 0}, {100, 0}, {100, 0}, {50, 50}}, 5, []int{4}},
		{"all alike", [][2]int{{90, 10}, {90, 10}, {90, 10}, {90, 10}, {90, 10}}, 5, nil},
		{"too few hosts with volume", [][2]int{{100, 0}, {100, 0}, {100, 0}, {10, 0}, {50, 50}}, 5, nil},
		{"bad host below volume", [][2]int{{100, 0}, {100, 0}, {100, 0}, {100, 0}, {0, 19}}, 4, nil},
		// with three hosts one outlier is at most sqrt(2)≈1.41 stdev below the mean
		{"three hosts cannot trip 1.9 stdev", [][2]int{{100, 0}, {100, 0}, {0, 100}}, 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testOutlierConfig()
			cfg.Consecutive5xx, cfg.FailurePercent = 0, 0
			cfg.SuccessRateMinHosts, cfg.SuccessRateVolume = tt.minHost, 20
			o := newOutliers(cfg, len(tt.rates), ot0)
			for i, r := range tt.rates {
				feed(o, i, r[0], r[1], ot0)
			}
			checkEjections(t, o.sweep(ot0.Add(time.Second)), detectSuccessRate, tt.want)
		})
	}
}

func TestOutlierFailurePercentage(t *testing.T) {
	tests := []struct {
		name  string
		rates [][2]int
		want  []int
	}{
		{"one host at 60% failures", [][2]int{{20, 0}, {20, 0}, {8, 12}}, []int{2}},
		{"exactly the threshold", [][2]int{{20, 0}, {20, 0}, {10, 10}}, []int{2}},
		{"below the threshold", [][2]int{{20, 0}, {20, 0}, {11, 9}}, nil},
		{"below the volume", [][2]int{{20, 0}, {20, 0}, {0, 19}}, nil},
		{"too few hosts with volume", [][2]int{{20, 0}, {5, 0}, {0, 20}}, nil},
		{"two bad hosts", [][2]int{{20, 0}, {0, 20}, {0, 20}}, []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testOutlierConfig()
			cfg.Consecutive5xx, cfg.SuccessRateStdevFactor = 0, 0
			cfg.FailurePercent, cfg.FailurePercentMinHosts, cfg.FailurePercentVolume = 50, 3, 20
			o := newOutliers(cfg, len(tt.rates), ot0)
			for i, r := range tt.rates {
				feed(o, i, r[0], r[1], ot0)
			}
			checkEjections(t, o.sweep(ot0.Add(time.Second)), detectFailurePercentage, tt.want)
		})
	}
}

// feedLatency records n answers of latency rtt on host i at now.
func feedLatency(o *outliers, i, n int, rtt time.Duration, now time.Time) {
	for range n {
		o.record(i, result{oc: outcomeSuccess, rtt: rtt, timed: true}, now)
	}
}

// TestOutlierLatency: hosts' mean latencies this interval (ms) and latency
// sample counts; the sweep ejects those over factor × the others' median
// and over the floor.
func TestOutlierLatency(t *testing.T) {
	tests := []struct {
		name    string
		ms      []float64
		n       []int
		percent int
		want    []int
	}{
		{"one slow host among three", []float64{2, 3, 122}, []int{40, 40, 40}, 50, []int{2}},
		{"one slow host of two", []float64{2, 122}, []int{40, 40}, 50, []int{1}},
		{"alike", []float64{2, 3, 4}, []int{40, 40, 40}, 50, nil},
		{"three times but under the floor", []float64{1, 1, 9}, []int{40, 40, 40}, 50, nil},
		{"at factor × median is not over it", []float64{10, 10, 30}, []int{40, 40, 40}, 50, nil},
		{"slow host below the volume", []float64{2, 3, 122}, []int{40, 40, 19}, 50, nil},
		{"nobody else judged", []float64{2, 3, 122}, []int{10, 10, 40}, 50, nil},
		{"two slow of four: the max percent allows both", []float64{2, 2, 100, 100}, []int{40, 40, 40, 40}, 50, []int{2, 3}},
		{"two slow of three: the median is slow itself", []float64{2, 100, 100}, []int{40, 40, 40}, 100, nil},
		{"two slow of five, 20% cap: one", []float64{2, 2, 2, 100, 100}, []int{40, 40, 40, 40, 40}, 20, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testOutlierConfig()
			cfg.Consecutive5xx, cfg.SuccessRateStdevFactor, cfg.FailurePercent = 0, 0, 0
			cfg.LatencyFactor, cfg.LatencyVolume, cfg.LatencyFloor = 3, 20, 10*time.Millisecond
			cfg.MaxEjectionPercent = tt.percent
			o := newOutliers(cfg, len(tt.ms), ot0)
			for i, ms := range tt.ms {
				feedLatency(o, i, tt.n[i], time.Duration(ms*float64(time.Millisecond)), ot0)
			}
			got := o.sweep(ot0.Add(time.Second))
			checkEjections(t, got, detectLatency, tt.want)
			for _, e := range got {
				if e.Detector.signal() != signalLatency {
					t.Errorf("ejection %v: signal %q, want latency", e, e.Detector.signal())
				}
			}
		})
	}
}

// TestOutlierLatencyReadmitsAndJudgesAgain: a host slow for good is ejected
// for the base ejection time, returned to service, judged on its next
// interval with volume and ejected again; once fast it stays in.
func TestOutlierLatencyReadmitsAndJudgesAgain(t *testing.T) {
	cfg := testOutlierConfig() // interval 1s, base 5s
	cfg.Consecutive5xx = 0
	o := newOutliers(cfg, 3, ot0)
	second := func(s int, slow time.Duration) []ejection { // one interval of traffic, then its sweep
		now := ot0.Add(time.Duration(s) * time.Second)
		for i := range 3 {
			rtt := 2 * time.Millisecond
			if i == 2 {
				rtt = slow
			}
			if !o.ejected(i) {
				feedLatency(o, i, 40, rtt, now)
			}
		}
		return o.sweep(now.Add(time.Second))
	}
	steps := []struct {
		at      int // traffic in [at, at+1s), sweep at at+1s
		slow    time.Duration
		want    []ejection
		ejected bool
	}{
		{0, 120 * time.Millisecond, []ejection{{2, detectLatency}}, true}, // out from 1s for 5s
		{4, 120 * time.Millisecond, nil, true},
		{5, 120 * time.Millisecond, []ejection{{Host: 2}}, false},         // back at 6s, no volume yet
		{6, 120 * time.Millisecond, []ejection{{2, detectLatency}}, true}, // judged again: out 2 × 5s
		{16, 2 * time.Millisecond, []ejection{{Host: 2}}, false},          // back at 17s
		{17, 2 * time.Millisecond, nil, false},                            // fast now: stays in
	}
	for _, st := range steps {
		if got := second(st.at, st.slow); !slices.Equal(got, st.want) || o.ejected(2) != st.ejected {
			t.Fatalf("interval at %ds: events %v, ejected %v; want %v, %v", st.at, got, o.ejected(2), st.want, st.ejected)
		}
	}
}

func checkEjections(t *testing.T, got []ejection, d detector, want []int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("ejections = %v, want hosts %v by %s", got, want, d)
	}
	for k, e := range got {
		if e.Host != want[k] || e.Detector != d {
			t.Errorf("ejection %d = %v, want host %d by %s", k, e, want[k], d)
		}
	}
}

func TestOutlierEjectionTimeGrowsAndCaps(t *testing.T) {
	o := newOutliers(testOutlierConfig(), 2, ot0) // base 5s, max 12s
	for k, want := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second, 3: 12 * time.Second, 50: 12 * time.Second} {
		if got := o.ejectionTime(k); got != want {
			t.Errorf("ejectionTime(%d) = %s, want %s", k, got, want)
		}
	}
}

func TestOutlierUnejectionAndBackoff(t *testing.T) {
	cfg := testOutlierConfig()
	o := newOutliers(cfg, 3, ot0)
	now := ot0
	feed(o, 0, 0, 5, now)
	if !o.ejected(0) {
		t.Fatal("host 0 not ejected after 5 failures")
	}
	// ejected at ot0 for 5s: a sweep at 4s keeps it out, one at 5s returns it
	if ev := o.sweep(ot0.Add(4 * time.Second)); len(ev) != 0 || !o.ejected(0) {
		t.Fatalf("sweep at 4s: events %v, ejected %v; want still ejected", ev, o.ejected(0))
	}
	if ev := o.sweep(ot0.Add(5 * time.Second)); len(ev) != 1 || ev[0] != (ejection{Host: 0}) || o.ejected(0) {
		t.Fatalf("sweep at 5s: events %v, ejected %v; want returned to service", ev, o.ejected(0))
	}
	// second ejection at 6s lasts 10s: still out at 15s, back at 16s
	now = ot0.Add(6 * time.Second)
	feed(o, 0, 0, 5, now)
	if !o.ejected(0) || o.hosts[0].multiplier != 2 {
		t.Fatalf("second ejection: ejected %v, multiplier %d; want true, 2", o.ejected(0), o.hosts[0].multiplier)
	}
	o.sweep(ot0.Add(15 * time.Second))
	if !o.ejected(0) {
		t.Fatal("second ejection ended before base × 2")
	}
	o.sweep(ot0.Add(16 * time.Second))
	if o.ejected(0) {
		t.Fatal("second ejection outlived base × 2")
	}
	// healthy for a base ejection time: the multiplier decays by one per 5s
	o.sweep(ot0.Add(20 * time.Second))
	if o.hosts[0].multiplier != 2 {
		t.Fatalf("multiplier decayed after 4s of health: %d", o.hosts[0].multiplier)
	}
	o.sweep(ot0.Add(21 * time.Second))
	o.sweep(ot0.Add(26 * time.Second))
	if o.hosts[0].multiplier != 0 {
		t.Fatalf("multiplier after 10s of health = %d, want 0", o.hosts[0].multiplier)
	}
}

func TestOutlierMaxEjectionPercent(t *testing.T) {
	tests := []struct {
		name    string
		hosts   int
		percent int
		want    int // hosts ejected when all fail
	}{
		{"10% of 3 still ejects one", 3, 10, 1},
		{"50% of 3", 3, 50, 1},
		{"50% of 4", 4, 50, 2},
		{"0% ejects one (Envoy)", 4, 0, 1},
		{"100% of 3", 3, 100, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testOutlierConfig()
			cfg.MaxEjectionPercent = tt.percent
			o := newOutliers(cfg, tt.hosts, ot0)
			for i := range tt.hosts {
				feed(o, i, 0, 5, ot0)
			}
			if o.nEjected != tt.want {
				t.Errorf("ejected %d hosts, want %d", o.nEjected, tt.want)
			}
		})
	}
}

func TestOutlierConfigValidate(t *testing.T) {
	bad := []func(*OutlierConfig){
		func(c *OutlierConfig) { c.Interval = 0 },
		func(c *OutlierConfig) { c.MaxEjection = c.BaseEjection - 1 },
		func(c *OutlierConfig) { c.MaxEjectionPercent = 101 },
		func(c *OutlierConfig) { c.FailurePercent = -1 },
		func(c *OutlierConfig) { c.SuccessRateVolume = 0 },
		func(c *OutlierConfig) { c.LatencyFactor = 0.5 },
		func(c *OutlierConfig) { c.LatencyVolume = 0 },
		func(c *OutlierConfig) { c.LatencyFloor = -time.Millisecond },
	}
	if err := defaultOutlierConfig().validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for i, f := range bad {
		c := defaultOutlierConfig()
		f(&c)
		if err := c.validate(); err == nil {
			t.Errorf("case %d: no error for %+v", i, c)
		}
	}
}
