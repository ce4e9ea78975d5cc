package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// overloadResult is what one open-model overload run saw.
type overloadResult struct {
	sent, ok, good int            // good: 200 within the deadline
	byReason       map[string]int // failures by X-Reject-Reason (or "error")
	goodput        float64        // good per second of arrivals
}

// runOverload serves a 4-worker, 20 ms-per-request handler (capacity 200/s)
// with cfg's queue and offers rate req/s for dur, open model (arrivals do not
// wait for answers); a success within deadline counts as goodput.
func runOverload(t *testing.T, cfg Config, rate int, dur, deadline time.Duration) overloadResult {
	t.Helper()
	s := New("overload", cfg, nil, nil)
	s.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		select { // 20 ms of work
		case <-time.After(20 * time.Millisecond):
		case <-r.Context().Done():
		}
	})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048, IdleConnTimeout: 10 * time.Second,
	}}
	defer client.CloseIdleConnections()
	res := overloadResult{byReason: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var sent atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), dur+5*time.Second)
	defer cancel()
	record := func(took time.Duration, resp *http.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.byReason["error"]++
			return
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			res.byReason[resp.Header.Get(platform.RejectHeader)]++
			return
		}
		res.ok++
		if took <= deadline {
			res.good++
		}
	}
	if rate <= 0 { // closed model: 2 clients per worker, back to back, to measure capacity
		start := time.Now()
		for range 2 * cfg.Workers {
			wg.Go(func() {
				for time.Since(start) < dur && ctx.Err() == nil {
					sent.Add(1)
					t0 := time.Now()
					req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/work", nil)
					resp, err := client.Do(req)
					record(time.Since(t0), resp, err)
				}
			})
		}
	} else { // open model: arrival i at start + i/rate whatever the answers
		total := int(dur.Seconds() * float64(rate))
		start := time.Now()
		for i := range total {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
			if ctx.Err() != nil {
				break
			}
			sent.Add(1)
			wg.Go(func() {
				t0 := time.Now()
				req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/work", nil)
				resp, err := client.Do(req)
				record(time.Since(t0), resp, err)
			})
		}
	}
	wg.Wait()
	res.sent = int(sent.Load())
	res.goodput = float64(res.good) / dur.Seconds()
	return res
}

// TestOverloadCodelVersusFIFO is the overload demo: at 3× capacity for 3 s,
// CoDel + adaptive LIFO + back pressure keeps goodput (successes within a
// 300 ms deadline) near capacity; the bounded FIFO serves only stale requests.
func TestOverloadCodelVersusFIFO(t *testing.T) {
	base := Config{Workers: 4, QueueTimeout: time.Second, QueueLength: 256, Codel: defaultCodel, Backpressure: true}
	codel, fifo := base, base
	codel.Queue, fifo.Queue = QueueCodel, QueueFIFO
	// Capacity as measured now, on this (shared, noisy) machine; 200/s nominal.
	capRun := runOverload(t, fifo, 0, time.Second, time.Hour)
	capacity := capRun.goodput
	t.Logf("measured capacity %.0f/s (nominal 200/s; 4 workers × 20 ms)", capacity)
	if capacity < 100 {
		t.Fatalf("measured capacity %.0f/s is under half the nominal 200/s: machine too loaded to judge", capacity)
	}
	rate := int(3 * capacity)
	results := map[string]overloadResult{}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"codel", codel}, {"fifo", fifo}} {
		r := runOverload(t, tc.cfg, rate, 3*time.Second, 300*time.Millisecond)
		t.Logf("%s at %d/s: sent %d, ok %d, good %d, goodput %.0f/s = %.0f%% of capacity; failures %v",
			tc.name, rate, r.sent, r.ok, r.good, r.goodput, 100*r.goodput/capacity, r.byReason)
		results[tc.name] = r
	}
	if c := results["codel"]; c.goodput < 0.8*capacity {
		t.Errorf("codel goodput %.0f/s, want ≥ 80%% of the measured %.0f/s", c.goodput, capacity)
	}
	if f := results["fifo"]; f.goodput > 0.5*capacity {
		t.Errorf("fifo goodput %.0f/s, want < 50%% of the measured %.0f/s (collapse)", f.goodput, capacity)
	}
}
