package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"golang.org/x/time/rate"
)

// discardWriter is a ResponseWriter that allocates nothing per request.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

func benchServe(b *testing.B, h http.Handler, hdr map[string]string) {
	req := httptest.NewRequest("GET", "/work", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })

// BenchmarkServerPath compares, in one run, the per-request cost of a plain
// net/http mux, golang.org/x/time/rate alone, and the platform's admission path
// with everything off and everything on (deadline, quota, bulkhead, CoDel).
func BenchmarkServerPath(b *testing.B) {
	b.Run("plain-net-http-mux", func(b *testing.B) {
		mux := http.NewServeMux()
		mux.Handle("GET /work", okHandler)
		benchServe(b, mux, nil)
	})
	b.Run("x-time-rate-allow", func(b *testing.B) {
		l := rate.NewLimiter(rate.Limit(1e12), 1<<30)
		b.ReportAllocs()
		for b.Loop() {
			l.Allow()
		}
	})
	b.Run("platform-fifo-controls-off", func(b *testing.B) {
		s := New("bench", Config{Workers: 64, QueueTimeout: time.Second}, nil, nil)
		s.Handle("GET /work", okHandler)
		benchServe(b, s.Handler(), nil)
	})
	b.Run("platform-all-on", func(b *testing.B) {
		m := NewMetrics()
		s := New("bench", Config{Workers: 64, QueueTimeout: time.Second, Queue: QueueCodel, QueueLength: 256,
			Backpressure: true, Deadlines: true, Quotas: true,
			Quota: QuotaConfig{Callers: map[string]float64{"bench": 1e12}}}, m, nil)
		s.HandleWith("GET /work", okHandler, RouteOptions{Bulkhead: NewBulkheadMode("work", 64, BulkheadHard, 0.9, m)})
		benchServe(b, s.Handler(), map[string]string{platform.HeaderDeadline: "60000", platform.HeaderCaller: "bench", platform.HeaderCriticality: platform.CriticalityDefault})
	})
	b.Run("pool-acquire-release-codel", func(b *testing.B) {
		p := newPool(poolConfig{Mode: QueueCodel, Workers: 64, QueueTimeout: time.Second, Backpressure: true, Watermark: 64}, nil)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			rel, _, _ := p.acquire(ctx)
			rel()
		}
	})
	b.Run("local-quota-take", func(b *testing.B) {
		q := newLocalQuota(nil)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			_, _, _ = q.take(ctx, "bench", 1e12, 1<<30)
		}
	})
}
