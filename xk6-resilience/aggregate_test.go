package resilience

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.k6.io/k6/metrics"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// exactQuantile is the nearest-rank quantile of sorted values.
func exactQuantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

func TestQuantilesFromMergedWindows(t *testing.T) {
	dists := []struct {
		name string
		draw func(r *rand.Rand) float64
	}{
		{"uniform 1..500ms", func(r *rand.Rand) float64 { return 1 + 499*r.Float64() }},
		{"lognormal median 20ms", func(r *rand.Rand) float64 { return 20 * math.Exp(0.8*r.NormFloat64()) }},
		{"exponential mean 5ms", func(r *rand.Rand) float64 { return 0.05 + r.ExpFloat64()*5 }},
		{"bimodal 2ms and 800ms", func(r *rand.Rand) float64 {
			if r.Float64() < 0.97 {
				return 2 + r.Float64()
			}
			return 800 + 200*r.Float64()
		}},
	}
	for _, d := range dists {
		t.Run(d.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(42, 7))
			reg := metrics.NewRegistry()
			m := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
			tags := reg.RootTagSet().With("name", "get")
			a := newAggregator(DefaultTags)
			const n = 200000
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = d.draw(r)
				at := t0.Add(time.Duration(i) * 20 * time.Second / n) // 20 windows
				a.add(metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: m, Tags: tags}, Time: at, Value: vals[i]})
			}
			ws := a.take(time.Time{})
			if len(ws) != 20 {
				t.Fatalf("got %d windows, want 20", len(ws))
			}
			merged := hdrhistogram.New(histLowest, histHighest, histSigFigs)
			var count int64
			for _, w := range ws {
				g := w.series["http_req_duration\x00name=get"]
				if g == nil {
					t.Fatalf("window %d has no series http_req_duration{name=get}: %v", w.start, w.series)
				}
				enc, err := g.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
				if err != nil {
					t.Fatal(err)
				}
				h, err := hdrhistogram.Decode(enc)
				if err != nil {
					t.Fatal(err)
				}
				if dropped := merged.Merge(h); dropped != 0 {
					t.Fatalf("merge dropped %d", dropped)
				}
				count += g.count
				w.release()
			}
			if count != n || merged.TotalCount() != n {
				t.Fatalf("count %d, hist total %d, want %d", count, merged.TotalCount(), n)
			}
			sort.Float64s(vals)
			for _, q := range []float64{0.5, 0.99, 0.999} {
				want := exactQuantile(vals, q)
				got := float64(merged.ValueAtQuantile(q*100)) / 1000
				if rel := math.Abs(got-want) / want; rel > 0.01 {
					t.Errorf("p%v: hist %.4f, exact %.4f, off by %.2f%% (allowed 1%%)", q*100, got, want, rel*100)
				}
			}
		})
	}
}

func TestWindowAssignment(t *testing.T) {
	reg := metrics.NewRegistry()
	c := reg.MustNewMetric("http_reqs", metrics.Counter)
	ts := metrics.TimeSeries{Metric: c, Tags: reg.RootTagSet()}
	a := newAggregator(DefaultTags)
	at := []time.Duration{0, 999 * time.Millisecond, time.Second, 1999999999, 5 * time.Second}
	for _, d := range at {
		a.add(metrics.Sample{TimeSeries: ts, Time: t0.Add(d), Value: 1})
	}
	// A window is taken only once its second has ended by the cut.
	if got := a.take(t0.Add(999 * time.Millisecond)); len(got) != 0 {
		t.Fatalf("took %d windows before the first second ended", len(got))
	}
	got := a.take(t0.Add(2 * time.Second))
	counts := map[int64]int64{}
	for _, w := range got {
		counts[w.start-t0.Unix()] = w.series["http_reqs"].count
	}
	if want := map[int64]int64{0: 2, 1: 2}; !reflect.DeepEqual(counts, want) {
		t.Fatalf("windows by second = %v, want %v", counts, want)
	}
	// A late sample for a second already taken opens a new window with the same start.
	a.add(metrics.Sample{TimeSeries: ts, Time: t0.Add(500 * time.Millisecond), Value: 3})
	rest := a.take(time.Time{})
	if len(rest) != 2 || rest[0].start != t0.Unix() || rest[0].series["http_reqs"].sum != 3 || rest[1].start != t0.Unix()+5 {
		t.Fatalf("late and remaining windows wrong: %+v", rest)
	}
}

func TestTagFiltering(t *testing.T) {
	reg := metrics.NewRegistry()
	m := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
	tags := reg.RootTagSet().WithTagsFromMap(map[string]string{
		"url": "http://127.0.0.1:1/key/123", "name": "get-key", "status": "200",
		"method": "GET", "proto": "HTTP/1.1", "scenario": "load",
	})
	tests := []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{"default list drops url and proto", nil,
			map[string]string{"name": "get-key", "status": "200", "method": "GET", "scenario": "load"}},
		{"env override", map[string]string{"K6_RESILIENCE_TAGS": " status, url "},
			map[string]string{"status": "200", "url": "http://127.0.0.1:1/key/123"}},
		{"env override with no tag present", map[string]string{"K6_RESILIENCE_TAGS": "tier"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig("out.jsonl", tt.env)
			if err != nil {
				t.Fatal(err)
			}
			a := newAggregator(cfg.tags)
			a.add(metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: m, Tags: tags}, Time: t0, Value: 1})
			ws := a.take(time.Time{})
			if len(ws) != 1 || len(ws[0].series) != 1 {
				t.Fatalf("want one window with one series, got %+v", ws)
			}
			for _, g := range ws[0].series {
				if !reflect.DeepEqual(g.desc.tags, tt.want) {
					t.Fatalf("tags = %v, want %v", g.desc.tags, tt.want)
				}
			}
		})
	}
}

func TestKinds(t *testing.T) {
	reg := metrics.NewRegistry()
	root := reg.RootTagSet()
	ts := func(name string, typ metrics.MetricType) metrics.TimeSeries {
		return metrics.TimeSeries{Metric: reg.MustNewMetric(name, typ), Tags: root}
	}
	tr, ct, rt, ga := ts("my_trend", metrics.Trend), ts("my_counter", metrics.Counter), ts("my_rate", metrics.Rate), ts("my_gauge", metrics.Gauge)
	a := newAggregator(DefaultTags)
	for i, v := range []float64{3, -1, 0.5, 7} {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		for _, s := range []metrics.TimeSeries{tr, ct, ga} {
			a.add(metrics.Sample{TimeSeries: s, Time: at, Value: v})
		}
		a.add(metrics.Sample{TimeSeries: rt, Time: at, Value: float64(i % 2)})
	}
	a.add(metrics.Sample{TimeSeries: ct, Time: t0, Value: math.NaN()})
	w := a.take(time.Time{})[0]
	check := func(key string, f func(g *agg) bool) {
		t.Helper()
		if g := w.series[key]; g == nil || !f(g) {
			t.Errorf("series %s wrong: %+v", key, g)
		}
	}
	check("my_trend", func(g *agg) bool {
		return g.count == 4 && g.sum == 9.5 && g.min == -1 && g.max == 7 && g.hist.TotalCount() == 4 && g.hist.Min() == 0
	})
	check("my_counter", func(g *agg) bool { return g.count == 4 && g.sum == 9.5 })
	check("my_rate", func(g *agg) bool { return g.count == 4 && g.nonzero == 2 })
	check("my_gauge", func(g *agg) bool { return g.count == 4 && g.min == -1 && g.max == 7 && g.last == 7 })
	if a.dropped != 1 {
		t.Errorf("dropped = %d, want 1 (the NaN)", a.dropped)
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		arg     string
		wantErr bool
		tcp     string
		path    string
	}{
		{"tcp://127.0.0.1:4000", false, "127.0.0.1:4000", ""},
		{"out/stream.jsonl", false, "", "out/stream.jsonl"},
		{"", true, "", ""},
		{"tcp://127.0.0.1", true, "", ""},
		{"udp://127.0.0.1:1", true, "", ""},
	}
	for _, tt := range tests {
		c, err := parseConfig(tt.arg, nil)
		if (err != nil) != tt.wantErr || c.tcpAddr != tt.tcp || c.path != tt.path {
			t.Errorf("parseConfig(%q) = %+v, %v", tt.arg, c, err)
		}
	}
}
