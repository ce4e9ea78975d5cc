package bootstrap

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestInterval: the interval of the median's change holds zero for two
// samples of one distribution and excludes it for a shifted one.
func TestInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(mean float64) Side {
		var run []float64
		for range 20 {
			run = append(run, mean+rng.NormFloat64())
		}
		return Side{run}
	}
	tests := []struct {
		name       string
		base, head Side
		zeroInside bool
	}{
		{"same", draw(10), draw(10), true},
		{"shifted up", draw(10), draw(14), false},
		{"shifted down", draw(10), draw(6), false},
	}
	for _, tt := range tests {
		lo, hi := Interval(tt.base, tt.head, 2000, 0.99, rand.New(rand.NewPCG(3, 4)))
		if inside := lo <= 0 && 0 <= hi; inside != tt.zeroInside {
			t.Errorf("%s: interval [%.2f, %.2f], zero inside %v, want %v", tt.name, lo, hi, inside, tt.zeroInside)
		}
	}
}

func TestMedian(t *testing.T) {
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("odd: %v", m)
	}
	if m := (Side{{1, 2}, {3, 4}}).Median(); m != 2.5 {
		t.Errorf("side: %v", m)
	}
	if !math.IsNaN(Median(nil)) || (Side{{1}, {2, 3}}).Blocks() != 3 {
		t.Error("empty median or blocks")
	}
}
