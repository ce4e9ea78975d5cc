package kvdispatcher

import (
	"testing"
)

func TestParseTier(t *testing.T) {
	tests := []struct {
		in      string
		want    criticality
		wantErr bool
	}{
		{"", tierDefault, false},
		{"default", tierDefault, false},
		{"critical", tierCritical, false},
		{"sheddable", tierSheddable, false},
		{"CRITICAL", 0, true},
		{"gold", 0, true},
	}
	for _, tt := range tests {
		got, err := parseTier(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseTier(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// As the ratio falls, the sheddable tier pays first, then the default tier
// too; the critical tier never does.
func TestTierSheddingOrder(t *testing.T) {
	p := tierPolicy{Thresholds: [2]float64{0.6, 0.3}, Penalty: 50}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ratio                  float64
		level                  int
		critical, def, shedder float64
	}{
		{2, 0, 1, 1, 1},
		{1, 0, 1, 1, 1},
		{0.6, 0, 1, 1, 1},
		{0.59, 1, 1, 1, 50},
		{0.3, 1, 1, 1, 50},
		{0.29, 2, 1, 50, 50},
		{0, 2, 1, 50, 50},
	}
	for _, tt := range tests {
		lv := p.Level(tt.ratio)
		got := [3]float64{p.Multiplier(lv, tierCritical), p.Multiplier(lv, tierDefault), p.Multiplier(lv, tierSheddable)}
		if lv != tt.level || got != [3]float64{tt.critical, tt.def, tt.shedder} {
			t.Errorf("ratio %v: level %d multipliers %v; want %d %v", tt.ratio, lv, got, tt.level, [3]float64{tt.critical, tt.def, tt.shedder})
		}
	}
	// The level rises at once and falls one step per window.
	steps := []struct {
		ratio float64
		want  int
	}{{1, 0}, {0.1, 2}, {1, 1}, {1, 0}, {0.5, 1}, {0.5, 1}, {0.2, 2}}
	lv := 0
	for i, s := range steps {
		if lv = p.Next(lv, s.ratio); lv != s.want {
			t.Fatalf("step %d (ratio %v): level %d, want %d", i, s.ratio, lv, s.want)
		}
	}
	for _, bad := range []tierPolicy{
		{Thresholds: [2]float64{0.3, 0.6}, Penalty: 2},
		{Thresholds: [2]float64{1.5, 0.3}, Penalty: 2},
		{Thresholds: [2]float64{0.6, 0.3}, Penalty: 0.5},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
}

func window(l *latencyRatio, ms float64, n int) float64 {
	for range n {
		l.Observe(ms)
	}
	r, _, _ := l.Tick()
	return r
}

func TestLatencyRatio(t *testing.T) {
	l := newLatencyRatio(0.95, 0.6, 0, 20, 3)
	if r := l.Ratio(); r != 1 {
		t.Fatalf("initial ratio %v, want 1", r)
	}
	if r := window(l, 2, 5); r != 1 {
		t.Fatalf("too few samples: ratio %v, want 1 (kept)", r)
	}
	for range 3 {
		window(l, 2, 100) // learn the normal latency
	}
	if r := window(l, 2, 100); r < 0.95 || r > 1.05 {
		t.Fatalf("steady latency: ratio %v, want ≈ 1", r)
	}
	// A collapse: short-term p95 ten times the long-term one.
	for i := range 2 {
		if r := window(l, 20, 100); r > 0.15 {
			t.Fatalf("slow window %d: ratio %v, want ≈ 0.1 (long-term must not learn it)", i, r)
		}
	}
	// Sustained for AdaptAfter windows, the slowness becomes the norm.
	window(l, 20, 100)
	for range 30 {
		window(l, 20, 100)
	}
	if r := window(l, 20, 100); r < 0.6 {
		t.Fatalf("after adapting: ratio %v, want ≥ 0.6", r)
	}
	// The floor hides noise on a fast backend.
	f := newLatencyRatio(0.95, 0.6, 2, 20, 3)
	window(f, 0.2, 100)
	window(f, 0.2, 100)
	if r := window(f, 0.8, 100); r < 0.6 {
		t.Fatalf("0.2 ms → 0.8 ms with a 2 ms floor: ratio %v, want ≥ 0.6", r)
	}
}
