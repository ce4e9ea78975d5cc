package keys

import (
	"math"
	"strings"
	"testing"
)

// chiSquare returns Σ (obs-exp)²/exp over the bins.
func chiSquare(obs []int, exp []float64) float64 {
	var x float64
	for i := range obs {
		d := float64(obs[i]) - exp[i]
		x += d * d / exp[i]
	}
	return x
}

// chiLimit is a wide acceptance bound for a chi-square statistic with df
// degrees of freedom: mean + 6 standard deviations.
func chiLimit(df int) float64 { return float64(df) + 6*math.Sqrt(2*float64(df)) }

func draw(t *testing.T, cfg Config, n int) []int {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, cfg.N)
	for range n {
		k := s.Next()
		if k >= cfg.N {
			t.Fatalf("%s: key %d outside [0, %d)", cfg.Kind, k, cfg.N)
		}
		counts[k]++
	}
	return counts
}

func TestUniformDistribution(t *testing.T) {
	const n, draws = 100, 200_000
	for _, seed := range []uint64{1, 7, 12345} {
		obs := draw(t, Config{Kind: Uniform, N: n, Seed: seed}, draws)
		exp := make([]float64, n)
		for i := range exp {
			exp[i] = draws / n
		}
		if x := chiSquare(obs, exp); x > chiLimit(n-1) {
			t.Errorf("seed %d: chi-square %.1f over %.1f", seed, x, chiLimit(n-1))
		}
	}
}

func TestZipfDistribution(t *testing.T) {
	const n, draws = 50, 200_000
	for _, s := range []float64{0.6, 0.99, 1, 1.1, 2} {
		obs := draw(t, Config{Kind: Zipf, N: n, S: s, Seed: 3}, draws)
		var norm float64
		for k := 1; k <= n; k++ {
			norm += math.Pow(float64(k), -s)
		}
		exp := make([]float64, n)
		for k := range exp {
			exp[k] = draws * math.Pow(float64(k+1), -s) / norm
		}
		// Merge the tail bins until each expects at least 5.
		o, e := obs[:0:0], exp[:0:0]
		var oa int
		var ea float64
		for i := range exp {
			oa += obs[i]
			ea += exp[i]
			if ea >= 5 {
				o, e = append(o, oa), append(e, ea)
				oa, ea = 0, 0
			}
		}
		if ea > 0 {
			o[len(o)-1] += oa
			e[len(e)-1] += ea
		}
		if x := chiSquare(o, e); x > chiLimit(len(o)-1) {
			t.Errorf("s=%v: chi-square %.1f over %.1f (obs head %v, exp head %.0f)", s, x, chiLimit(len(o)-1), obs[:5], exp[:5])
		}
	}
}

// TestZipfLargeKeySpace checks that a huge n costs nothing up front and
// still puts rank 1 at its share.
func TestZipfLargeKeySpace(t *testing.T) {
	const n, s, draws = 1 << 30, 1.2, 100_000
	st, err := New(Config{Kind: Zipf, N: n, S: s, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for range draws {
		if st.Next() == 0 {
			first++
		}
	}
	// P(rank 1) = 1/H(n,s); H(2^30, 1.2) ≈ ζ(1.2) - tail ≈ 5.59 - 0.78 = 4.81.
	var h float64
	for k := 1; k <= 1_000_000; k++ {
		h += math.Pow(float64(k), -s)
	}
	h += (math.Pow(1e6, 1-s) - math.Pow(n, 1-s)) / (s - 1)
	want := draws / h
	if math.Abs(float64(first)-want) > 6*math.Sqrt(want) {
		t.Errorf("rank 1 drawn %d times, want about %.0f", first, want)
	}
}

func TestHotsetDistribution(t *testing.T) {
	const n, hot, draws = 1000, 10, 200_000
	obs := draw(t, Config{Kind: Hotset, N: n, HotKeys: hot, HotFraction: 0.9, Seed: 5}, draws)
	hits := 0
	for _, c := range obs[:hot] {
		hits += c
	}
	// Binomial(200000, 0.9): sd ≈ 134.
	if want := 0.9 * draws; math.Abs(float64(hits)-want) > 6*134 {
		t.Errorf("hot keys drew %d, want about %.0f", hits, want)
	}
	exp := make([]float64, hot)
	for i := range exp {
		exp[i] = float64(hits) / hot
	}
	if x := chiSquare(obs[:hot], exp); x > chiLimit(hot-1) {
		t.Errorf("hot keys not uniform: chi-square %.1f", x)
	}
	s, _ := New(Config{Kind: Hotset, N: n, HotKeys: hot, HotFraction: 1, Seed: 5})
	for range 1000 {
		if k := s.Next(); k >= hot || s.Class() != ClassHot {
			t.Fatalf("p=1 drew cold key %d (%s)", k, s.Class())
		}
	}
}

func TestBotAndDeterminism(t *testing.T) {
	s, _ := New(Config{Kind: Bot, Key: 17})
	for range 100 {
		if k := s.Next(); k != 17 || s.Class() != ClassBot {
			t.Fatalf("bot stream drew %d (%s)", k, s.Class())
		}
	}
	for _, kind := range []string{Uniform, Zipf, Hotset} {
		cfg := Config{Kind: kind, N: 1000, S: 1.1, HotKeys: 10, HotFraction: 0.5, Seed: 77}
		a, _ := New(cfg)
		b, _ := New(cfg)
		cfg.Seed = 78
		c, _ := New(cfg)
		same, differ := true, false
		for range 200 {
			x, y, z := a.Next(), b.Next(), c.Next()
			same = same && x == y
			differ = differ || x != z
		}
		if !same || !differ {
			t.Errorf("%s: same seed same keys %v, other seed other keys %v", kind, same, differ)
		}
	}
}

func TestStreamAllocationFree(t *testing.T) {
	for _, cfg := range []Config{
		{Kind: Uniform, N: 1 << 20},
		{Kind: Zipf, N: 1 << 20, S: 0.99},
		{Kind: Hotset, N: 1 << 20, HotKeys: 100, HotFraction: 0.9},
		{Kind: Bot},
	} {
		s, _ := New(cfg)
		if a := testing.AllocsPerRun(1000, func() { s.Next() }); a != 0 {
			t.Errorf("%s: %v allocations per Next", cfg.Kind, a)
		}
	}
}

func TestStreamValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Kind: "gauss", N: 10}, "allowed: uniform, zipf, hotset, bot"},
		{Config{Kind: Uniform}, "n 0"},
		{Config{Kind: Zipf, N: 10, S: 0}, "s 0"},
		{Config{Kind: Zipf, N: 10, S: math.NaN()}, "s NaN"},
		{Config{Kind: Hotset, N: 10, HotKeys: 11, HotFraction: 0.5}, "hot keys 11"},
		{Config{Kind: Hotset, N: 10, HotKeys: 1, HotFraction: 1.5}, "hot fraction"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error with %q", tt.cfg, err, tt.want)
		}
	}
}

func BenchmarkStreamNext(b *testing.B) {
	for _, cfg := range []Config{
		{Kind: Uniform, N: 1 << 20},
		{Kind: Zipf, N: 1 << 20, S: 0.99},
		{Kind: Zipf, N: 1 << 20, S: 1.2},
		{Kind: Hotset, N: 1 << 20, HotKeys: 100, HotFraction: 0.9},
		{Kind: Bot},
	} {
		s, _ := New(cfg)
		b.Run(cfg.Kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.Next()
			}
		})
	}
}

// TestAtDistribution checks that At draws the same distributions as Next.
func TestAtDistribution(t *testing.T) {
	const n, draws = 40, 100_000
	for _, cfg := range []Config{
		{Kind: Uniform, N: n, Seed: 5},
		{Kind: Zipf, N: n, S: 1.1, Seed: 5},
		{Kind: Hotset, N: n, HotKeys: 4, HotFraction: 0.8, Seed: 5},
	} {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		byAt := make([]int, n)
		exp := make([]float64, n)
		for i, c := range draw(t, cfg, draws) {
			exp[i] = float64(c)
		}
		for i := range uint64(draws) {
			byAt[s.At(i)]++
		}
		// Two samples of one distribution: compare At's against Next's,
		// bins that expect few merged away.
		var o []int
		var e []float64
		var oa int
		var ea float64
		for i := range exp {
			oa += byAt[i]
			ea += exp[i]
			if ea >= 20 {
				o, e = append(o, oa), append(e, ea)
				oa, ea = 0, 0
			}
		}
		if x := chiSquare(o, e); x > 2*chiLimit(len(o)-1) {
			t.Errorf("%s: At vs Next chi-square %.1f over %.1f", cfg.Kind, x, 2*chiLimit(len(o)-1))
		}
	}
}

// TestAtIsOrderFree checks that draw i is the same whoever draws it, in
// whatever order, and differs with the seed.
func TestAtIsOrderFree(t *testing.T) {
	cfg := Config{Kind: Zipf, N: 1 << 20, S: 0.9, Seed: 11}
	a, _ := New(cfg)
	b, _ := New(cfg)
	cfg.Seed = 12
	c, _ := New(cfg)
	up := make([]uint64, 1000)
	for i := range up {
		up[i] = a.At(uint64(i))
	}
	differ := false
	for i := len(up) - 1; i >= 0; i-- {
		if b.At(uint64(i)) != up[i] {
			t.Fatalf("draw %d differs when drawn in another order", i)
		}
		differ = differ || c.At(uint64(i)) != up[i]
	}
	if !differ {
		t.Error("another seed drew the same keys")
	}
	bot, _ := New(Config{Kind: Bot, Key: 9})
	if bot.At(123) != 9 || bot.ClassOf(9) != ClassBot {
		t.Errorf("bot At = %d (%s)", bot.At(123), bot.ClassOf(9))
	}
	if allocs := testing.AllocsPerRun(1000, func() { a.At(77) }); allocs != 0 {
		t.Errorf("%v allocations per At", allocs)
	}
}
