package record

import (
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestHistSum: adding encodings gives what merging the decoded histograms
// gives, for one parameter set and across two; a bad encoding changes
// nothing.
func TestHistSum(t *testing.T) {
	narrow := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, 10_000_000, 2) }
	cases := []struct {
		name  string
		hists []func() *hdrhistogram.Histogram
	}{
		{"one parameter set", []func() *hdrhistogram.Histogram{NewHist, NewHist, NewHist}},
		{"a narrower one first", []func() *hdrhistogram.Histogram{narrow, NewHist, NewHist}},
		{"a narrower one later", []func() *hdrhistogram.Histogram{NewHist, narrow, NewHist}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var sum HistSum
			want := NewHist()
			for i, mk := range tc.hists {
				h := mk()
				for v := int64(i + 1); v < 5_000_000; v = v*2 + int64(i) {
					h.RecordValues(v, int64(i)+1)
				}
				want.Merge(h)
				enc, err := EncodeHist(h)
				if err != nil {
					t.Fatal(err)
				}
				if err := sum.AddEncoded(enc); err != nil {
					t.Fatal(err)
				}
				if err := sum.AddEncoded("bad"); err == nil {
					t.Fatal("AddEncoded(bad): no error")
				}
			}
			got := sum.Histogram()
			if got.TotalCount() != want.TotalCount() {
				t.Fatalf("total %d, want %d", got.TotalCount(), want.TotalCount())
			}
			for _, q := range []float64{1, 50, 90, 99, 99.9, 100} {
				g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q)
				// The narrow histogram has two significant figures.
				if math.Abs(float64(g-w)) > 0.01*float64(w) {
					t.Errorf("p%v = %d, want %d", q, g, w)
				}
			}
		})
	}
	var empty HistSum
	if empty.Histogram() != nil {
		t.Error("an empty sum has a histogram")
	}
}

// paramSets are histogram parameters to test the sum with: the record's
// and others a sender could choose.
var paramSets = [][3]int64{{HistLowest, HistHighest, HistSigFigs}, {1, 10_000_000, 2}, {1000, 1_000_000_000, 3}, {7, 1_000_000, 1}, {3, 1 << 40, 3}}

// randomHists makes n histograms of one parameter set, from a few values
// to thousands, over a spread that grows with i.
func randomHists(rng *rand.Rand, p [3]int64, n int) []*hdrhistogram.Histogram {
	var out []*hdrhistogram.Histogram
	for i := range n {
		h := hdrhistogram.New(p[0], p[1], int(p[2]))
		for range 1 + rng.IntN(3000) {
			v := p[0] + int64(rng.ExpFloat64()*float64(p[0])*float64(1+i)*300)
			_ = h.RecordValue(min(v, p[1]))
		}
		out = append(out, h)
	}
	return out
}

func encodeAll(t testing.TB, hs []*hdrhistogram.Histogram) []string {
	t.Helper()
	out := make([]string, len(hs))
	for i, h := range hs {
		enc, err := EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = enc
	}
	return out
}

// quantiles are the percentiles the sums are checked at: a tiny one
// (whose count rounds to zero), the usual ones and the extremes.
var quantiles = []float64{0, 1e-9, 0.1, 1, 25, 50, 75, 90, 99, 99.9, 99.99, 100}

// TestHistSumQuantileIsHDRs: a sum's quantiles are exactly those of the
// merged histograms, sparse (a few encodings) or dense (many).
func TestHistSumQuantileIsHDRs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range paramSets {
		for _, n := range []int{1, 2, 5, maxSparseAdds + 3} {
			hs := randomHists(rng, p, n)
			var sum HistSum
			want := hdrhistogram.New(p[0], p[1], int(p[2]))
			for i, enc := range encodeAll(t, hs) {
				if err := sum.AddEncoded(enc); err != nil {
					t.Fatal(err)
				}
				want.Merge(hs[i])
			}
			if sum.Total() != want.TotalCount() {
				t.Fatalf("%v, %d histograms: total %d, want %d", p, n, sum.Total(), want.TotalCount())
			}
			for _, q := range quantiles {
				if got, ok := sum.Quantile(q); !ok || got != want.ValueAtQuantile(q) {
					t.Errorf("%v, %d histograms: p(%v) = %d (ok %v), want %d", p, n, q, got, ok, want.ValueAtQuantile(q))
				}
			}
		}
	}
	var empty HistSum
	if _, ok := empty.Quantile(50); ok || !empty.Empty() {
		t.Error("an empty sum has a quantile")
	}
}

// TestHistSumMerge: merging sums, sparse into dense and back, gives the
// sum of every encoding, and leaves the merged-in sums as they were.
func TestHistSumMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	encs := encodeAll(t, randomHists(rng, paramSets[0], 36))
	var all HistSum
	for _, e := range encs {
		if err := all.AddEncoded(e); err != nil {
			t.Fatal(err)
		}
	}
	// Parts of 1 to 8 encodings, some sparse, some dense.
	var parts []*HistSum
	for i, size := 0, 1; i < len(encs); i, size = i+size, size+1 {
		p := &HistSum{}
		for _, e := range encs[i:min(i+size, len(encs))] {
			if err := p.AddEncoded(e); err != nil {
				t.Fatal(err)
			}
		}
		parts = append(parts, p)
	}
	if parts[0].counts != nil || parts[len(parts)-1].counts == nil {
		t.Fatal("want the first part sparse and the last dense")
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {2, 0, 7, 1, 6, 3, 5, 4}} {
		var merged HistSum
		for _, i := range order[:len(parts)] {
			before, _ := parts[i].Quantile(99)
			if err := merged.Merge(parts[i]); err != nil {
				t.Fatal(err)
			}
			if after, _ := parts[i].Quantile(99); after != before {
				t.Fatalf("merging part %d changed its p(99) from %d to %d", i, before, after)
			}
		}
		for _, q := range quantiles {
			g, _ := merged.Quantile(q)
			w, _ := all.Quantile(q)
			if g != w || merged.Total() != all.Total() {
				t.Errorf("order %v: p(%v) = %d of %d values, want %d of %d", order, q, g, merged.Total(), w, all.Total())
			}
		}
	}
	// Another parameter set falls back to histograms of a range covering both.
	var mixed HistSum
	narrow := encodeAll(t, randomHists(rng, paramSets[1], 1))[0]
	if err := mixed.AddEncoded(narrow); err != nil {
		t.Fatal(err)
	}
	if err := mixed.Merge(&all); err != nil {
		t.Fatal(err)
	}
	if n, _ := HistCount(narrow); mixed.Total() != all.Total()+n {
		t.Errorf("mixed merge holds %d values, want %d", mixed.Total(), all.Total()+n)
	}
}

// TestValueRangeIsHDRs: the values each count index holds are those the
// library gives its buckets.
func TestValueRangeIsHDRs(t *testing.T) {
	for _, p := range paramSets {
		slots := countsLen(p[0], p[1], p[2])
		ones := make([]int64, slots)
		for i := range ones {
			ones[i] = 1
		}
		h := hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: p[0], HighestTrackableValue: p[1], SignificantFigures: p[2], Counts: ones})
		sum := HistSum{lowest: p[0], highest: p[1], sig: p[2], slots: slots}
		bars := h.Distribution()
		if int64(len(bars)) != slots {
			t.Fatalf("%v: %d bars, want %d", p, len(bars), slots)
		}
		for i, b := range bars {
			if lo, hi := sum.valueRange(int64(i)); lo != b.From || hi != b.To {
				t.Fatalf("%v index %d: %d..%d, want %d..%d", p, i, lo, hi, b.From, b.To)
			}
		}
	}
}
