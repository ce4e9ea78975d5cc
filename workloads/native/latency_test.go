package native

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// quantile reads a quantile (ms) of a metric's merged histograms.
func quantile(t *testing.T, sum stream.Summary, metric string, match map[string]string, q float64) float64 {
	t.Helper()
	var hs record.HistSum
	for _, w := range sum.Windows {
	series:
		for _, s := range w.Series {
			if s.Metric != metric || s.Hist == "" {
				continue
			}
			for k, v := range match {
				if s.Tags[k] != v {
					continue series
				}
			}
			if err := hs.AddEncoded(s.Hist); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := hs.Histogram()
	if h == nil {
		t.Fatalf("no %s histogram", metric)
	}
	return float64(h.ValueAtQuantile(q)) / 1000
}

// TestStallShowsInLatency stalls the server for 1 s at 200 requests/s:
// the requests that arrive during the stall wait for it, and their
// latency counts from when they were due, so p99 shows the stall.
func TestStallShowsInLatency(t *testing.T) {
	var mu sync.Mutex
	var stallUntil time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		until := stallUntil
		mu.Unlock()
		if d := time.Until(until); d > 0 {
			time.Sleep(d)
		}
	}))
	defer srv.Close()
	go func() {
		time.Sleep(time.Second)
		mu.Lock()
		stallUntil = time.Now().Add(time.Second)
		mu.Unlock()
	}()
	spec := Spec{Streams: []Stream{{Name: "s", Targets: []string{srv.URL}, Method: "GET", Path: "/", Timeout: 5 * time.Second,
		Arrival: arrival.Constant(200, 0, 3*time.Second)}}}
	sum := runToStream(t, spec, Shard{})
	if n, _ := total(sum, "dropped_iterations", nil); n != 0 {
		t.Errorf("%d arrivals dropped", n)
	}
	p99 := quantile(t, sum, "http_req_duration", nil, 99)
	p50 := quantile(t, sum, "http_req_duration", nil, 50)
	t.Logf("p50 %.2f ms, p99 %.1f ms", p50, p99)
	if p99 < 900 {
		t.Errorf("p99 %.1f ms: a 1 s stall must show as ≥ 900 ms", p99)
	}
}

// TestDropsWhenWorkersAreBusy gives a stream 4 workers for a server that
// takes 400 ms: arrivals beyond them are dropped and counted, not delayed.
func TestDropsWhenWorkersAreBusy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(400 * time.Millisecond)
	}))
	defer srv.Close()
	spec := Spec{Streams: []Stream{{Name: "s", Targets: []string{srv.URL}, Method: "GET", Path: "/", Timeout: 5 * time.Second,
		Arrival: arrival.Constant(100, 0, time.Second), Workers: 4}}}
	sum := runToStream(t, spec, Shard{})
	_, dropped := total(sum, "dropped_iterations", map[string]string{"scenario": "s"})
	_, sent := total(sum, "http_reqs", nil)
	if dropped+sent != 100 {
		t.Errorf("dropped %v + sent %v, want the 100 arrivals", dropped, sent)
	}
	// Each worker serves at most 3 requests in the second: at most 12 sent.
	if sent > 12 || sent < 4 {
		t.Errorf("sent %v, want 4..12 (4 workers, 400 ms each, 1 s)", sent)
	}
	if p := quantile(t, sum, "http_req_duration", nil, 100); p > 600 {
		t.Errorf("max latency %.0f ms: a request was delayed waiting for a worker", p)
	}
}

// TestIdleLatency checks the scheduler's own contribution: against a
// server that answers at once, the median stays well under a millisecond.
func TestIdleLatency(t *testing.T) {
	srv := okServer(t)
	spec := Spec{Streams: []Stream{{Name: "s", Targets: []string{srv.URL}, Method: "GET", Path: "/", Timeout: time.Second,
		Arrival: arrival.Constant(300, 0, 2*time.Second)}}}
	sum := runToStream(t, spec, Shard{})
	p50, p99 := quantile(t, sum, "http_req_duration", nil, 50), quantile(t, sum, "http_req_duration", nil, 99)
	t.Logf("idle server: p50 %.3f ms, p99 %.3f ms", p50, p99)
	if p50 > 2 {
		t.Errorf("p50 %.3f ms against a server that answers at once", p50)
	}
}

// TestConnectionBound bounds the connections to the server at 20: it never
// sees more requests at once, the ones beyond wait in the client, and that
// wait counts in their latency.
func TestConnectionBound(t *testing.T) {
	var mu sync.Mutex
	cur, peak := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur++
		peak = max(peak, cur)
		mu.Unlock()
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		cur--
		mu.Unlock()
	}))
	defer srv.Close()
	spec := Spec{Connections: 20, Streams: []Stream{{Name: "s", Targets: []string{srv.URL}, Method: "GET", Path: "/", Timeout: 5 * time.Second,
		Arrival: arrival.Constant(200, 0, time.Second), Workers: 300}}}
	sum := runToStream(t, spec, Shard{})
	_, sent := total(sum, "http_reqs", nil)
	_, dropped := total(sum, "dropped_iterations", nil)
	if sent != 200 || dropped != 0 || peak > 20 {
		t.Errorf("sent %v dropped %v, the server saw %d at once; want 200, 0 and at most 20", sent, dropped, peak)
	}
	// 20 connections serve 100 requests/s: the last ones wait about 1 s.
	if p := quantile(t, sum, "http_req_duration", nil, 99); p < 800 {
		t.Errorf("p99 %.0f ms: the wait for a connection is missing from latency", p)
	}
}
