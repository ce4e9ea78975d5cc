package report

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the golden file (go test ./report -update rewrites it)\n--- got ---\n%s", name, got)
	}
}

// recorded loads a trimmed run record of bank-slow-vault from testdata/runs.
func recorded(t testing.TB, name string) *record.Run {
	t.Helper()
	r, err := record.ReadJSON(context.Background(), filepath.Join("testdata", "runs", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// synthAPI describes one API's load in a synthetic run.
type synthAPI struct {
	name string
	rate int
	// latency draws one latency in ms for second s of the run.
	latency func(rng *rand.Rand, s int) float64
	// fails says whether a request in second s failed.
	fails func(rng *rand.Rand, s int) bool
}

// synthRun builds a 30-second run with one fault "slow" during [10 s, 20 s),
// per-second windows of http_req_duration (with HDR histograms) and
// http_req_failed per API, and the given verdicts. Everything random comes
// from seed.
func synthRun(t testing.TB, seed uint64, apis []synthAPI, verdicts []record.Verdict) *record.Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &record.Run{SchemaVersion: record.SchemaVersion, Scenario: "synthetic", Seed: int64(seed), Testbed: "local",
		Start: start, End: start.Add(30 * time.Second), Planned: record.Duration(30 * time.Second), Verdicts: verdicts,
		Timings: record.Timings{Load: record.Duration(30 * time.Second)}}
	r.Faults = []record.FaultEvent{
		{Fault: "slow", Kind: "latency", Target: "a->b", Action: record.Applied, Scheduled: start.Add(10 * time.Second), Actual: start.Add(10 * time.Second)},
		{Fault: "slow", Kind: "latency", Target: "a->b", Action: record.Reverted, Scheduled: start.Add(20 * time.Second), Actual: start.Add(20 * time.Second)},
	}
	for s := range 30 {
		w := record.Window{Start: start.Add(time.Duration(s) * time.Second)}
		for _, a := range apis {
			h := record.NewHist()
			d := record.Series{Metric: "http_req_duration", Kind: record.Trend, Tags: map[string]string{"api": a.name}}
			f := record.Series{Metric: "http_req_failed", Kind: record.Rate, Tags: map[string]string{"api": a.name}}
			for i := range a.rate {
				v := a.latency(rng, s)
				if err := h.RecordValue(int64(v * 1000)); err != nil {
					t.Fatal(err)
				}
				if i == 0 || v < d.Min {
					d.Min = v
				}
				d.Max = max(d.Max, v)
				d.Sum += v
				d.Count++
				f.Count++
				if a.fails != nil && a.fails(rng, s) {
					f.NonZero++
				}
			}
			enc, err := record.EncodeHist(h)
			if err != nil {
				t.Fatal(err)
			}
			d.Hist = enc
			w.Series = append(w.Series, d, f)
		}
		r.Windows = append(r.Windows, w)
	}
	return r
}

// lognormal latency around median ms.
func lognormal(median float64) func(*rand.Rand, int) float64 {
	return func(rng *rand.Rand, _ int) float64 {
		return median * expNorm(rng, 0.3)
	}
}

func expNorm(rng *rand.Rand, sigma float64) float64 { return math.Exp(rng.NormFloat64() * sigma) }

// failDuring fails a fraction p of requests during the fault.
func failDuring(p float64) func(*rand.Rand, int) bool {
	return func(rng *rand.Rand, s int) bool { return s >= 10 && s < 20 && rng.Float64() < p }
}

// verdictDuring is a verdict on metric over the fault's window (offsets only:
// Compare reads the window, not the outcome).
func verdictDuring(name, metric, check string) record.Verdict {
	return record.Verdict{Assertion: name, Check: check, Metric: metric, Window: "during slow",
		From: record.Duration(10 * time.Second), To: record.Duration(20 * time.Second), Pass: true}
}
