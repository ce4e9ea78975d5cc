package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// The worked example of Jain & Chlamtac (1985), Table I: the median of 20 values.
func TestP2PaperExample(t *testing.T) {
	in := []float64{0.02, 0.15, 0.74, 3.39, 0.83, 22.37, 10.15, 15.43, 38.62, 15.92,
		34.60, 10.28, 1.47, 0.40, 0.05, 11.39, 0.27, 0.42, 0.09, 11.37}
	e := NewP2(0.5)
	for _, x := range in {
		e.Add(x)
	}
	want := [5]float64{0.02, 0.49, 4.44, 17.20, 38.62}
	got := e.markers()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 0.005 {
			t.Errorf("marker %d = %.4f, want %.2f (all %v)", i, got[i], want[i], got)
		}
	}
	if q := e.Quantile(); math.Abs(q-4.44) > 0.005 {
		t.Errorf("Quantile = %.4f, want 4.44", q)
	}
}

func TestP2RankError(t *testing.T) {
	const n = 100_000
	dists := []struct {
		name string
		gen  func(r *rand.Rand) float64
	}{
		{"uniform", func(r *rand.Rand) float64 { return r.Float64() }},
		{"exponential", func(r *rand.Rand) float64 { return r.ExpFloat64() }},
		{"lognormal", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) }},
	}
	for _, d := range dists {
		for _, p := range []float64{0.5, 0.95, 0.99} {
			r := rand.New(rand.NewPCG(1, uint64(p*1000)))
			e := NewP2(p)
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = d.gen(r)
				e.Add(xs[i])
			}
			sort.Float64s(xs)
			est := e.Quantile()
			rank := float64(sort.SearchFloat64s(xs, est)) / n
			if math.Abs(rank-p) > 0.01 {
				t.Errorf("%s p=%.2f: estimate %.4f has rank %.4f, error %.4f > 0.01", d.name, p, est, rank, math.Abs(rank-p))
			}
		}
	}
}

func TestP2FewAndReset(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		p    float64
		want float64
	}{
		{"none", nil, 0.5, 0},
		{"one", []float64{7}, 0.95, 7},
		{"three median", []float64{3, 1, 2}, 0.5, 2},
		{"four p95", []float64{4, 1, 3, 2}, 0.95, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewP2(tt.p)
			for _, x := range tt.in {
				e.Add(x)
			}
			if got := e.Quantile(); got != tt.want {
				t.Errorf("Quantile = %v, want %v", got, tt.want)
			}
			for i := range 100 {
				e.Add(float64(i))
			}
			e.Reset()
			if e.Count() != 0 || e.Quantile() != 0 {
				t.Errorf("after Reset: count %d quantile %v, want 0 0", e.Count(), e.Quantile())
			}
		})
	}
}

func BenchmarkP2Add(b *testing.B) {
	e := NewP2(0.95)
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = r.ExpFloat64()
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.Add(xs[i&4095])
	}
}
