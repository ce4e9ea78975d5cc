package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSpaceSavingGolden(t *testing.T) {
	s := NewSpaceSaving[string](4)
	for _, x := range strings.Fields("a b a c d e a d f a d") {
		s.Add(x)
	}
	var got []string
	for _, c := range s.Top(0) {
		got = append(got, fmt.Sprintf("%s:%d", c.Item, c.Count))
	}
	if want := "a:4 d:3 e:2 f:2"; strings.Join(got, " ") != want {
		t.Errorf("top = %q, want %q", strings.Join(got, " "), want)
	}
	if c, _ := s.estimate("e"); c.Err != 1 {
		t.Errorf("e: error %d, want 1 (it took over b's counter)", c.Err)
	}
	if _, ok := s.estimate("b"); ok {
		t.Error("b is still monitored; it should have been replaced")
	}
}

// The guarantees of the paper, on skewed and flat streams.
func TestSpaceSavingProperties(t *testing.T) {
	streams := []struct {
		name string
		gen  func(r *rand.Rand) int
	}{
		{"zipf", nil},
		{"uniform", func(r *rand.Rand) int { return r.IntN(500) }},
		{"one heavy", func(r *rand.Rand) int {
			if r.IntN(10) < 3 {
				return -1
			}
			return r.IntN(10000)
		}},
	}
	for _, st := range streams {
		for _, k := range []int{1, 8, 50} {
			t.Run(fmt.Sprintf("%s k=%d", st.name, k), func(t *testing.T) {
				r := rand.New(rand.NewPCG(3, uint64(k)))
				gen := st.gen
				if gen == nil {
					z := rand.NewZipf(r, 1.2, 1, 5000)
					gen = func(*rand.Rand) int { return int(z.Uint64()) }
				}
				s := NewSpaceSaving[int](k)
				truth := map[int]uint64{}
				const n = 20000
				for range n {
					x := gen(r)
					truth[x]++
					s.Add(x)
				}
				var sum uint64
				for _, c := range s.Top(0) {
					sum += c.Count
					tr := truth[c.Item]
					if !(tr <= c.Count && c.Count <= tr+c.Err) {
						t.Errorf("item %d: true %d, count %d, err %d: want true ≤ count ≤ true+err", c.Item, tr, c.Count, c.Err)
					}
				}
				if sum != n || s.n != n {
					t.Errorf("counters sum to %d, N = %d; want %d", sum, s.n, n)
				}
				if float64(s.minCount()) > float64(n)/float64(k) {
					t.Errorf("min %d > N/k = %v", s.minCount(), float64(n)/float64(k))
				}
				for x, c := range truth {
					if float64(c) > math.Floor(float64(n)/float64(k)) {
						if _, ok := s.estimate(x); !ok {
							t.Errorf("item %d occurs %d > N/k times but is not monitored", x, c)
						}
					}
				}
			})
		}
	}
}

func TestSpaceSavingReset(t *testing.T) {
	s := NewSpaceSaving[string](2)
	for _, x := range []string{"a", "b", "c", "a"} {
		s.Add(x)
	}
	s.Reset()
	if s.n != 0 || len(s.Top(0)) != 0 || s.minCount() != 0 {
		t.Fatalf("after Reset: N %d, top %v, min %d", s.n, s.Top(0), s.minCount())
	}
	s.Add("z")
	if c, ok := s.estimate("z"); !ok || c.Count != 1 || c.Err != 0 {
		t.Fatalf("z after Reset: %+v %v", c, ok)
	}
}

func BenchmarkSpaceSavingAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 100000)
	keys := make([]string, 8192)
	for i := range keys {
		keys[i] = fmt.Sprintf("p%d/r%d", z.Uint64(), i%7)
	}
	s := NewSpaceSaving[string](64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Add(keys[i&8191])
	}
}
