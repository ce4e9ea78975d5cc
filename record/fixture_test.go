package record

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// t0 is the start of the test runs.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// trendSeries is a trend series of the values (ms), with its histogram.
func trendSeries(t testing.TB, metric string, tags map[string]string, vals []float64) Series {
	t.Helper()
	s := Series{Metric: metric, Kind: Trend, Tags: tags, Count: int64(len(vals))}
	h := NewHist()
	for i, v := range vals {
		if err := h.RecordValue(int64(math.Round(v * 1000))); err != nil {
			t.Fatal(err)
		}
		s.Sum += v
		if i == 0 || v < s.Min {
			s.Min = v
		}
		s.Max = max(s.Max, v)
	}
	if len(vals) > 0 {
		enc, err := EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		s.Hist = enc
	}
	return s
}

// sampleRun is a complete run record of n seconds: every metric kind in
// every window, a fault, a scrape, an end check and a verdict.
func sampleRun(t testing.TB, n int) *Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	r := &Run{SchemaVersion: SchemaVersion, Scenario: "sample", File: "scenarios/sample.yaml", Seed: 7, Testbed: "local",
		Versions: map[string]string{"k6": "v1.8.1"}, Overrides: []string{"bank.bulkheads=off"},
		Start: t0, End: t0.Add(time.Duration(n) * time.Second), Planned: Duration(time.Duration(n) * time.Second),
		Timings:  Timings{Build: Duration(time.Second), Load: Duration(time.Duration(n) * time.Second)},
		Topology: []ServiceInfo{{Name: "bank.1", Address: "127.0.0.1:9000", PID: 42, Proxies: map[string]string{"bank->vault.1": "127.0.0.1:9001"}}},
		Faults: []FaultEvent{
			{Fault: "slow", Kind: "latency", Target: "bank->vault", Action: Applied, Scheduled: t0.Add(2 * time.Second), Actual: t0.Add(2 * time.Second)},
			{Fault: "slow", Kind: "latency", Target: "bank->vault", Action: Reverted, Scheduled: t0.Add(4 * time.Second), Actual: t0.Add(4 * time.Second),
				Counts: map[string]int64{"seen": 3}},
		},
		Scrapes:   []Scrape{{Time: t0.Add(time.Second), Instance: "bank.1", Values: map[string]float64{`platform_rejected_total{reason="queue"}`: 3}}},
		EndChecks: []EndCheck{{Name: "money", Service: "bank", OK: true, Values: map[string]float64{"total": 100}}},
		Verdicts:  []Verdict{{Assertion: "fast", Check: "p(99) < 10ms", Metric: "http_req_duration", Window: "whole", To: Duration(time.Second), Observed: 3, Bound: 10, Unit: "ms", Pass: true, Samples: 5}},
		Problems:  []string{"a <problem> & \"quotes\""},
	}
	for i := range n {
		var vals []float64
		for range 20 + rng.IntN(50) {
			vals = append(vals, 1+rng.ExpFloat64()*float64(i+1))
		}
		api := map[string]string{"api": "A"}
		r.Windows = append(r.Windows, Window{Start: t0.Add(time.Duration(i) * time.Second), Series: []Series{
			trendSeries(t, "http_req_duration", api, vals),
			{Metric: "http_reqs", Kind: Counter, Tags: api, Count: int64(len(vals)), Sum: float64(len(vals))},
			{Metric: "http_req_failed", Kind: Rate, Tags: api, Count: int64(len(vals)), NonZero: int64(i % 3)},
			{Metric: "vus", Kind: Gauge, Count: 2, Min: 1, Max: float64(2 + i), Last: 2},
		}})
	}
	return r
}
