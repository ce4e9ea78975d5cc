package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// benchEdge is the one edge of the fault-precision testbed.
const benchEdge = "bench->server"

// edgeEnv is a faults.Env with one edge on one proxy.
type edgeEnv struct{ api faults.ToxicAPI }

func (e edgeEnv) ProxiesFor(edge string) ([]string, error) {
	if edge != benchEdge {
		return nil, fmt.Errorf("unknown edge %q (allowed: %s)", edge, benchEdge)
	}
	return []string{benchEdge}, nil
}

func (e edgeEnv) Toxics() faults.ToxicAPI { return e.api }

// lagStats summarises applied-minus-scheduled times.
type lagStats struct {
	Events            int
	P50ms, P99ms, Max float64
	Failed            int
	Worst             string // the latest event: its fault, kind and action
}

// faultLags computes the lag of every applied or reverted event.
func faultLags(evs []record.FaultEvent) lagStats {
	var lags []float64
	var st lagStats
	worst := -1.0
	for _, e := range evs {
		if e.Action == record.Failed {
			st.Failed++
			continue
		}
		lag := float64(e.Actual.Sub(e.Scheduled).Microseconds()) / 1000
		lags = append(lags, lag)
		if lag > worst {
			worst, st.Worst = lag, fmt.Sprintf("%s (%s) %s", e.Fault, e.Kind, e.Action)
		}
	}
	slices.Sort(lags)
	st.Events = len(lags)
	if len(lags) > 0 {
		st.P50ms, st.P99ms, st.Max = exactQuantile(lags, 50), exactQuantile(lags, 99), lags[len(lags)-1]
	}
	return st
}

// faultsSection runs the harness's fault schedule against the embedded
// Toxiproxy (`chaosrun serve toxiproxy`) and measures Toxiproxy's own cost.
func (b *bench) faultsSection(ctx context.Context) (Section, error) {
	sec := Section{Name: "fault precision (local, embedded Toxiproxy)"}
	tp, err := startServer(ctx, "toxiproxy", b.chaosrun, "serve", "toxiproxy", "--listen", "127.0.0.1:0", "--seed", "1")
	if err != nil {
		return sec, err
	}
	defer tp.Stop()
	listen, err := createProxy(ctx, tp.URL(), benchEdge, b.server.Addr)
	if err != nil {
		return sec, err
	}
	direct, proxied, err := pairedMedians(ctx, "http://"+b.server.Addr+"/ok", "http://"+listen+"/ok", 2000, 20*time.Second)
	if err != nil {
		return sec, err
	}
	n := 50
	if b.cfg.quick {
		n = 10
	}
	specs := make([]scenario.Fault, n)
	for i := range specs {
		specs[i] = scenario.Fault{Name: fmt.Sprintf("lat%02d", i), Kind: "latency", Edge: benchEdge,
			Start:    scenario.Duration(200*time.Millisecond + time.Duration(i)*150*time.Millisecond),
			Duration: scenario.Duration(75 * time.Millisecond), Attributes: map[string]float64{"latency": 5}}
	}
	var mu sync.Mutex
	var evs []record.FaultEvent
	err = faults.Run(ctx, clock.Real{}, time.Now(), specs, edgeEnv{faults.NewToxiproxyAPI(tp.URL())}, func(e record.FaultEvent) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	if err != nil {
		return sec, fmt.Errorf("fault schedule: %w", err)
	}
	lag := faultLags(evs)
	b.logf("  %d fault events: lag p50 %.2f ms, p99 %.2f ms, max %.2f ms; Toxiproxy median %.0f µs vs direct %.0f µs",
		lag.Events, lag.P50ms, lag.P99ms, lag.Max, proxied, direct)
	sec.Detail = map[string]any{"schedule": lag, "direct_median_us": direct, "proxied_median_us": proxied}
	sec.Rows = append(sec.Rows,
		Row{Name: fmt.Sprintf("fault applied − scheduled, p99 (%d apply/revert events)", lag.Events), Value: lag.P99ms, Unit: "ms",
			Goal: ValueAtMost(20), Note: fmt.Sprintf("p50 %.2f ms, max %.2f ms", lag.P50ms, lag.Max)},
		Row{Name: "round trip through Toxiproxy, no toxic, median", Value: proxied, Unit: "µs", Ref: "direct", RefValue: direct,
			Note: fmt.Sprintf("+%.0f µs", proxied-direct)},
	)
	if lag.Failed > 0 {
		return sec, fmt.Errorf("%d fault actions failed", lag.Failed)
	}
	return sec, nil
}

// createProxy adds a Toxiproxy proxy to upstream and returns where it listens.
func createProxy(ctx context.Context, api, name, upstream string) (string, error) {
	body, _ := json.Marshal(map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/proxies", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("create proxy %s: %w", name, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("create proxy %s: HTTP %d: %s", name, resp.StatusCode, raw)
	}
	var p struct {
		Listen string `json:"listen"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Listen == "" {
		return "", fmt.Errorf("create proxy %s: answer %q has no listen address", name, raw)
	}
	return p.Listen, nil
}

// pairedMedians sends n sequential GETs to each of two URLs, alternating,
// each over its own keep-alive connection, and returns both medians in µs.
func pairedMedians(ctx context.Context, a, b string, n int, limit time.Duration) (float64, float64, error) {
	ca := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 5 * time.Second}
	cb := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 5 * time.Second}
	defer ca.CloseIdleConnections()
	defer cb.CloseIdleConnections()
	get := func(c *http.Client, url string) (float64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		t0 := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
		}
		return float64(time.Since(t0).Nanoseconds()) / 1e3, nil
	}
	var da, db []float64
	deadline := time.Now().Add(limit)
	for i := 0; i < n+50 && time.Now().Before(deadline); i++ {
		x, err := get(ca, a)
		if err != nil {
			return 0, 0, err
		}
		y, err := get(cb, b)
		if err != nil {
			return 0, 0, err
		}
		if i >= 50 { // warm-up
			da, db = append(da, x), append(db, y)
		}
	}
	if len(da) == 0 {
		return 0, 0, fmt.Errorf("no requests completed within %s", limit)
	}
	slices.Sort(da)
	slices.Sort(db)
	return exactQuantile(da, 50), exactQuantile(db, 50), nil
}
