package judge

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// t0 is load's start in the tests: a whole second.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// testScenario is 10 s of load with one fault (slow, +3s for 4s), a check
// that passes (no errors), one that fails during the fault (p99 < 100ms)
// and a count over the whole run.
func testScenario() *scenario.Scenario {
	sec := func(n int) scenario.Duration { return scenario.Duration(time.Duration(n) * time.Second) }
	return &scenario.Scenario{Name: "judge-test", Seed: 7,
		Workload: scenario.Workload{Duration: sec(10)},
		Faults:   []scenario.Fault{{Name: "slow", Kind: "latency", Edge: "a->b", Start: sec(3), Duration: sec(4)}},
		Assertions: []scenario.Assertion{
			{Name: "no-errors", Metric: "http_req_failed", Window: "during slow", Checks: []scenario.Check{{Threshold: "rate < 0.01"}}},
			{Name: "fast", Metric: "http_req_duration", Window: "during slow", Checks: []scenario.Check{{Threshold: "p(99) < 100ms"}}},
			{Name: "all-there", Metric: "http_reqs", Window: "all", Checks: []scenario.Check{{Threshold: "count == 200"}}},
		}}
}

// events is the fault timeline of testScenario's fault.
func events() []record.FaultEvent {
	return []record.FaultEvent{
		{Fault: "slow", Kind: "latency", Target: "a->b", Action: record.Applied, Scheduled: t0.Add(3 * time.Second), Actual: t0.Add(3 * time.Second)},
		{Fault: "slow", Kind: "latency", Target: "a->b", Action: record.Reverted, Scheduled: t0.Add(7 * time.Second), Actual: t0.Add(7 * time.Second)},
	}
}

// shardWindows are shard i of n's windows: 10 seconds of 20 requests
// each split between the shards (every nth), 500 ms each during the
// fault, 10 ms otherwise.
func shardWindows(t testing.TB, i, n int) []record.Window {
	t.Helper()
	var out []record.Window
	for s := range 10 {
		var vals []float64
		for r := range 20 {
			if r%n != i {
				continue
			}
			v := 10.0
			if s >= 3 && s < 7 {
				v = 500
			}
			vals = append(vals, v+float64(r))
		}
		start := t0.Add(time.Duration(s) * time.Second)
		out = append(out, record.Window{Start: start, Series: []record.Series{
			trend(t, "http_req_duration", vals),
			{Metric: "http_reqs", Kind: record.Counter, Count: int64(len(vals)), Sum: float64(len(vals))},
			{Metric: "http_req_failed", Kind: record.Rate, Count: int64(len(vals))},
		}})
	}
	return out
}

func trend(t testing.TB, metric string, vals []float64) record.Series {
	s := record.Series{Metric: metric, Kind: record.Trend, Count: int64(len(vals))}
	h := record.NewHist()
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
	enc, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	s.Hist = enc
	return s
}

// writeResults writes windows as a results file of shard; ended adds the
// end marker.
func writeResults(t testing.TB, dir, shard string, ws []record.Window, ended bool) string {
	t.Helper()
	path := filepath.Join(dir, "results-"+filepath.Base(shard)+".jsonl")
	if shard != "" {
		path = filepath.Join(dir, "results-"+shard[:1]+".jsonl")
	}
	w, err := stream.Create(path, stream.Hello{Extension: "test", Shard: shard})
	if err != nil {
		t.Fatal(err)
	}
	for _, win := range ws {
		if err := w.Window(win); err != nil {
			t.Fatal(err)
		}
	}
	if ended {
		err = w.End(0)
	} else {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// verdictsOf is "assertion check: pass/FAIL" per verdict.
func verdictsOf(r *record.Run) []string {
	var out []string
	for _, v := range r.Verdicts {
		res := "pass"
		if !v.Pass {
			res = "FAIL"
		}
		out = append(out, v.Assertion+" "+v.Check+": "+res)
	}
	return out
}

func writeFile(t testing.TB, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func scenarioDuration(d time.Duration) scenario.Duration { return scenario.Duration(d) }
