package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/keys"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/native"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// The native engine's streams in the bench: the warm-up at the step's rate,
// then the measured load (their scenario tags).
const (
	nativeWarmup = "warmup"
	nativeLoad   = "load"
)

// nativeSeed seeds the bench's key streams and client jitter.
const nativeSeed = 24

// nativeStream is one stream of GETs of url at rate from start for dur,
// with the timeout the other generators get (10 s). smart adds what a
// scenario's realistic stream has: Zipf keys over a million (100 hot), the
// key's class as a tag, and the smart client model (retries with budget,
// breaker, back-pressure, a 2 s deadline sent as a header, a tier).
func nativeStream(name, url string, rate int, start, dur time.Duration, smart bool) native.Stream {
	st := native.Stream{Name: name, Targets: []string{url}, Method: "GET", Path: "/ok", Timeout: 10 * time.Second,
		Arrival: arrival.Constant(float64(rate), start, dur), Tags: map[string]string{"name": "bench"}}
	if smart {
		st.Path = "/ok?key={key}"
		st.Keys = map[string]native.Keys{"key": {Config: keys.Config{Kind: keys.Zipf, N: 1 << 20, S: 1.1, HotKeys: 100, Seed: nativeSeed}, Prefix: "k"}}
		st.Tags["key_class"] = "{key.class}"
		cfg := client.Defaults(client.ModelSmart)
		cfg.Deadline = 2 * time.Second
		st.Client = &native.Client{Config: cfg, Tier: "critical", Headers: client.DefaultHeaderNames}
	}
	return st
}

// nativeStepSpec is one rate-search step: stepWarmup of load at rate (not
// judged), then the step's load at the same rate; the measured stream
// reuses the warm-up's connections.
func nativeStepSpec(base string, rate int, dur time.Duration, smart bool) native.Spec {
	return native.Spec{Seed: nativeSeed, Streams: []native.Stream{
		nativeStream(nativeWarmup, base, rate, 0, stepWarmup, smart),
		nativeStream(nativeLoad, base, rate, stepWarmup, dur, smart),
	}}
}

// nativeRun runs spec with `chaosrun load` (what the harness starts per
// shard), its windows streamed to a receiver in the bench; onStart, if
// set, runs once the stream's hello arrived; extra are more flags of load.
// The result's CPU is the load process's own (rusage).
func (b *bench) nativeRun(ctx context.Context, spec native.Spec, onStart func(context.Context) error, extra ...string) (stream.Summary, runResult, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return stream.Summary{}, runResult{}, err
	}
	path := filepath.Join(b.tmp, "native-spec.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return stream.Summary{}, runResult{}, err
	}
	defer os.Remove(path)
	var res runResult
	var end time.Duration
	for _, st := range spec.Streams {
		end = max(end, st.Arrival.End())
	}
	sum, err := b.withReceiver(ctx, onStart, func(addr string) error {
		var err error
		args := append([]string{"load", "--spec", path, "--results", "tcp://" + addr}, extra...)
		res, err = runCmd(ctx, end+time.Minute, b.tmp, nil, b.chaosrun, args...)
		if err == nil && res.Code != 0 {
			err = fmt.Errorf("chaosrun load exited %d: %s", res.Code, lastLines(string(res.Out), 10))
		}
		return err
	})
	return sum, res, err
}

// seriesTotals sums, over windows, the count or sum of the series of
// metric whose scenario tag is scenario: what a rate step is judged on.
type seriesTotals struct {
	reqs, failed, dropped, iterations int64
}

func totalsOf(ws []record.Window, scenario string) seriesTotals {
	var t seriesTotals
	for _, w := range ws {
		for _, s := range w.Series {
			if s.Tags["scenario"] != scenario {
				continue
			}
			switch s.Metric {
			case "http_reqs":
				t.reqs += int64(s.Sum)
			case "http_req_failed":
				t.failed += s.NonZero
			case "dropped_iterations":
				t.dropped += int64(s.Sum)
			case "iterations":
				t.iterations += int64(s.Sum)
			}
		}
	}
	return t
}

// nativeStep runs the native engine at rate against url for one step and
// judges it as k6's steps are (judgeOpen on the measured stream).
func (b *bench) nativeStep(ctx context.Context, arm, base string, rate int, smart bool) (loadStep, error) {
	return b.nativeSpecStep(ctx, arm, rate, nativeStepSpec(base, rate, b.cfg.step, smart), totalsOf, "http_req_duration")
}

// nativeSpecStep runs spec (a warm-up stream, then the measured one at
// rate for a step) and judges the measured stream as k6's steps are; totals
// counts a stream's requests, latency names its duration metric.
func (b *bench) nativeSpecStep(ctx context.Context, arm string, rate int, spec native.Spec, totals func([]record.Window, string) seriesTotals, latency string) (loadStep, error) {
	st := loadStep{Arm: arm, Rate: rate}
	dur := b.cfg.step
	sum, res, err := b.nativeRun(ctx, spec, nil)
	if err != nil {
		return st, err
	}
	load, warm := totals(sum.Windows, nativeLoad), totals(sum.Windows, nativeWarmup)
	st.Requests, st.Sent, st.Dropped, st.Failed = load.reqs, load.reqs+warm.reqs, load.dropped, load.failed
	st.Achieved = float64(load.iterations) / dur.Seconds()
	st.CPUus = perReq(res.CPU, st.Sent)
	if h, err := windowsHist(scenarioWindows(sum.Windows, nativeLoad), latency); err == nil && h.TotalCount() > 0 {
		st.P99ms = float64(h.ValueAtQuantile(99)) / 1000
	}
	st.OK, st.Why = judgeOpen(rate, dur, load.reqs, load.dropped, load.failed)
	if st.OK && sum.Dropped > 0 {
		st.OK, st.Why = false, fmt.Sprintf("%d samples lost", sum.Dropped)
	}
	return st, nil
}

// scenarioWindows keeps the series of one scenario tag.
func scenarioWindows(ws []record.Window, scenario string) []record.Window {
	out := make([]record.Window, 0, len(ws))
	for _, w := range ws {
		k := record.Window{Start: w.Start}
		for _, s := range w.Series {
			if s.Tags["scenario"] == scenario {
				k.Series = append(k.Series, s)
			}
		}
		out = append(out, k)
	}
	return out
}

// nativeSearch is the rate search of a native arm: vegeta's bounds.
func nativeSearch(steps int) *RateSearch {
	return &RateSearch{Start: 4000, Max: 80000, MinStep: 500, Resolution: 0.05, MaxSteps: steps}
}

// nativeRows are the native arms' figures against plain k6 (a), vegeta
// (d), wrk's ceiling (e) and each other, from the same run's searches and
// steps.
func nativeRows(all []loadStep, a, d, f, g int, ceiling float64) []Row {
	rows := []Row{
		{Name: "(f) native engine (chaosrun load), open model", Value: float64(f), Unit: "req/s", Ref: "(a) plain k6", RefValue: float64(a), Goal: AtLeast(3)},
		{Name: "(f) native engine, against vegeta", Value: float64(f), Unit: "req/s", Ref: "(d) vegeta", RefValue: float64(d), Goal: AtLeast(0.8)},
		{Name: "(f) native engine, against wrk's ceiling", Value: float64(f), Unit: "req/s", Ref: "(e) wrk", RefValue: ceiling, Goal: AtLeast(0.6),
			Note: "open model against wrk's closed loop"},
		{Name: "(g) native engine, smart clients + Zipf keys", Value: float64(g), Unit: "req/s", Ref: "(f) bare", RefValue: float64(f), Goal: AtLeast(0.9)},
	}
	if s, r, ok := commonStep(all, "f", "a"); ok {
		rows = append(rows, Row{Name: "(f) native CPU per request at " + strconv.Itoa(s.Rate) + "/s", Value: s.CPUus, Unit: "µs",
			Ref: "(a) plain k6", RefValue: r.CPUus, Goal: AtMost(0.2), Note: "load process's rusage, warm-up included"})
	}
	if s, r, ok := commonStep(all, "g", "f"); ok {
		rows = append(rows, Row{Name: "(g) native CPU per request at " + strconv.Itoa(s.Rate) + "/s", Value: s.CPUus, Unit: "µs",
			Ref: "(f) bare", RefValue: r.CPUus})
	}
	return rows
}

// memOutput keeps an in-process engine's windows.
type memOutput struct{ windows []record.Window }

func (m *memOutput) Window(w record.Window) error { m.windows = append(m.windows, w); return nil }
func (m *memOutput) End(int64) error              { return nil }

// nativeAccuracy runs the engine in this process at 1000/s on /spread for
// dur and compares its windows' quantiles with the exact durations of the
// same requests, as the collector saw them (native.Options.Tap).
func (b *bench) nativeAccuracy(ctx context.Context, dur time.Duration) ([]Row, map[string]any, error) {
	st := nativeStream("spread", b.server.URL(), 1000, 0, dur, false)
	st.Path = "/spread"
	var exact []float64
	out := &memOutput{}
	opts := native.Options{Tap: func(_ string, _ int, d time.Duration) { exact = append(exact, float64(d)/1e6) }}
	if _, err := native.RunWith(ctx, native.Spec{Seed: nativeSeed, Streams: []native.Stream{st}}, native.Shard{}, out, opts); err != nil {
		return nil, nil, err
	}
	h, err := windowsHist(out.windows, "http_req_duration")
	if err != nil {
		return nil, nil, err
	}
	if h.TotalCount() != int64(len(exact)) || len(exact) == 0 {
		return nil, nil, fmt.Errorf("native: the windows hold %d durations, the tap saw %d", h.TotalCount(), len(exact))
	}
	slices.Sort(exact)
	detail := map[string]any{"requests": len(exact)}
	var rows []Row
	for _, q := range accuracyQuantiles {
		e := exactQuantile(exact, q)
		got := float64(h.ValueAtQuantile(q)) / 1000
		name := "p" + strconv.FormatFloat(q, 'f', -1, 64)
		detail[name] = map[string]float64{"exact_ms": e, "windows_ms": got}
		rows = append(rows, Row{Name: fmt.Sprintf("native: %s from its windows (%d requests)", name, len(exact)),
			Value: got, Unit: "ms", Ref: "exact, same requests", RefValue: e, Goal: Within(0.01)})
	}
	return rows, detail, nil
}

// nativeStall runs `chaosrun load` at 200/s for 8 s with the server
// stalled for 1 s, 3 s in (as the k6 open-model run), and returns its p99,
// max (ms) and request count from its windows.
func (b *bench) nativeStall(ctx context.Context) (p99, maxMs float64, n int64, err error) {
	spec := native.Spec{Seed: nativeSeed, Streams: []native.Stream{nativeStream(nativeLoad, b.server.URL(), 200, 0, 8*time.Second, false)}}
	sum, _, err := b.nativeRun(ctx, spec, func(ctx context.Context) error { return b.stallAfter(ctx, 3*time.Second) })
	if err != nil {
		return 0, 0, 0, err
	}
	h, err := windowsHist(sum.Windows, "http_req_duration")
	if err != nil {
		return 0, 0, 0, err
	}
	return float64(h.ValueAtQuantile(99)) / 1000, float64(h.Max()) / 1000, h.TotalCount(), nil
}

// nativeAtK6Rate runs one more native step at plain k6's highest rate when
// the searches passed no rate in common, so that CPU per request is
// compared at the same rate.
func (b *bench) nativeAtK6Rate(ctx context.Context, arms []*loadArm, all []loadStep) ([]loadStep, error) {
	var a, f *loadArm
	for _, x := range arms {
		switch x.key {
		case "a":
			a = x
		case "f":
			f = x
		}
	}
	if a == nil || f == nil || a.search.Best() == 0 {
		return all, nil
	}
	if _, _, ok := commonStep(all, "f", "a"); ok {
		return all, nil
	}
	st, err := f.run(a.search.Best())
	if err != nil {
		return all, fmt.Errorf("%s at %d/s: %w", f.name, a.search.Best(), err)
	}
	b.logf("  f at %d/s (plain k6's rate, for CPU per request): %.0f/s, %.1f µs CPU/req, ok %v", st.Rate, st.Achieved, st.CPUus, st.OK)
	return append(all, st), nil
}
