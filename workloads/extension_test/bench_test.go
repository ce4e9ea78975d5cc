package extension_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"
)

// BenchmarkExtensionOverhead runs plain k6 (xk6-resilience/bench/plain.js)
// and k6 + extension (bench/ext.js: smart client, Zipf keys, deadline and
// tier headers) against the same local server for the same 20 000
// iterations, alternating five times. It reports the median throughput of
// each, their ratio, and k6's CPU time per iteration (user + system, which
// other loads on the machine disturb less than wall-clock throughput).
// Run it alone:
//
//	go test -run '^$' -bench ExtensionOverhead -benchtime 1x ./workloads/extension_test/
func BenchmarkExtensionOverhead(b *testing.B) {
	k6Binary(b)
	srv := server(b)
	dir := b.TempDir()
	b.ResetTimer()
	const iterations, vus, rounds = 20000, 4, 5
	// exec runs a script for n iterations and returns wall time, k6 CPU and iterations done.
	exec := func(name string, n int) (time.Duration, time.Duration, float64) {
		summary := filepath.Join(dir, name+".json")
		start := time.Now()
		code, out, cpu := runK6CPU(b, map[string]string{"TARGET": srv.URL, "SUMMARY": summary,
			"ITERATIONS": strconv.Itoa(n), "VUS": strconv.Itoa(vus)},
			filepath.Join(repoRoot, "xk6-resilience", "bench", name+".js"))
		wall := time.Since(start)
		if code != 0 {
			b.Fatalf("%s: k6 exit %d:\n%s", name, code, out)
		}
		raw, err := os.ReadFile(summary)
		if err != nil {
			b.Fatal(err)
		}
		var s struct{ Iterations float64 }
		if err := json.Unmarshal(raw, &s); err != nil {
			b.Fatal(err)
		}
		if s.Iterations != float64(n) {
			b.Fatalf("%s: %v iterations, want %d", name, s.Iterations, n)
		}
		return wall, cpu, s.Iterations
	}
	// k6's start and end (parsing, VU init, summary) cost the same whatever
	// the iterations: measured with one iteration per VU and taken off.
	startup := map[string]time.Duration{}
	for _, name := range []string{"plain", "ext"} {
		_, cpu, _ := exec(name, vus)
		startup[name] = cpu
	}
	run := func(name string) (perSec float64, cpuPerIt time.Duration) {
		wall, cpu, n := exec(name, iterations)
		return n / wall.Seconds(), max(cpu-startup[name], 0) / (iterations - vus)
	}
	for range b.N {
		var plain, ext, ratios, cpuRatios, plainCPU, extCPU []float64
		for i := range rounds {
			p, pc := run("plain")
			e, ec := run("ext")
			plain, ext, ratios = append(plain, p), append(ext, e), append(ratios, e/p)
			plainCPU, extCPU = append(plainCPU, float64(pc.Nanoseconds())/1e3), append(extCPU, float64(ec.Nanoseconds())/1e3)
			cpuRatios = append(cpuRatios, float64(pc)/float64(ec))
			b.Logf("round %d: plain %.0f it/s (k6 CPU %s/it), ext %.0f it/s (k6 CPU %s/it): throughput ratio %.3f, CPU ratio %.3f",
				i+1, p, pc, e, ec, e/p, float64(pc)/float64(ec))
		}
		b.ReportMetric(median(plain), "plain-it/s")
		b.ReportMetric(median(ext), "ext-it/s")
		b.ReportMetric(median(ratios), "ext/plain-throughput")
		b.ReportMetric(median(plainCPU), "plain-k6-µs-cpu/it")
		b.ReportMetric(median(extCPU), "ext-k6-µs-cpu/it")
		b.ReportMetric(median(cpuRatios), "plain/ext-cpu")
		// Other loads only ever add CPU time: the least of each side is the
		// least disturbed estimate.
		b.ReportMetric(slices.Min(plainCPU)/slices.Min(extCPU), "plain/ext-min-cpu")
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
