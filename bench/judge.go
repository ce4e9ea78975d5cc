package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/chaosrun/chaosrun/judge"
	"github.com/chaosrun/chaosrun/models/wire"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
)

// The judge section feeds one receive-only judge (judge.Receive: the
// stream receiver, exact merge, window log, assertions) judgeShards
// simulated shard streams over loopback, one window a second each, in
// real time, from a separate sender process; it measures the judge's
// process only.
// judgeShards is how many shards stream (-judge-shards, for trying).
var judgeShards = 1000

const (
	// judgeShardRate is each shard's requests a second: 20k req/s in all.
	judgeShardRate = 20
	judgeToken     = "bench-judge-token"
)

// judgeLengths are the two run lengths whose memory is compared, seconds.
var judgeLengths = []int{30, 90}

// judgeCost is what one judge child measured.
type judgeCost struct {
	Shards  int   `json:"shards"`
	Seconds int   `json:"seconds"`
	Windows int   `json:"windows"`
	Series  int   `json:"series_per_shard_window"`
	CPUns   int64 `json:"cpu_ns"`
	WallNs  int64 `json:"wall_ns"`
	// Retained is the largest heap left after a forced GC, sampled every
	// 10 s; PeakHeap the largest heap seen, garbage included; MaxRSS the
	// process's peak resident set (VmHWM) when the judge returned.
	Retained uint64 `json:"retained_heap_bytes"`
	PeakHeap uint64 `json:"peak_heap_bytes"`
	MaxRSS   int64  `json:"max_rss_bytes"`
	// Exact says every merged window equals the reference merged
	// directly from what the shards sent.
	Exact    bool   `json:"exact"`
	Mismatch string `json:"mismatch,omitempty"`
}

// judgeScenario is what the judge child judges: ingest's assertions over
// the run's length.
func judgeScenarioOf(secs int) *scenario.Scenario {
	return &scenario.Scenario{Name: "bench-judge", Workload: scenario.Workload{Duration: scenario.Duration(time.Duration(secs) * time.Second)},
		Assertions: ingestAssertions}
}

// judgeTemplates are the window lines a shard sends, cycled: shard i
// sends template (i+s) mod len at second s.
func judgeTemplates() ([]string, error) {
	lines, _, err := windowLines(ingestTemplates, judgeShardRate, 7)
	return lines, err
}

// judgeChildMain runs one judge for secs seconds of judgeShards shards,
// with the sender as a process of its own, and prints what it cost.
func judgeChildMain(ctx context.Context, self string, secs int, stdout io.Writer) error {
	tmpl, err := judgeTemplates()
	if err != nil {
		return err
	}
	sc := judgeScenarioOf(secs)
	addrs := make(chan string, 2)
	o := judge.ReceiveOptions{Listen: "127.0.0.1:0", Token: judgeToken, Shards: judgeShards, Wait: time.Minute, Margin: 30 * time.Second,
		OnListen: func(what, addr string) {
			if what == "results streams" {
				addrs <- addr
			}
		}}
	peak, stopSampling := sampleHeap()
	cpu0, t0 := selfCPU(), time.Now()
	type result struct {
		rec *record.Run
		err error
	}
	done := make(chan result, 1)
	go func() {
		rec, err := judge.Receive(ctx, sc, o)
		done <- result{rec, err}
	}()
	sender := exec.CommandContext(ctx, self, "-judge-send", <-addrs, "-judge-secs", strconv.Itoa(secs), "-judge-shards", strconv.Itoa(judgeShards))
	sender.Stderr = os.Stderr
	if err := sender.Start(); err != nil {
		return err
	}
	res := <-done
	cpu, wall := selfCPU()-cpu0, time.Since(t0)
	retained := stopSampling()
	rss := vmHWM()
	if err := sender.Wait(); err != nil {
		return fmt.Errorf("sender: %w", err)
	}
	if res.err != nil {
		return res.err
	}
	defer res.rec.Close()
	if res.rec.Incomplete {
		return fmt.Errorf("judge: incomplete: %v", res.rec.Problems)
	}
	c := judgeCost{Shards: judgeShards, Seconds: secs, CPUns: cpu.Nanoseconds(), WallNs: wall.Nanoseconds(), Retained: retained, PeakHeap: *peak, MaxRSS: rss}
	c.Windows, c.Series, c.Mismatch, err = checkMerge(res.rec, tmpl)
	c.Exact = err == nil && c.Mismatch == "" && c.Windows == secs
	if err != nil {
		c.Mismatch = err.Error()
	}
	return json.NewEncoder(stdout).Encode(c)
}

// sampleHeap samples the heap (garbage included) every 10 ms into peak,
// and the heap kept after a forced GC every 10 s; stop ends it and
// returns the largest kept heap.
func sampleHeap() (peak *uint64, stop func() uint64) {
	peak = new(uint64)
	var retained uint64
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		next := time.Now().Add(10 * time.Second)
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			if time.Now().After(next) {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				retained = max(retained, ms.HeapAlloc)
				next = time.Now().Add(10 * time.Second)
			}
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	})
	return peak, func() uint64 { close(quit); wg.Wait(); return retained }
}

// vmHWM is this process's peak resident set, from /proc/self/status.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// checkMerge compares each of the record's windows with the windows the
// shards sent for its second merged directly (record.MergeWindows): the
// same series, byte for byte once encoded. It returns the windows seen,
// the series a shard window holds, and the first difference.
func checkMerge(rec *record.Run, tmpl []string) (windows, series int, mismatch string, err error) {
	sent := make([]record.Window, len(tmpl))
	for i, l := range tmpl {
		var msg struct {
			Series []record.Series `json:"series"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			return 0, 0, "", err
		}
		sent[i].Series = msg.Series
	}
	series = len(sent[0].Series)
	keep := judgeKeep()
	var first time.Time
	err = rec.EachWindow(func(w record.Window) error {
		if first.IsZero() {
			first = w.Start
		}
		s := int(w.Start.Sub(first) / time.Second)
		parts := make([]record.Window, 0, judgeShards)
		for i := range judgeShards {
			t := sent[(i+s)%len(sent)]
			var kept []record.Series
			for _, sr := range t.Series {
				if keep(sr.Metric) {
					kept = append(kept, sr)
				}
			}
			parts = append(parts, record.Window{Start: w.Start, Series: kept})
		}
		ref, err := record.MergeWindows(parts)
		if err != nil {
			return err
		}
		if d := sameHists(w, parts); d != "" && mismatch == "" {
			mismatch = fmt.Sprintf("window %s (second %d): %s", w.Start.Format(time.RFC3339), s, d)
		}
		if d := sameWindow(w, ref[0]); d != "" && mismatch == "" {
			mismatch = fmt.Sprintf("window %s (second %d) differs from the reference merge: %s", w.Start.Format(time.RFC3339), s, d)
		}
		windows++
		return nil
	})
	return windows, series, mismatch, err
}

// sameWindow says how two merged windows differ: in anything, byte for
// byte once encoded, but the sums, which may differ in their last bits
// (float addition in another order: streams arrive in any order) and must
// agree within 1e-12 relative.
func sameWindow(a, b record.Window) string {
	if len(a.Series) != len(b.Series) {
		return fmt.Sprintf("%d series, want %d", len(a.Series), len(b.Series))
	}
	a.Series, b.Series = slices.Clone(a.Series), slices.Clone(b.Series)
	for i := range a.Series {
		x, y := &a.Series[i], &b.Series[i]
		if math.Abs(x.Sum-y.Sum) > 1e-12*math.Max(math.Abs(x.Sum), math.Abs(y.Sum)) {
			return fmt.Sprintf("%s: sum %v, want %v", x.Metric, x.Sum, y.Sum)
		}
		x.Sum, y.Sum = 0, 0
	}
	ga, _ := json.Marshal(a)
	gb, _ := json.Marshal(b)
	if !bytes.Equal(ga, gb) {
		return "series differ (count, min, max, histogram or tags)"
	}
	return ""
}

// sameHists checks each merged histogram against the parts' histograms
// merged directly with hdrhistogram (not through record's merge).
func sameHists(w record.Window, parts []record.Window) string {
	key := func(s record.Series) string {
		b, _ := json.Marshal([]any{s.Metric, s.Kind, s.Tags})
		return string(b)
	}
	direct := map[string]*hdrhistogram.Histogram{}
	for _, p := range parts {
		for _, s := range p.Series {
			if s.Hist == "" {
				continue
			}
			h, err := record.DecodeHist(s.Hist)
			if err != nil {
				return err.Error()
			}
			if d := direct[key(s)]; d != nil {
				d.Merge(h)
			} else {
				direct[key(s)] = h
			}
		}
	}
	for _, s := range w.Series {
		d := direct[key(s)]
		if d == nil {
			continue
		}
		h, err := record.DecodeHist(s.Hist)
		if err != nil {
			return err.Error()
		}
		if !h.Equals(d) {
			return s.Metric + ": the merged histogram differs from the direct merge"
		}
	}
	return ""
}

// judgeKeep is the judge's metric filter for the bench scenario.
func judgeKeep() func(string) bool {
	return workloads.KeepMetric(judgeScenarioOf(1))
}

// judgeSendMain streams judgeShards shards to addr, each on its own
// connection with its name in the hello, one window a second each for
// secs seconds, then their ends.
func judgeSendMain(ctx context.Context, addr string, secs int) error {
	tmpl, err := judgeTemplates()
	if err != nil {
		return err
	}
	conns := make([]*bufio.Writer, judgeShards)
	for i := range judgeShards {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
		defer c.Close()
		w := bufio.NewWriterSize(c, 16<<10)
		hello, err := wire.Line(wire.Hello{Type: wire.TypeHello, Version: wire.Version, Extension: "bench", Shard: fmt.Sprintf("%d/%d", i, judgeShards), Token: judgeToken})
		if err != nil {
			return err
		}
		w.Write(hello)
		if err := w.Flush(); err != nil {
			return err
		}
		// The welcome.
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			return fmt.Errorf("shard %d: no welcome: %w", i, err)
		}
		conns[i] = w
	}
	base := time.Now().Truncate(time.Second)
	for s := range secs {
		if err := sleepUntil(ctx, base.Add(time.Duration(s+1)*time.Second)); err != nil {
			return err
		}
		start := base.Add(time.Duration(s) * time.Second).UTC().Format(time.RFC3339Nano)
		for i, w := range conns {
			w.WriteString(strings.Replace(tmpl[(i+s)%len(tmpl)], "%s", start, 1))
			if err := w.Flush(); err != nil {
				return fmt.Errorf("shard %d: %w", i, err)
			}
		}
	}
	for i, w := range conns {
		w.WriteString(`{"type":"end","dropped":0}` + "\n")
		if err := w.Flush(); err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return nil
}

func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(t)):
		return nil
	}
}

// judgeSection runs the judge child at two run lengths.
func (b *bench) judgeSection(ctx context.Context) (Section, error) {
	sec := Section{Name: fmt.Sprintf("judge (receive-only: %d simulated shard streams, one window a second each)", judgeShards)}
	var costs []judgeCost
	for _, secs := range judgeLengths {
		res, err := runCmd(ctx, time.Duration(secs)*time.Second+3*time.Minute, "", nil, b.self, "-judge-child", strconv.Itoa(secs), "-judge-shards", strconv.Itoa(judgeShards))
		if err != nil {
			return sec, err
		}
		if res.Code != 0 {
			return sec, fmt.Errorf("judge child (%d s): %s", secs, lastLines(string(res.Out), 5))
		}
		var c judgeCost
		if err := json.Unmarshal(res.Out, &c); err != nil {
			return sec, fmt.Errorf("judge child output: %w: %s", err, lastLines(string(res.Out), 3))
		}
		b.logf("  %d s: %.2f cores, kept heap %.1f MiB, RSS %.1f MiB, exact %v", secs, float64(c.CPUns)/float64(c.WallNs),
			float64(c.Retained)/(1<<20), float64(c.MaxRSS)/(1<<20), c.Exact)
		costs = append(costs, c)
	}
	short, long := costs[0], costs[1]
	mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
	exact := 0.0
	if short.Exact && long.Exact {
		exact = 1
	}
	sec.Detail = map[string]any{"shards": judgeShards, "rate_per_shard": judgeShardRate, "runs": costs}
	sec.Rows = append(sec.Rows,
		Row{Name: fmt.Sprintf("judge CPU, %d shards × 1 window/s (%d series each), %d-s run", judgeShards, long.Series, long.Seconds),
			Value: float64(long.CPUns) / float64(long.WallNs), Unit: "cores", Goal: ValueAtMost(1),
			Note: fmt.Sprintf("%d-s run: %.2f cores", short.Seconds, float64(short.CPUns)/float64(short.WallNs))},
		Row{Name: fmt.Sprintf("judge peak RSS, %d-s run", long.Seconds), Value: float64(long.MaxRSS) / (1 << 20), Unit: "MiB",
			Ref: fmt.Sprintf("%d-s run", short.Seconds), RefValue: float64(short.MaxRSS) / (1 << 20), Goal: AtMost(1.1)},
		Row{Name: fmt.Sprintf("judge heap kept (after a GC, every 10 s), %d-s run", long.Seconds), Value: mib(long.Retained), Unit: "MiB",
			Ref: fmt.Sprintf("%d-s run", short.Seconds), RefValue: mib(short.Retained), Goal: AtMost(1.1)},
		Row{Name: "merged windows equal to the reference merged directly (both runs)", Value: exact, Unit: "",
			Ref: "all", RefValue: 1, Goal: AtLeast(1)},
	)
	return sec, nil
}
