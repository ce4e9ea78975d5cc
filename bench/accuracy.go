package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// quantiles the accuracy section compares.
var accuracyQuantiles = []float64{50, 99, 99.9}

// exactQuantile is the nearest-rank quantile (q in percent) of sorted values.
func exactQuantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	// The small epsilon keeps 0.999×8000 at rank 7992, as HdrHistogram counts it.
	i := int(math.Ceil(q/100*float64(len(sorted))-1e-9)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// k6JSONValues reads every value of metric from k6's JSON output.
func k6JSONValues(path, metric string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := []byte(`"metric":"` + metric + `"`)
	var out []float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, want) || !bytes.Contains(line, []byte(`"type":"Point"`)) {
			continue
		}
		var p struct {
			Data struct {
				Value float64 `json:"value"`
			} `json:"data"`
		}
		if err := json.Unmarshal(line, &p); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		out = append(out, p.Data.Value)
	}
	return out, sc.Err()
}

// windowsHist merges the histograms of every series of metric; values are
// in microunits (ms×1000).
func windowsHist(ws []record.Window, metric string) (*hdrhistogram.Histogram, error) {
	h := record.NewHist()
	for _, w := range ws {
		for _, s := range w.Series {
			if s.Metric != metric || s.Hist == "" {
				continue
			}
			sh, err := record.DecodeHist(s.Hist)
			if err != nil {
				return nil, err
			}
			if n := h.Merge(sh); n != 0 {
				return nil, fmt.Errorf("%s: %d values out of the histogram's range", metric, n)
			}
		}
	}
	return h, nil
}

// k6Stream runs bench/k6/car.js on the extension build with its results
// streamed to the harness's receiver, as the runner does; onStart, if set,
// runs in its own goroutine once the stream's hello arrived (k6 starts load).
func (b *bench) k6Stream(ctx context.Context, env map[string]string, onStart func(context.Context) error, extra ...string) (stream.Summary, error) {
	return b.withReceiver(ctx, onStart, func(addr string) error {
		extra = append(extra, "--out", "resilience=tcp://"+addr)
		r, err := runCmd(ctx, 3*time.Minute, b.tmp, []string{"K6_NO_USAGE_REPORT=true"}, b.k6,
			k6Args(filepath.Join(b.root, "bench", "k6", "car.js"), env, extra...)...)
		if err == nil && r.Code != 0 {
			err = fmt.Errorf("k6 exited %d: %s", r.Code, lastLines(string(r.Out), 10))
		}
		return err
	})
}

// withReceiver listens for a results stream, calls run with its address
// and returns what arrived; onStart, if set, runs in its own goroutine once
// the stream's hello arrived (load starts).
func (b *bench) withReceiver(ctx context.Context, onStart func(context.Context) error, run func(addr string) error) (stream.Summary, error) {
	rec, err := stream.Listen(ctx)
	if err != nil {
		return stream.Summary{}, err
	}
	defer rec.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	startErr := make(chan error, 1)
	go func() {
		select {
		case <-rec.Started():
			if onStart != nil {
				startErr <- onStart(sctx)
				return
			}
		case <-sctx.Done():
		}
		startErr <- nil
	}()
	if err := run(rec.Addr()); err != nil {
		return stream.Summary{}, err
	}
	cancel()
	if err := <-startErr; err != nil {
		return stream.Summary{}, err
	}
	if err := rec.Close(); err != nil {
		return stream.Summary{}, err
	}
	sum := rec.Summary()
	if !sum.Ended || sum.Malformed > 0 {
		return sum, fmt.Errorf("results stream: ended %v, %d malformed lines %v", sum.Ended, sum.Malformed, sum.Errors)
	}
	return sum, nil
}

// accuracySection compares the results output's quantiles with the exact
// ones of the same requests, and shows coordinated omission: a 1 s stall
// under open-model load (k6) and closed-model load (wrk).
func (b *bench) accuracySection(ctx context.Context) (Section, error) {
	sec := Section{Name: "accuracy"}
	dur := 8 * time.Second
	if b.cfg.quick {
		dur = 3 * time.Second
	}
	js := filepath.Join(b.tmp, "acc-k6.json")
	defer os.Remove(js)
	env := map[string]string{"TARGET": b.server.URL() + "/spread", "RATE": "1000", "DURATION": dur.String(),
		"VUS": "50", "MAX_VUS": "200", "SUMMARY": filepath.Join(b.tmp, "acc-summary.json")}
	sum, err := b.k6Stream(ctx, env, nil, "--out", "json="+js)
	if err != nil {
		return sec, err
	}
	exact, err := k6JSONValues(js, "http_req_duration")
	if err != nil {
		return sec, err
	}
	h, err := windowsHist(sum.Windows, "http_req_duration")
	if err != nil {
		return sec, err
	}
	if h.TotalCount() != int64(len(exact)) {
		return sec, fmt.Errorf("the results output holds %d durations, k6's JSON output %d", h.TotalCount(), len(exact))
	}
	slices.Sort(exact)
	detail := map[string]any{"requests": len(exact)}
	for _, q := range accuracyQuantiles {
		e := exactQuantile(exact, q)
		got := float64(h.ValueAtQuantile(q)) / 1000
		name := "p" + strconv.FormatFloat(q, 'f', -1, 64)
		detail[name] = map[string]float64{"exact_ms": e, "output_ms": got}
		sec.Rows = append(sec.Rows, Row{Name: fmt.Sprintf("%s from the results output (%d requests)", name, len(exact)),
			Value: got, Unit: "ms", Ref: "exact, k6 JSON samples", RefValue: e, Goal: Within(0.01)})
	}
	co, err := b.stallRun(ctx)
	if err != nil {
		return sec, err
	}
	detail["stall"] = co
	sec.Detail = detail
	sec.Rows = append(sec.Rows,
		Row{Name: "p99, open model (k6 200/s), 1 s server stall", Value: co.OpenP99, Unit: "ms", Ref: "stall", RefValue: 1000,
			Goal: AtLeast(0.5), Note: "from the results output"},
		Row{Name: "p99, closed model (k6, 2 VUs), same stall", Value: co.ClosedP99, Unit: "ms", Ref: "stall", RefValue: 1000,
			Note: "coordinated omission hides it"},
		Row{Name: "p99, wrk (2 connections), same stall", Value: co.WrkP99, Unit: "ms", Ref: "stall", RefValue: 1000,
			Note: "wrk corrects for coordinated omission"})
	rows, nd, err := b.nativeAccuracy(ctx, dur)
	if err != nil {
		return sec, fmt.Errorf("native engine: %w", err)
	}
	detail["native"] = nd
	sec.Rows = append(sec.Rows, rows...)
	p99, mx, n, err := b.nativeStall(ctx)
	if err != nil {
		return sec, fmt.Errorf("native engine, stall: %w", err)
	}
	nd["stall"] = map[string]any{"p99_ms": p99, "max_ms": mx, "requests": n}
	b.logf("  stall: native p99 %.0f ms (max %.0f, %d requests)", p99, mx, n)
	sec.Rows = append(sec.Rows, Row{Name: "native: p99, open model (chaosrun load 200/s), same stall", Value: p99, Unit: "ms",
		Ref: "stall", RefValue: 1000, Goal: AtLeast(0.9), Note: "latency from the intended send time"})
	return sec, nil
}

// stallResult is the coordinated-omission runs: p99 and request counts.
type stallResult struct {
	OpenP99, OpenMax     float64
	OpenRequests         int64
	ClosedP99, ClosedMax float64
	ClosedRequests       int64
	WrkP99               float64
	WrkRequests          int64
}

// stallRun stalls the server for 1 s, 3 s into each of three 8 s runs:
// open-model k6 (200/s), closed-model k6 (2 VUs) and wrk (2 connections),
// and reads each one's p99.
func (b *bench) stallRun(ctx context.Context) (stallResult, error) {
	var out stallResult
	const at = 3 * time.Second
	stall := func(ctx context.Context) error { return b.stallAfter(ctx, at) }
	env := map[string]string{"TARGET": b.server.URL() + "/ok", "RATE": "200", "DURATION": "8s",
		"VUS": "300", "MAX_VUS": "400", "SUMMARY": filepath.Join(b.tmp, "stall-summary.json")}
	sum, err := b.k6Stream(ctx, env, stall)
	if err != nil {
		return out, fmt.Errorf("open model: %w", err)
	}
	h, err := windowsHist(sum.Windows, "http_req_duration")
	if err != nil {
		return out, err
	}
	out.OpenP99, out.OpenMax, out.OpenRequests = float64(h.ValueAtQuantile(99))/1000, float64(h.Max())/1000, h.TotalCount()
	env["CLOSED_VUS"] = "2"
	if sum, err = b.k6Stream(ctx, env, stall); err != nil {
		return out, fmt.Errorf("closed model: %w", err)
	}
	if h, err = windowsHist(sum.Windows, "http_req_duration"); err != nil {
		return out, err
	}
	out.ClosedP99, out.ClosedMax, out.ClosedRequests = float64(h.ValueAtQuantile(99))/1000, float64(h.Max())/1000, h.TotalCount()
	errc := make(chan error, 1)
	go func() { errc <- b.stallAfter(ctx, at) }()
	w, _, err := b.runWrk(ctx, b.server.URL()+"/ok", 8*time.Second, 2, "")
	if err != nil {
		return out, err
	}
	if err := <-errc; err != nil {
		return out, err
	}
	out.WrkP99, out.WrkRequests = w.P99ms, w.Requests
	b.logf("  stall: open k6 p99 %.0f ms (max %.0f, %d requests); closed k6 p99 %.2f ms (max %.0f, %d requests); wrk p99 %.1f ms (%d requests)",
		out.OpenP99, out.OpenMax, out.OpenRequests, out.ClosedP99, out.ClosedMax, out.ClosedRequests, out.WrkP99, out.WrkRequests)
	return out, nil
}

// stallAfter asks the bench server, after d, to stall for one second.
func (b *bench) stallAfter(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.server.URL()+"/admin/stall?ms=1000", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("stall the server: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stall the server: HTTP %d", resp.StatusCode)
	}
	return nil
}
