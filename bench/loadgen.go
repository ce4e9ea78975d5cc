package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chaosrun/chaosrun/workloads/stream"
)

// loadStep is one trial of a load generator at one rate.
type loadStep struct {
	Arm      string  `json:"arm"`
	Rate     int     `json:"rate"`
	OK       bool    `json:"ok"`
	Achieved float64 `json:"achieved_per_s"`
	Requests int64   `json:"requests"`
	// Sent counts every request, the warm-up's too: what CPU and output
	// bytes are per.
	Sent    int64 `json:"sent,omitempty"`
	Dropped int64 `json:"dropped,omitempty"`
	Failed  int64 `json:"failed,omitempty"`
	// CPUus is the generator's CPU time per request (µs).
	CPUus float64 `json:"cpu_us_per_req"`
	// Bytes is what its results output wrote (file bytes, or stream bytes).
	Bytes int64   `json:"bytes,omitempty"`
	P99ms float64 `json:"p99_ms,omitempty"`
	Why   string  `json:"why,omitempty"`
	// Retry marks a repeated trial at a rate, after one failed by a hair.
	Retry bool `json:"retry,omitempty"`
}

// byAHair reports whether a failed trial came within 1% of its rate: a
// failure that a hiccup of a shared machine can cause, worth repeating.
func (s loadStep) byAHair() bool {
	return !s.OK && s.Achieved >= 0.99*float64(s.Rate) && float64(s.Dropped) <= 0.01*float64(s.Requests)
}

// stepWarmup is the load at the trial's rate that precedes each measured
// k6 step, so that the step starts with k6's VUs running.
const stepWarmup = time.Second

// k6Summary is what bench/k6/car.js's handleSummary writes.
type k6Summary struct {
	Iterations int64   `json:"iterations"`
	Dropped    int64   `json:"dropped"`
	Reqs       int64   `json:"reqs"`
	ReqsAll    int64   `json:"reqs_all"`
	Failed     int64   `json:"failed"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
}

// judgeOpen decides whether an open-model trial sustained its rate: nothing
// dropped, at most 0.1% errors and at least 99% of the planned requests.
func judgeOpen(rate int, dur time.Duration, requests, dropped, failed int64) (bool, string) {
	planned := float64(rate) * dur.Seconds()
	switch {
	case dropped > 0:
		return false, fmt.Sprintf("%d dropped iterations", dropped)
	case float64(failed) > 0.001*float64(max(requests, 1)):
		return false, fmt.Sprintf("%d of %d requests failed", failed, requests)
	case float64(requests) < 0.99*planned:
		return false, fmt.Sprintf("%d requests of %.0f planned", requests, planned)
	}
	return true, ""
}

// k6Args is the command line of one bench k6 run (without the binary).
func k6Args(script string, env map[string]string, extra ...string) []string {
	args := []string{"run", "--quiet", "--no-usage-report", "--no-color", "--address", ""}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-e", k+"="+env[k])
	}
	args = append(args, extra...)
	return append(args, script)
}

// k6Step runs bench/k6/car.js at rate against url. output is "" (none),
// "resilience" (the harness's stream receiver, as the runner does) or
// "json" (k6's own JSON output to a file).
func (b *bench) k6Step(ctx context.Context, bin, arm, url string, rate int, output string) (loadStep, error) {
	return b.k6ScriptStep(ctx, bin, arm, "car.js", url, rate, output)
}

// k6ScriptStep is k6Step with another of bench/k6's scripts, which takes
// the same environment and writes the same summary.
func (b *bench) k6ScriptStep(ctx context.Context, bin, arm, script, url string, rate int, output string) (loadStep, error) {
	st := loadStep{Arm: arm, Rate: rate}
	dur := b.cfg.step
	summary := filepath.Join(b.tmp, fmt.Sprintf("summary-%s-%d.json", arm, rate))
	// VUs for 100 ms of arrivals are ready before the start: a VU
	// initialised mid-run on a busy machine costs dropped iterations.
	vus := min(max(50, rate/10), 800)
	env := map[string]string{"TARGET": url, "RATE": strconv.Itoa(rate), "DURATION": dur.String(),
		"VUS": strconv.Itoa(vus), "MAX_VUS": strconv.Itoa(2 * vus), "SUMMARY": summary, "WARMUP": stepWarmup.String()}
	var extra []string
	var rec *stream.Receiver
	var relay *countingRelay
	jsonPath := filepath.Join(b.tmp, "k6-out.json")
	switch output {
	case "resilience":
		var err error
		if rec, err = stream.Listen(ctx); err != nil {
			return st, err
		}
		defer rec.Close()
		if relay, err = newCountingRelay(rec.Addr()); err != nil {
			return st, err
		}
		defer relay.Close()
		extra = []string{"--out", "resilience=tcp://" + relay.Addr()}
	case "json":
		extra = []string{"--out", "json=" + jsonPath}
		defer os.Remove(jsonPath)
	}
	res, err := runCmd(ctx, dur+2*time.Minute, b.tmp, []string{"K6_NO_USAGE_REPORT=true"}, bin,
		k6Args(filepath.Join(b.root, "bench", "k6", script), env, extra...)...)
	if err != nil {
		return st, err
	}
	if res.Code != 0 {
		return st, fmt.Errorf("k6 exited %d: %s", res.Code, lastLines(string(res.Out), 15))
	}
	var s k6Summary
	raw, err := os.ReadFile(summary)
	if err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err != nil {
		return st, fmt.Errorf("k6 summary: %w", err)
	}
	os.Remove(summary)
	st.Requests, st.Sent, st.Dropped, st.Failed, st.P99ms = s.Reqs, s.ReqsAll, s.Dropped, s.Failed, s.P99ms
	st.Achieved = float64(s.Iterations) / dur.Seconds()
	st.CPUus = perReq(res.CPU, s.ReqsAll)
	st.OK, st.Why = judgeOpen(rate, dur, s.Reqs, s.Dropped, s.Failed)
	switch output {
	case "resilience":
		_ = rec.Close()
		relay.Close()
		st.Bytes = relay.Bytes()
		sum := rec.Summary()
		if !sum.Ended || sum.Malformed > 0 || sum.Dropped > 0 {
			st.OK, st.Why = false, fmt.Sprintf("stream: ended %v, %d malformed lines, %d samples dropped", sum.Ended, sum.Malformed, sum.Dropped)
		}
	case "json":
		if fi, err := os.Stat(jsonPath); err == nil {
			st.Bytes = fi.Size()
		}
	}
	return st, nil
}

func perReq(cpu time.Duration, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / float64(n)
}

// vegetaReport is the part of `vegeta report -type json` the bench reads.
type vegetaReport struct {
	Requests   int64   `json:"requests"`
	Rate       float64 `json:"rate"`
	Throughput float64 `json:"throughput"`
	Success    float64 `json:"success"`
	Latencies  struct {
		P99 int64 `json:"99th"`
	} `json:"latencies"`
}

// vegetaStep runs `vegeta attack` at rate for one step and judges it like
// k6: the planned requests sent at the planned rate, at most 0.1% errors.
func (b *bench) vegetaStep(ctx context.Context, url string, rate int) (loadStep, error) {
	st := loadStep{Arm: "vegeta", Rate: rate}
	dur := b.cfg.step
	targets := filepath.Join(b.tmp, "vegeta-targets.txt")
	results := filepath.Join(b.tmp, "vegeta-results.bin")
	defer os.Remove(results)
	if err := os.WriteFile(targets, []byte("GET "+url+"\n"), 0o644); err != nil {
		return st, err
	}
	// -max-workers bounds vegeta past its ceiling, where unbounded workers collapse it.
	res, err := runCmd(ctx, dur+time.Minute, b.tmp, nil, b.vegeta, "attack", "-rate", strconv.Itoa(rate)+"/1s",
		"-duration", dur.String(), "-timeout", "10s", "-max-workers", "1000", "-targets", targets, "-output", results)
	if err != nil {
		return st, err
	}
	if res.Code != 0 {
		return st, fmt.Errorf("vegeta attack exited %d: %s", res.Code, lastLines(string(res.Out), 10))
	}
	rep, err := runCmd(ctx, time.Minute, b.tmp, nil, b.vegeta, "report", "-type", "json", results)
	if err != nil {
		return st, err
	}
	var r vegetaReport
	if err := json.Unmarshal(rep.Out, &r); err != nil {
		return st, fmt.Errorf("vegeta report: %w: %s", err, lastLines(string(rep.Out), 5))
	}
	failed := r.Requests - int64(r.Success*float64(r.Requests)+0.5)
	st.Requests, st.Failed, st.Achieved = r.Requests, failed, r.Rate
	st.P99ms = float64(r.Latencies.P99) / 1e6
	st.CPUus = perReq(res.CPU, r.Requests)
	st.OK, st.Why = judgeOpen(rate, dur, r.Requests, 0, failed)
	if st.OK && r.Rate < 0.98*float64(rate) {
		st.OK, st.Why = false, fmt.Sprintf("sent at %.0f/s", r.Rate)
	}
	return st, nil
}

// wrkResult is what the bench reads from wrk's text output.
type wrkResult struct {
	PerSec    float64
	Requests  int64
	Non2xx    int64
	SockErrs  int64
	P99ms     float64
	Connected bool
}

var (
	wrkRate    = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkTotal   = regexp.MustCompile(`(\d+) requests in`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkSockErr = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkP99     = regexp.MustCompile(`(?m)^\s+99%\s+([0-9.]+)(us|ms|s)\s*$`)
)

// parseWrk reads wrk's summary (with --latency for the percentiles).
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkRate.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("wrk: no Requests/sec in its output: %s", lastLines(out, 8))
	}
	r.PerSec, _ = strconv.ParseFloat(m[1], 64)
	if m := wrkTotal.FindStringSubmatch(out); m != nil {
		r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkSockErr.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			r.SockErrs += n
		}
	}
	if m := wrkP99.FindStringSubmatch(out); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		r.P99ms = v * map[string]float64{"us": 1e-3, "ms": 1, "s": 1e3}[m[2]]
	}
	r.Connected = r.Requests > 0
	return r, nil
}

// runWrk runs wrk (closed model) for d with conns connections on 2 threads.
func (b *bench) runWrk(ctx context.Context, url string, d time.Duration, conns int, script string) (wrkResult, runResult, error) {
	args := []string{"-t2", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(int(d.Seconds())) + "s", "--latency", "--timeout", "10s"}
	if script != "" {
		args = append(args, "-s", script)
	}
	res, err := runCmd(ctx, d+time.Minute, b.tmp, nil, b.wrk, append(args, url)...)
	if err != nil {
		return wrkResult{}, res, err
	}
	if res.Code != 0 {
		return wrkResult{}, res, fmt.Errorf("wrk exited %d: %s", res.Code, lastLines(string(res.Out), 8))
	}
	w, err := parseWrk(string(res.Out))
	return w, res, err
}

// countingRelay forwards TCP connections to an address and counts the
// bytes sent through it: what the results stream carries.
type countingRelay struct {
	ln    net.Listener
	to    string
	n     atomic.Int64
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func newCountingRelay(to string) (*countingRelay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &countingRelay{ln: ln, to: to}
	r.wg.Go(r.accept)
	return r, nil
}

func (r *countingRelay) Addr() string { return r.ln.Addr().String() }

// Bytes is how many bytes clients sent.
func (r *countingRelay) Bytes() int64 { return r.n.Load() }

func (r *countingRelay) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", r.to, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns = append(r.conns, c, up)
		r.mu.Unlock()
		r.wg.Go(func() {
			n, _ := io.Copy(up, c)
			r.n.Add(n)
			up.Close()
			c.Close()
		})
	}
}

// Close stops the relay; connections still open are cut.
func (r *countingRelay) Close() {
	r.ln.Close()
	r.mu.Lock()
	for _, c := range r.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseRead()
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// loadArm is one load generator under the rate search.
type loadArm struct {
	key, name string
	search    *RateSearch
	run       func(rate int) (loadStep, error)
}

// loadgenSection finds each generator's highest sustained rate on the
// bench's own server: wrk (closed model) as the ceiling, then k6 plain, k6
// with the results output, k6 with its JSON output, vegeta and the native
// engine (bare, and with smart clients and Zipf keys), searched in
// turn so that the arms share the machine's noise. A trial that failed by
// a hair is run up to twice more before it counts: one hiccup of a shared
// machine should not end a search.
func (b *bench) loadgenSection(ctx context.Context) (Section, error) {
	sec := Section{Name: "load generation (one local net/http server, separate process)"}
	url := b.server.URL() + "/ok"
	w, _, err := b.runWrk(ctx, url, b.cfg.step, 32, "")
	if err != nil {
		return sec, err
	}
	b.logf("  wrk: %.0f req/s (%d non-2xx, %d socket errors)", w.PerSec, w.Non2xx, w.SockErrs)
	steps := b.cfg.searchSteps
	k6Search := func() *RateSearch {
		return &RateSearch{Start: 4000, Max: 40000, MinStep: 250, Resolution: 0.05, MaxSteps: steps}
	}
	arms := []*loadArm{
		{key: "a", name: "(a) plain k6, constant-arrival-rate", search: k6Search(),
			run: func(r int) (loadStep, error) { return b.k6Step(ctx, b.plainK6, "a", url, r, "") }},
		{key: "b", name: "(b) k6 + xk6-resilience output to the harness", search: k6Search(),
			run: func(r int) (loadStep, error) { return b.k6Step(ctx, b.k6, "b", url, r, "resilience") }},
		{key: "c", name: "(c) k6 + its JSON output", search: k6Search(),
			run: func(r int) (loadStep, error) { return b.k6Step(ctx, b.plainK6, "c", url, r, "json") }},
		{key: "d", name: "(d) vegeta attack", search: &RateSearch{Start: 4000, Max: 80000, MinStep: 500, Resolution: 0.05, MaxSteps: steps},
			run: func(r int) (loadStep, error) { return b.vegetaStep(ctx, url, r) }},
		{key: "f", name: "(f) native engine", search: nativeSearch(steps),
			run: func(r int) (loadStep, error) { return b.nativeStep(ctx, "f", b.server.URL(), r, false) }},
		{key: "g", name: "(g) native engine, smart clients + Zipf keys", search: nativeSearch(steps),
			run: func(r int) (loadStep, error) { return b.nativeStep(ctx, "g", b.server.URL(), r, true) }},
	}
	if b.cfg.arms != "" {
		arms = slices.DeleteFunc(arms, func(a *loadArm) bool { return !slices.Contains(strings.Split(b.cfg.arms, ","), a.key) })
		b.notes = append(b.notes, "load generation: only arms "+b.cfg.arms+" searched")
	}
	all, err := b.searchArms(arms)
	if err != nil {
		return sec, err
	}
	all, err = b.nativeAtK6Rate(ctx, arms, all)
	if err != nil {
		return sec, err
	}
	// wrk's ceiling moves between runs: it is measured again after the
	// engines, and the higher of the two is the reference.
	w2, _, err := b.runWrk(ctx, url, b.cfg.step, 32, "")
	if err != nil {
		return sec, err
	}
	b.logf("  wrk again: %.0f req/s", w2.PerSec)
	ceiling := max(w.PerSec, w2.PerSec)
	raw := map[string]any{"wrk": w, "wrk_after": w2, "steps": all, "step_seconds": b.cfg.step.Seconds()}
	sec.Detail = raw
	best := func(key string) (loadStep, bool) {
		var top loadStep
		for _, s := range all {
			if s.Arm == key && s.OK && s.Rate > top.Rate {
				top = s
			}
		}
		return top, top.Rate > 0
	}
	bestOf := func(key string) int {
		for _, a := range arms {
			if a.key == key {
				return a.search.Best()
			}
		}
		return 0
	}
	a, b2, c, d := bestOf("a"), bestOf("b"), bestOf("c"), bestOf("d")
	sec.Rows = append(sec.Rows,
		Row{Name: "(e) wrk, closed model, 32 connections: ceiling", Value: ceiling, Unit: "req/s",
			Note: fmt.Sprintf("the higher of %.0f before the other arms and %.0f after", w.PerSec, w2.PerSec)},
		Row{Name: "(a) plain k6, constant-arrival-rate", Value: float64(a), Unit: "req/s", Ref: "(e) wrk", RefValue: ceiling, Note: b.plainNote},
		Row{Name: "(b) k6 + xk6-resilience output to the harness", Value: float64(b2), Unit: "req/s", Ref: "(a)", RefValue: float64(a), Goal: AtLeast(0.9)},
		Row{Name: "(c) k6 + its JSON output", Value: float64(c), Unit: "req/s", Ref: "(a)", RefValue: float64(a)},
		Row{Name: "(d) vegeta attack", Value: float64(d), Unit: "req/s", Ref: "(e) wrk", RefValue: ceiling},
	)
	sec.Rows = append(sec.Rows, nativeRows(all, a, d, bestOf("f"), bestOf("g"), ceiling)...)
	if slices.ContainsFunc(arms, func(x *loadArm) bool { return x.key == "f" }) {
		rate := 4000
		if s, _, ok := commonStep(all, "f", "a"); ok {
			rate = s.Rate
		}
		rows, prof, err := b.nativeProfileRows(ctx, rate)
		if err != nil {
			return sec, fmt.Errorf("native engine profiled at %d/s: %w", rate, err)
		}
		sec.Rows = append(sec.Rows, rows...)
		raw["native_profile"] = prof
	}
	sb, okB := best("b")
	sc, okC := best("c")
	if okB && okC {
		perK := func(s loadStep) float64 { return float64(s.Bytes) / float64(max(s.Requests, s.Sent, 1)) * 1000 }
		sec.Rows = append(sec.Rows,
			Row{Name: "(c) JSON output on disk, per 1k requests", Value: perK(sc) / 1024, Unit: "KiB"},
			Row{Name: "(b) results stream, per 1k requests", Value: perK(sb) / 1024, Unit: "KiB",
				Ref: "(c)", RefValue: perK(sc) / 1024, Goal: AtMost(0.01), Note: "streamed to the harness, nothing on disk"})
	}
	// CPU per request at the highest rate both (a) and (b) sustained.
	for _, pair := range [][2]string{{"b", "a"}, {"c", "a"}} {
		if s, r, ok := commonStep(all, pair[0], pair[1]); ok {
			sec.Rows = append(sec.Rows, Row{Name: fmt.Sprintf("(%s) k6 CPU per request at %d/s", pair[0], s.Rate),
				Value: s.CPUus, Unit: "µs", Ref: "(" + pair[1] + ")", RefValue: r.CPUus})
		}
	}
	return sec, nil
}

// commonStep returns the steps of arms x and ref at the highest rate both
// passed.
func commonStep(all []loadStep, x, ref string) (loadStep, loadStep, bool) {
	var bx, br loadStep
	for _, s := range all {
		if s.Arm != x || !s.OK || s.Rate <= bx.Rate {
			continue
		}
		for _, r := range all {
			if r.Arm == ref && r.OK && r.Rate == s.Rate {
				bx, br = s, r
			}
		}
	}
	return bx, br, bx.Rate > 0
}
