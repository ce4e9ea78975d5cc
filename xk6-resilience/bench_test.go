package resilience

import (
	"fmt"
	"testing"
	"time"

	"go.k6.io/k6/metrics"
)

// BenchmarkAdd measures folding one HTTP request's worth of samples.
func BenchmarkAdd(b *testing.B) {
	reg := metrics.NewRegistry()
	dur := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
	reqs := reg.MustNewMetric("http_reqs", metrics.Counter)
	failed := reg.MustNewMetric("http_req_failed", metrics.Rate)
	var tags []*metrics.TagSet
	for i := range 1000 {
		tags = append(tags, reg.RootTagSet().WithTagsFromMap(map[string]string{
			"name": "get", "status": "200", "url": fmt.Sprintf("http://127.0.0.1:1/k/%d", i)}))
	}
	a := newAggregator(DefaultTags)
	b.ResetTimer()
	for i := range b.N {
		at := t0.Add(time.Duration(i) * 250 * time.Microsecond)
		ts := tags[i%len(tags)]
		a.add(metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: dur, Tags: ts}, Time: at, Value: float64(i%500) / 7})
		a.add(metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: reqs, Tags: ts}, Time: at, Value: 1})
		a.add(metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: failed, Tags: ts}, Time: at, Value: 0})
		if i%4000 == 3999 {
			for _, w := range a.take(at.Add(-2 * time.Second)) {
				if _, err := windowLine(w); err != nil {
					b.Fatal(err)
				}
				w.release()
			}
		}
	}
}
