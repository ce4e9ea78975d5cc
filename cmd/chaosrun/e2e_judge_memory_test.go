package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// judgeMemoryScenario asserts over the whole of a long results file: every
// request counted, the cash calls' p(99) and error rate.
const judgeMemoryScenario = `version: 1
name: judge-memory
services:
  ledger: {run: ledger}
workload:
  duration: %ds
  streams:
    cash:
      target: ledger
      path: /ledger/balance
      tags: {api: TransactCash, name: TransactCash}
      arrival: {rate: 100}
assertions:
  - name: all-counted
    metric: http_reqs
    window: all
    checks: ["count == %d"]
  - name: cash-fast
    metric: http_req_duration{api:TransactCash}
    window: all
    checks: ["p(99) < 1s"]
  - name: cash-errors
    metric: http_req_failed{api:TransactCash}
    window: all
    checks: ["rate < 0.6"]
`

// TestReliabilityJudgeMemoryBounded runs chaosrun judge in-process over
// a 16 MiB results file (seven minutes of windows as the extension writes
// them: twelve APIs with a 200 and a 503 each, k6's timings among them)
// and samples the heap while it does: what it finds live stays under half
// the file's size, the heap with its garbage under the file's size (here
// about 2 MiB live, 6 to 7 MiB in all; before, judge held every window
// decoded and a copy of them: 50 to 71 MiB live, 95 to 131 MiB in all),
// and every request of the file is counted. About 5 s.
func TestReliabilityJudgeMemoryBounded(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	size, seconds, requests := writeLongResults(t, results, 16<<20)
	file := writeScenario(t, fmt.Sprintf(judgeMemoryScenario, seconds, requests))
	start := time.Now()
	peak := sampleHeap(t, func() {
		code, so, se := runCLI(t, "judge", "--out-dir", filepath.Join(dir, "out"), file, results)
		if code != exitOK {
			t.Errorf("judge: exit %d, want %d\n%s\n%s", code, exitOK, so, se)
		}
	})
	t.Logf("a %d MiB results file (%d s, %d requests) judged in %s; the heap grew by %d MiB at most (%d MiB live)",
		size>>20, seconds, requests, time.Since(start).Round(time.Millisecond), peak.objects>>20, peak.live>>20)
	// Bounds with room for a collector slowed by a busy machine: the live
	// heap under half the file, the heap with its garbage under the file.
	if int64(peak.live) > size/2 || int64(peak.objects) > size {
		t.Errorf("judge's heap grew by %d MiB (%d MiB live) over a %d MiB results file, want under the file's size (live: under half)",
			peak.objects>>20, peak.live>>20, size>>20)
	}
}

// heapPeaks are how far the heap grew while a function ran, at its
// highest: its objects (HeapAlloc: live or not yet collected) and what the
// last garbage collection found live.
type heapPeaks struct{ objects, live uint64 }

// sampleHeap runs f and returns how far the heap grew above what it was
// before, sampled every millisecond without stopping the program
// (runtime/metrics, not ReadMemStats).
func sampleHeap(t *testing.T, f func()) heapPeaks {
	t.Helper()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	read := func() heapPeaks {
		metrics.Read(sample)
		return heapPeaks{sample[0].Value.Uint64(), sample[1].Value.Uint64()}
	}
	runtime.GC()
	base := read()
	var mu sync.Mutex
	peak := base
	see := func() {
		h := read()
		mu.Lock()
		peak = heapPeaks{max(peak.objects, h.objects), max(peak.live, h.live)}
		mu.Unlock()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				see()
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	see()
	return heapPeaks{peak.objects - base.objects, peak.live - base.live}
}

// writeLongResults writes a results file of at least size bytes as the
// extension writes one (hello, one window a second, end) and returns its
// size, how many seconds it covers and how many requests its windows count.
func writeLongResults(t *testing.T, path string, size int64) (written int64, seconds int, requests int64) {
	t.Helper()
	hists := make([]record.Series, 16)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range hists {
		hists[i] = latencies(t, rng, 40+i)
	}
	w, err := stream.Create(path, stream.Hello{K6: "v1.8.1", Extension: "v0.0.0-test"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for ; ; seconds++ {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= size {
			break
		}
		win, n := oneSecond(t0.Add(time.Duration(seconds)*time.Second), hists, seconds)
		requests += n
		if err := w.Window(win); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(0); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size(), seconds, requests
}

// oneSecond is one window: for twelve APIs, each with a 200 and a 503,
// http_req_duration and http_req_waiting (trends with their histograms),
// http_req_failed, http_reqs, data_sent and data_received; and vus. n is
// the requests it counts.
func oneSecond(start time.Time, hists []record.Series, s int) (w record.Window, n int64) {
	w.Start = start
	for i, api := range []string{"TransactCheck", "TransactCash", "Balance", "Transfer", "Deposit", "Withdraw",
		"Statement", "Login", "Logout", "Profile", "Search", "Health"} {
		for j, status := range []string{"200", "503"} {
			tags := map[string]string{"scenario": "cash", "name": api, "api": api, "status": status,
				"method": "POST", "expected_response": fmt.Sprint(status == "200")}
			h := hists[(s+i*2+j)%len(hists)]
			var failed int64
			if status != "200" {
				failed = h.Count
			}
			n += h.Count
			for _, metric := range []string{"http_req_duration", "http_req_waiting"} {
				trend := h
				trend.Metric, trend.Tags = metric, tags
				w.Series = append(w.Series, trend)
			}
			w.Series = append(w.Series,
				record.Series{Metric: "http_req_failed", Kind: record.Rate, Tags: tags, Count: h.Count, NonZero: failed},
				record.Series{Metric: "http_reqs", Kind: record.Counter, Tags: tags, Count: h.Count, Sum: float64(h.Count)},
				record.Series{Metric: "data_sent", Kind: record.Counter, Tags: tags, Count: h.Count, Sum: float64(180 * h.Count)},
				record.Series{Metric: "data_received", Kind: record.Counter, Tags: tags, Count: h.Count, Sum: float64(420 * h.Count)})
		}
	}
	w.Series = append(w.Series, record.Series{Metric: "vus", Kind: record.Gauge, Count: 1, Min: 40, Max: 40, Last: 40})
	return w, n
}

// latencies is a trend of n request durations between 2 and 80 ms, with
// its histogram.
func latencies(t *testing.T, rng *rand.Rand, n int) record.Series {
	t.Helper()
	s := record.Series{Kind: record.Trend, Count: int64(n), Min: 1e9}
	h := record.NewHist()
	for range n {
		v := 2 + rng.Float64()*78
		if err := h.RecordValue(int64(v * 1000)); err != nil {
			t.Fatal(err)
		}
		s.Sum += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	enc, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	s.Hist = enc
	return s
}
