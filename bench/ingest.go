package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/models/wire"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// Shape of the synthetic stream: what the xk6-resilience output sends for
// an HTTP workload, measured on a real k6 run (13 samples per request: 8
// trends, 1 rate, 4 counters), over four tag sets (two APIs × 200/503).
var (
	ingestTrends = []string{"http_req_duration", "http_req_waiting", "http_req_blocked", "http_req_connecting", "http_req_sending", "http_req_receiving", "http_req_tls_handshaking"}
)

// samplesPerRequest is how many k6 samples one request and its iteration make.
const samplesPerRequest = 13

// ingestTemplates is how many distinct windows the child encodes and cycles through.
const ingestTemplates = 8

// ingestCost is what one ingest child measured.
type ingestCost struct {
	Windows int   `json:"windows"`
	Samples int64 `json:"samples"`
	CPUns   int64 `json:"cpu_ns"`
	// HeapAfter is the live heap after a GC, the record written.
	HeapAfter uint64 `json:"heap_after_bytes"`
	// LogBytes is the window log on disk; RecordBytes the run record.
	LogBytes    int64 `json:"log_bytes"`
	RecordBytes int64 `json:"record_bytes"`
	// PeakHeap is the largest heap sampled while ingesting, garbage not
	// yet collected included. Retained is the largest heap left after a
	// forced GC at the checkpoints (every ingestCheckpoint windows, once
	// the receiver has caught up): what the harness keeps.
	PeakHeap uint64 `json:"peak_heap_bytes"`
	Retained uint64 `json:"retained_heap_bytes"`
	MaxRSS   int64  `json:"max_rss_bytes"`
}

// windowLines encodes n distinct window messages of a workload at rate
// requests per second, with a "%s" where the start goes.
func windowLines(n, rate int, seed uint64) ([]string, int64, error) {
	rng := rand.New(rand.NewPCG(seed, 1))
	type tagset struct {
		tags  map[string]string
		share float64
	}
	var sets []tagset
	for _, api := range []string{"Read", "Write"} {
		for _, st := range []struct {
			code  string
			share float64
		}{{"200", 0.47}, {"503", 0.03}} {
			sets = append(sets, tagset{map[string]string{"scenario": "load", "name": api, "api": api, "method": "GET",
				"status": st.code, "expected_response": strconv.FormatBool(st.code == "200")}, st.share})
		}
	}
	var lines []string
	var samples int64
	for range n {
		var series []wire.Series
		samples = 0
		for _, ts := range sets {
			count := int64(math.Round(float64(rate) * ts.share))
			for _, m := range ingestTrends {
				h := record.NewHist()
				s := wire.Series{Metric: m, Kind: wire.Trend, Tags: ts.tags, Count: count}
				for i := range count {
					v := 0.0
					switch m {
					case "http_req_duration", "http_req_waiting":
						v = 2 * math.Exp(0.8*rng.NormFloat64()) // ms, median 2
					case "http_req_tls_handshaking":
					default:
						v = 0.02 * rng.ExpFloat64()
					}
					mu := int64(math.Round(v * 1000))
					_ = h.RecordValue(mu)
					s.Sum += v
					if i == 0 || v < s.Min {
						s.Min = v
					}
					s.Max = max(s.Max, v)
				}
				enc, err := record.EncodeHist(h)
				if err != nil {
					return nil, 0, err
				}
				s.Hist = enc
				series = append(series, s)
			}
			series = append(series,
				wire.Series{Metric: "http_req_failed", Kind: wire.Rate, Tags: ts.tags, Count: count, NonZero: map[bool]int64{true: count}[ts.tags["status"] != "200"]},
				wire.Series{Metric: "http_reqs", Kind: wire.Counter, Tags: ts.tags, Count: count, Sum: float64(count)})
			samples += 9 * count
		}
		// Per iteration, tagged with the scenario only.
		it := record.NewHist()
		var itSum float64
		for range rate {
			v := 2.2 * math.Exp(0.8*rng.NormFloat64())
			_ = it.RecordValue(int64(math.Round(v * 1000)))
			itSum += v
		}
		enc, err := record.EncodeHist(it)
		if err != nil {
			return nil, 0, err
		}
		scen := map[string]string{"scenario": "load"}
		r := int64(rate)
		series = append(series,
			wire.Series{Metric: "iteration_duration", Kind: wire.Trend, Tags: scen, Count: r, Sum: itSum, Min: float64(it.Min()) / 1000, Max: float64(it.Max()) / 1000, Hist: enc},
			wire.Series{Metric: "iterations", Kind: wire.Counter, Tags: scen, Count: r, Sum: float64(r)},
			wire.Series{Metric: "data_sent", Kind: wire.Counter, Tags: scen, Count: r, Sum: 95 * float64(r)},
			wire.Series{Metric: "data_received", Kind: wire.Counter, Tags: scen, Count: r, Sum: 118 * float64(r)})
		samples += 4 * r
		b, err := wire.Line(wire.Window{Type: wire.TypeWindow, Start: "%s", Series: series})
		if err != nil {
			return nil, 0, err
		}
		lines = append(lines, string(b))
	}
	return lines, samples, nil
}

// ingestAssertions are what the ingest child evaluates over the whole run,
// as a scenario's assertions are.
var ingestAssertions = []scenario.Assertion{
	{Name: "read-p99", Metric: "http_req_duration{api:Read}", Checks: scenario.Checks("p(99) < 1s", "p(50) < 100ms")},
	{Name: "few-failures", Metric: "http_req_failed", Checks: scenario.Checks("rate < 0.1")},
	{Name: "throughput", Metric: "http_reqs", Checks: scenario.Checks("rate > 100")},
}

// ingestChildMain streams n one-second windows at rate requests/s through
// loopback TCP into the harness's stream receiver, then evaluates
// assertions over them and writes the run record, as a run does, and
// prints what it cost: CPU (this process, sender included) and heap.
func ingestChildMain(ctx context.Context, n, rate int, stdout io.Writer) error {
	lines, perWindow, err := windowLines(ingestTemplates, rate, 42)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "chaosrun-ingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	runtime.GC()
	var peak uint64
	stopSampling := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stopSampling:
				return
			case <-t.C:
			}
		}
	})
	cpu0 := selfCPU()
	wl, err := stream.CreateWindowLog(dir)
	if err != nil {
		return err
	}
	defer wl.Close()
	rec, err := stream.ListenWith(ctx, stream.Config{Log: wl, Keep: workloads.KeepMetric(&scenario.Scenario{Assertions: ingestAssertions})})
	if err != nil {
		return err
	}
	conn, err := net.Dial("tcp", rec.Addr())
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(conn, 64<<10)
	base := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	hello, err := wire.Line(wire.Hello{Type: wire.TypeHello, Version: wire.Version, K6: "v1.8.1", Extension: "bench"})
	if err != nil {
		return err
	}
	w.Write(hello)
	var retained uint64
	for i := range n {
		start := base.Add(time.Duration(i) * time.Second)
		w.WriteString(strings.Replace(lines[i%len(lines)], "%s", start.Format(time.RFC3339Nano), 1))
		if (i+1)%ingestCheckpoint == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
			heap, err := retainedAfter(rec, start)
			if err != nil {
				return err
			}
			retained = max(retained, heap)
		}
	}
	end, err := wire.Line(wire.End{Type: wire.TypeEnd})
	if err != nil {
		return err
	}
	w.Write(end)
	if err := w.Flush(); err != nil {
		return err
	}
	conn.Close()
	if !rec.WaitEnded(5 * time.Minute) {
		return fmt.Errorf("ingest: no end message received")
	}
	if err := rec.Close(); err != nil {
		return err
	}
	sum := rec.Summary()
	if sum.Malformed > 0 || sum.LogErr != nil || wl.Len() != n {
		return fmt.Errorf("ingest: %d windows logged of %d sent, %d malformed: %v %v", wl.Len(), n, sum.Malformed, sum.Errors, sum.LogErr)
	}
	run := &record.Run{SchemaVersion: record.SchemaVersion, Scenario: "ingest", Start: base, End: base.Add(time.Duration(n) * time.Second),
		Planned: record.Duration(time.Duration(n) * time.Second), Source: wl}
	if notes := assertions.Judge(&scenario.Scenario{Name: "ingest", Assertions: ingestAssertions}, run, nil); len(notes) > 0 {
		return fmt.Errorf("ingest: %s", strings.Join(notes, "; "))
	}
	for _, v := range run.Verdicts {
		if v.Error != "" || !v.Pass {
			return fmt.Errorf("ingest: assertion %s %s: observed %v, error %q", v.Assertion, v.Check, v.Observed, v.Error)
		}
	}
	recPath := filepath.Join(dir, "run.json")
	if err := record.WriteJSON(recPath, run); err != nil {
		return err
	}
	fi, err := os.Stat(recPath)
	if err != nil {
		return err
	}
	cpu := selfCPU() - cpu0
	close(stopSampling)
	wg.Wait()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return json.NewEncoder(stdout).Encode(ingestCost{Windows: n, Samples: perWindow * int64(n), CPUns: cpu.Nanoseconds(),
		HeapAfter: ms.HeapAlloc, PeakHeap: max(peak, ms.HeapAlloc), Retained: max(retained, ms.HeapAlloc), LogBytes: wl.Size(), RecordBytes: fi.Size()})
}

// ingestCheckpoint is how many windows the ingest child sends between
// measures of the heap it keeps.
const ingestCheckpoint = 30

// retainedAfter waits until the receiver has taken in the window that
// starts at last, then collects garbage and returns the heap left.
func retainedAfter(rec *stream.Receiver, last time.Time) (uint64, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		ws := rec.Windows()
		if len(ws) > 0 && !ws[len(ws)-1].Start.Before(last) {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("ingest: the receiver did not take in window %s within a minute", last.Format(time.RFC3339))
		}
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, nil
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ingestRounds is how many times each stream length is ingested; each
// figure is the median of its rounds.
const ingestRounds = 3

// ingestSection runs the ingest child for a 1-minute and a 10-minute
// stream at the same rate, each in a fresh process, alternating, and
// compares their medians.
func (b *bench) ingestSection(ctx context.Context) (Section, error) {
	const rate = 4000
	sec := Section{Name: "ingest (harness: stream receiver, window log, assertions, run record)"}
	run := func(windows int) (ingestCost, error) {
		res, err := runCmd(ctx, 5*time.Minute, "", nil, b.self, "-ingest-child", strconv.Itoa(windows), "-ingest-rate", strconv.Itoa(rate))
		if err != nil {
			return ingestCost{}, err
		}
		if res.Code != 0 {
			return ingestCost{}, fmt.Errorf("ingest child (%d windows): %s", windows, lastLines(string(res.Out), 5))
		}
		var c ingestCost
		if err := json.Unmarshal(res.Out, &c); err != nil {
			return c, fmt.Errorf("ingest child output: %w: %s", err, lastLines(string(res.Out), 3))
		}
		c.MaxRSS = res.MaxRSS * 1024
		return c, nil
	}
	var shorts, longs []ingestCost
	for range ingestRounds {
		for _, n := range []int{60, 600} {
			c, err := run(n)
			if err != nil {
				return sec, err
			}
			if n == 60 {
				shorts = append(shorts, c)
			} else {
				longs = append(longs, c)
			}
		}
	}
	short, long := medianCost(shorts), medianCost(longs)
	sec.Detail = map[string]any{"rate_per_s": rate, "samples_per_request": samplesPerRequest, "rounds": ingestRounds,
		"one_minute": shorts, "ten_minutes": longs}
	perM := func(c ingestCost) float64 { return float64(c.CPUns) / 1e6 / (float64(c.Samples) / 1e6) }
	runMsPerM := 1e6 / float64(rate*samplesPerRequest) * 1000
	mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
	perMSamples := func(v int64) float64 { return float64(v) / (1 << 10) / (float64(long.Samples) / 1e6) }
	sec.Rows = append(sec.Rows,
		Row{Name: fmt.Sprintf("harness CPU per 1M samples (10-min stream, %d req/s)", rate), Value: perM(long), Unit: "ms",
			Ref: "run time holding 1M samples, ms", RefValue: runMsPerM, Note: "ratio: share of one core"},
		Row{Name: "peak RSS, 10-min run", Value: float64(long.MaxRSS) / (1 << 20), Unit: "MiB", Ref: "1-min run", RefValue: float64(short.MaxRSS) / (1 << 20), Goal: AtMost(1.1),
			Note: fmt.Sprintf("median of %d rounds", ingestRounds)},
		Row{Name: "heap kept (after a GC, every 30 windows), 10-min run, largest", Value: mib(long.Retained), Unit: "MiB", Ref: "1-min run", RefValue: mib(short.Retained), Goal: AtMost(1.1)},
		Row{Name: "peak heap with garbage not yet collected, 10-min run", Value: mib(long.PeakHeap), Unit: "MiB", Ref: "1-min run", RefValue: mib(short.PeakHeap),
			Note: "set by GC pacing, not by what is kept"},
		Row{Name: "heap after the run, 10-min run", Value: mib(long.HeapAfter), Unit: "MiB", Ref: "1-min run", RefValue: mib(short.HeapAfter)},
		Row{Name: "run record on disk per 1M samples", Value: perMSamples(long.RecordBytes), Unit: "KiB",
			Note: "detail timings no assertion reads are dropped on arrival"},
		Row{Name: "window log on disk per 1M samples (unlinked, freed with the record)", Value: perMSamples(long.LogBytes), Unit: "KiB"},
	)
	return sec, nil
}

// medianCost is the median of each figure over rounds, taken separately.
func medianCost(rounds []ingestCost) ingestCost {
	med := func(f func(ingestCost) float64) float64 {
		v := make([]float64, len(rounds))
		for i, c := range rounds {
			v[i] = f(c)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	c := rounds[0]
	c.CPUns = int64(med(func(c ingestCost) float64 { return float64(c.CPUns) }))
	c.HeapAfter = uint64(med(func(c ingestCost) float64 { return float64(c.HeapAfter) }))
	c.PeakHeap = uint64(med(func(c ingestCost) float64 { return float64(c.PeakHeap) }))
	c.Retained = uint64(med(func(c ingestCost) float64 { return float64(c.Retained) }))
	c.MaxRSS = int64(med(func(c ingestCost) float64 { return float64(c.MaxRSS) }))
	return c
}
