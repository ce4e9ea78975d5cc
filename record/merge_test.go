package record

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestMergeWindowsIsExact: merging two shards' windows gives the counts'
// sum and the same quantiles as one histogram of all the samples.
func TestMergeWindowsIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	all := NewHist()
	shard := func() []Window {
		var out []Window
		for sec := range 3 {
			h := NewHist()
			n := 500 + rng.IntN(500)
			for range n {
				v := int64(rng.ExpFloat64()*5000) + 1
				h.RecordValue(v)
				all.RecordValue(v)
			}
			enc, err := EncodeHist(h)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Window{Start: t0.Add(time.Duration(sec) * time.Second), Series: []Series{
				{Metric: "http_req_duration", Kind: Trend, Count: int64(n), Hist: enc, Tags: map[string]string{"api": "A"}},
				{Metric: "http_reqs", Kind: Counter, Count: int64(n), Sum: float64(n), Tags: map[string]string{"api": "A"}},
			}})
		}
		return out
	}
	a, b := shard(), shard()
	merged, err := MergeWindows(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged) != 3 {
		t.Fatalf("%d windows, want 3", len(merged))
	}
	got := NewHist()
	var reqs float64
	for i, w := range merged {
		for _, s := range w.Series {
			switch s.Metric {
			case "http_reqs":
				reqs += s.Sum
				if want := a[i].Series[1].Sum + b[i].Series[1].Sum; s.Sum != want {
					t.Errorf("second %d: %v requests, want %v", i, s.Sum, want)
				}
			case "http_req_duration":
				h, err := DecodeHist(s.Hist)
				if err != nil {
					t.Fatal(err)
				}
				got.Merge(h)
			}
		}
	}
	if got.TotalCount() != all.TotalCount() || int64(reqs) != all.TotalCount() {
		t.Fatalf("merged %d samples (%v requests), want %d", got.TotalCount(), reqs, all.TotalCount())
	}
	for _, q := range []float64{50, 99, 99.9} {
		if g, w := got.ValueAtQuantile(q), all.ValueAtQuantile(q); g != w {
			t.Errorf("p(%v) = %d after the merge, %d over all samples", q, g, w)
		}
	}
}

// TestWindowSetMergesManyAndReadsBetween: the windows of many shards merge
// into the histogram of all their values, and reading the set between
// adds (a receiver's summary) changes nothing of the result.
func TestWindowSetMergesManyAndReadsBetween(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	all := NewHist()
	var ws WindowSet
	var count int64
	for shard := range 60 {
		h := NewHist()
		n := 1 + rng.IntN(50)
		for range n {
			v := int64(rng.ExpFloat64()*2000) + 1
			h.RecordValue(v)
			all.RecordValue(v)
		}
		count += int64(n)
		enc, err := EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.Add(Window{Start: t0, Series: []Series{{Metric: "d", Kind: Trend, Count: int64(n), Hist: enc}}}); err != nil {
			t.Fatal(err)
		}
		if shard%7 == 0 {
			ws.Windows()
		}
	}
	var got []Window
	if err := ws.Drain(t0.Add(time.Second), func(w Window) error { got = append(got, w); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Series) != 1 || got[0].Series[0].Count != count {
		t.Fatalf("windows %+v, want one of %d values", got, count)
	}
	h, err := DecodeHist(got[0].Series[0].Hist)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Equals(all) {
		t.Errorf("merged histogram (%d values, p99 %d) differs from all values' (%d, p99 %d)", h.TotalCount(), h.ValueAtQuantile(99), all.TotalCount(), all.ValueAtQuantile(99))
	}
}
