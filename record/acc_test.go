package record

import (
	"errors"
	"math"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

var (
	aggP99   = Agg{Func: AggP, P: 99}
	aggP50   = Agg{Func: AggP, P: 50}
	aggMed   = Agg{Func: AggMed}
	aggAvg   = Agg{Func: AggAvg}
	aggMin   = Agg{Func: AggMin}
	aggMax   = Agg{Func: AggMax}
	aggCount = Agg{Func: AggCount}
	aggSum   = Agg{Func: AggSum}
	aggRate  = Agg{Func: AggRate}
	aggValue = Agg{Func: AggValue}
	allAggs  = []Agg{aggP99, aggP50, aggMed, aggAvg, aggMin, aggMax, aggCount, aggSum, aggRate, aggValue}
)

// accOf adds the series to an Acc that keeps histograms.
func accOf(t *testing.T, series ...Series) *Acc {
	t.Helper()
	a := &Acc{Quantiles: true}
	for _, s := range series {
		if err := a.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// hdrValue is what the merged histogram of the values (ms) says at q, in ms.
func hdrValue(vals []float64, q float64) float64 {
	h := NewHist()
	for _, v := range vals {
		_ = h.RecordValue(int64(math.Round(v * 1000)))
	}
	return float64(h.ValueAtQuantile(q)) / 1000
}

// TestAccValue: every aggregation of every kind over two seconds of
// series, divided by 4 seconds where per second; an aggregation a kind
// does not define is a *NotDefinedError.
func TestAccValue(t *testing.T) {
	a, b := []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40, 0.5, 6}
	all := append(append([]float64(nil), a...), b...)
	trend := accOf(t, trendSeries(t, "d", nil, a), trendSeries(t, "d", nil, b))
	counter := accOf(t, Series{Metric: "c", Kind: Counter, Count: 3, Sum: 30}, Series{Metric: "c", Kind: Counter, Count: 2, Sum: 12})
	rate := accOf(t, Series{Metric: "r", Kind: Rate, Count: 8, NonZero: 2}, Series{Metric: "r", Kind: Rate, Count: 2, NonZero: 0})
	gauge := accOf(t, Series{Metric: "g", Kind: Gauge, Count: 1, Min: 3, Max: 3, Last: 3}, Series{Metric: "g", Kind: Gauge, Count: 2, Min: -1, Max: 7, Last: 5})
	const undefined = math.MaxFloat64 // the aggregation is not defined
	cases := []struct {
		kind Kind
		acc  *Acc
		want map[Agg]float64
	}{
		{Trend, trend, map[Agg]float64{
			aggP99: min(hdrValue(all, 99), 40), aggP50: hdrValue(all, 50), aggMed: hdrValue(all, 50),
			aggAvg: 116.5 / 10, aggMin: 0.5, aggMax: 40, aggCount: 10, aggSum: 116.5, aggRate: 10.0 / 4, aggValue: undefined}},
		{Counter, counter, map[Agg]float64{
			aggP99: undefined, aggP50: undefined, aggMed: undefined, aggMin: undefined, aggMax: undefined,
			aggAvg: 42.0 / 5, aggCount: 42, aggSum: 42, aggRate: 42.0 / 4, aggValue: undefined}},
		{Rate, rate, map[Agg]float64{
			aggP99: undefined, aggP50: undefined, aggMed: undefined, aggMin: undefined, aggMax: undefined,
			aggAvg: 0.2, aggCount: 10, aggSum: 2, aggRate: 0.2, aggValue: undefined}},
		{Gauge, gauge, map[Agg]float64{
			aggP99: undefined, aggP50: undefined, aggMed: undefined, aggAvg: undefined, aggSum: undefined, aggRate: undefined,
			aggMin: -1, aggMax: 7, aggCount: 3, aggValue: 5}},
	}
	for _, tc := range cases {
		if len(tc.want) != len(allAggs) {
			t.Fatalf("%s: %d aggregations listed, want all %d", tc.kind, len(tc.want), len(allAggs))
		}
		for _, agg := range allAggs {
			got, err := tc.acc.Value(agg, 4)
			want := tc.want[agg]
			var nd *NotDefinedError
			switch {
			case want == undefined && !(errors.As(err, &nd) && nd.Kind == tc.kind && nd.Agg == agg):
				t.Errorf("%s %s: %v, %v; want a *NotDefinedError", tc.kind, agg, got, err)
			case want != undefined && (err != nil || math.Abs(got-want) > 1e-12):
				t.Errorf("%s %s: %v, %v; want %v", tc.kind, agg, got, err, want)
			}
		}
		if tc.acc.Kind() != tc.kind {
			t.Errorf("Kind() = %q, want %q", tc.acc.Kind(), tc.kind)
		}
	}
}

// TestAccNoValue: empty ranges, rates over no whole second, quantiles
// without histograms and unknown kinds say why there is no value.
func TestAccNoValue(t *testing.T) {
	noHists := &Acc{}
	if err := noHists.Add(trendSeries(t, "d", nil, []float64{1, 2})); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		acc  *Acc
		agg  Agg
		secs float64
		want error
	}{
		{"nothing added", &Acc{}, aggCount, 1, ErrNoSamples},
		{"nothing added, gauge aggregation", &Acc{}, aggMax, 1, ErrNoSamples},
		{"trend without samples", accOf(t, Series{Metric: "d", Kind: Trend}), aggP99, 1, ErrNoSamples},
		{"counter without samples", accOf(t, Series{Metric: "c", Kind: Counter}), aggSum, 1, ErrNoSamples},
		{"rate without samples", accOf(t, Series{Metric: "r", Kind: Rate}), aggRate, 1, ErrNoSamples},
		{"trend rate over no second", accOf(t, trendSeries(t, "d", nil, []float64{1})), aggRate, 0, ErrNoSeconds},
		{"counter rate over no second", accOf(t, Series{Metric: "c", Kind: Counter, Count: 1, Sum: 1}), aggRate, 0, ErrNoSeconds},
		{"quantile, histograms not kept", noHists, aggP99, 1, ErrNoHistogram},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if v, err := tc.acc.Value(tc.agg, tc.secs); !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, %v; want %v", tc.agg, v, err, tc.want)
			}
		})
	}
	// A gauge needs no samples: its series carry min and max.
	g := accOf(t, Series{Metric: "g", Kind: Gauge, Min: 2, Max: 5})
	if v, err := g.Value(aggMax, 1); err != nil || v != 5 {
		t.Errorf("gauge without samples: max %v, %v; want 5", v, err)
	}
	unknown := accOf(t, Series{Metric: "x", Kind: "histogram", Count: 1})
	var nd *NotDefinedError
	if _, err := unknown.Value(aggCount, 1); !errors.As(err, &nd) || AllowedAggs(nd.Kind) != "" {
		t.Errorf("unknown kind: %v; want a *NotDefinedError of a kind without aggregations", err)
	}
}

// TestAccMergeIsAdd: merging per-second accumulators gives what adding
// every series to one gives, for every aggregation.
func TestAccMergeIsAdd(t *testing.T) {
	r := sampleRun(t, 9)
	for _, metric := range []string{"http_req_duration", "http_reqs", "http_req_failed", "vus"} {
		whole := &Acc{Quantiles: true}
		merged := &Acc{Quantiles: true}
		for _, w := range r.Windows {
			sec := &Acc{Quantiles: true}
			for _, s := range w.Series {
				if s.Metric == metric {
					if err := whole.Add(s); err != nil {
						t.Fatal(err)
					}
					if err := sec.Add(s); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := merged.Merge(sec); err != nil {
				t.Fatal(err)
			}
		}
		for _, agg := range allAggs {
			w, werr := whole.Value(agg, 9)
			m, merr := merged.Value(agg, 9)
			if w != m || (werr == nil) != (merr == nil) {
				t.Errorf("%s %s: merged %v, %v; added %v, %v", metric, agg, m, merr, w, werr)
			}
		}
		if whole.Samples() != merged.Samples() || whole.NonZero() != merged.NonZero() {
			t.Errorf("%s: merged %d samples (%d non-zero), added %d (%d)", metric, merged.Samples(), merged.NonZero(), whole.Samples(), whole.NonZero())
		}
	}
}

// TestAccHistogramsOfDifferentRanges: trend series whose histograms have
// other parameters merge over a range covering all of them, added or
// merged in.
func TestAccHistogramsOfDifferentRanges(t *testing.T) {
	want := hdrhistogram.New(1, HistHighest, 3)
	series := func(h *hdrhistogram.Histogram, vals ...int64) Series {
		s := Series{Metric: "d", Kind: Trend, Count: int64(len(vals)), Min: math.Inf(1)}
		for _, v := range vals {
			_ = h.RecordValue(v)
			s.Sum += float64(v) / 1000
			s.Min, s.Max = min(s.Min, float64(v)/1000), max(s.Max, float64(v)/1000)
		}
		want.Merge(h)
		enc, err := EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		s.Hist = enc
		return s
	}
	narrow := series(hdrhistogram.New(1, 100_000, 2), 500, 700, 900, 90_000)
	wide := series(NewHist(), 1_000, 2_000_000, 3_000_000)
	added := accOf(t, narrow, wide)
	merged := accOf(t, wide)
	if err := merged.Merge(accOf(t, narrow)); err != nil {
		t.Fatal(err)
	}
	for _, acc := range []*Acc{added, merged} {
		for _, q := range []float64{10, 50, 60, 70, 99} {
			w := min(max(float64(want.ValueAtQuantile(q))/1000, 0.5), 3000)
			if got, err := acc.Value(Agg{Func: AggP, P: q}, 1); err != nil || got != w {
				t.Errorf("p(%v) = %v, %v; want %v", q, got, err, w)
			}
		}
	}
}

// TestAccRefuses: a series of another kind is refused, by Add and Merge;
// a bad histogram is an error, the series' counts added all the same.
func TestAccRefuses(t *testing.T) {
	a := accOf(t, Series{Metric: "x", Kind: Counter, Count: 1, Sum: 1})
	var mixed *MixedKindsError
	if err := a.Add(Series{Metric: "x", Kind: Trend, Count: 1}); !errors.As(err, &mixed) || mixed.Have != Counter || mixed.Got != Trend {
		t.Errorf("Add of a trend to counters: %v", err)
	}
	if err := a.Merge(accOf(t, Series{Metric: "x", Kind: Gauge})); !errors.As(err, &mixed) {
		t.Errorf("Merge of gauges into counters: %v", err)
	}
	if err := a.Merge(&Acc{}); err != nil {
		t.Errorf("Merge of an empty Acc: %v", err)
	}
	if a.Samples() != 1 {
		t.Errorf("refused series were counted: %d samples", a.Samples())
	}
	b := &Acc{Quantiles: true}
	for _, hist := range []string{"", "bad"} {
		if err := b.Add(Series{Metric: "d", Kind: Trend, Count: 2, Sum: 3, Hist: hist}); err == nil {
			t.Errorf("Add of a trend with histogram %q: no error", hist)
		}
	}
	if v, err := b.Value(aggCount, 1); err != nil || v != 4 {
		t.Errorf("count after bad histograms: %v, %v; want 4", v, err)
	}
}
