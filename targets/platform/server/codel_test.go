package server

import (
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func at(n float64) time.Time { return t0.Add(ms(n)) }

// TestCodelObserve walks CodelState through exact (now, delay) steps.
func TestCodelObserve(t *testing.T) {
	p := defaultCodel
	type step struct {
		now, delay     float64 // ms
		wantDrop       bool
		wantOverloaded bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"light load never drops", []step{
			{0, 0, false, false}, {10, 3, false, false}, {50, 4, false, false},
			{120, 4, false, false}, {230, 1, false, false},
		}},
		{"min above target overloads next interval", []step{
			{0, 20, false, false},                         // first of interval: never dropped
			{10, 30, false, false}, {50, 8, false, false}, // min 8 > 5
			{100, 50, false, true}, // new interval: overloaded; first of interval kept
			{110, 50, true, true},  // 50 > 2×5: dropped
			{120, 9, false, true},  // 9 ≤ 10: kept
			{130, 10, false, true}, // exactly 2×target: kept
			{140, 11, true, true},
		}},
		{"one short delay in an interval clears overload", []step{
			{0, 20, false, false}, {50, 30, false, false},
			{100, 30, false, true}, {110, 2, false, true}, {150, 40, true, true},
			{200, 40, false, false}, // min was 2: healthy again
			{210, 40, false, false},
		}},
		{"min exactly target is healthy", []step{
			{0, 5, false, false}, {50, 7, false, false},
			{100, 50, false, false}, {150, 50, false, false},
		}},
		{"an idle interval keeps the last verdict", []step{
			{0, 30, false, false}, {10, 30, false, false},
			{100, 30, false, true},
			{450, 30, false, true}, // min still 30: overloaded, first kept
			{460, 30, true, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s codelState
			for i, st := range tt.steps {
				drop := s.observe(p, at(st.now), ms(st.delay))
				if drop != st.wantDrop || s.Overloaded != st.wantOverloaded {
					t.Fatalf("step %d (now %vms delay %vms): drop %v overloaded %v; want %v %v",
						i, st.now, st.delay, drop, s.Overloaded, st.wantDrop, st.wantOverloaded)
				}
			}
		})
	}
}

func TestCodelLoad(t *testing.T) {
	p := defaultCodel
	for _, tt := range []struct {
		min  time.Duration
		want int
	}{{0, 0}, {ms(5), 50}, {ms(10), 100}, {ms(50), 100}} {
		s := codelState{MinDelay: tt.min}
		if got := s.load(p); got != tt.want {
			t.Errorf("Load(min %s) = %d, want %d", tt.min, got, tt.want)
		}
	}
}

func TestBackpressureOn(t *testing.T) {
	tests := []struct {
		name               string
		active, overloaded bool
		queued, watermark  int
		want               bool
	}{
		{"healthy", false, false, 100, 10, false},
		{"overloaded above watermark starts", false, true, 10, 10, true},
		{"overloaded below watermark does not", false, true, 9, 10, false},
		{"holds after overload ends while above watermark", true, false, 50, 10, true},
		{"clears below watermark", true, true, 9, 10, false},
		{"watermark 0 always above", false, true, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := backpressureOn(tt.active, tt.overloaded, tt.queued, tt.watermark); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
