package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkClientOverhead compares one GET through the smart client (every
// protection on, or all off) with the same GET through a plain http.Client,
// against the same local server, in the same run.
func BenchmarkClientOverhead(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	addr := hostPort(srv)

	b.Run("plain-http", func(b *testing.B) {
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
		defer hc.CloseIdleConnections()
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+addr+"/x", nil)
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	})
	off := DefaultConfig()
	off.RetryMode, off.Breaker, off.Outlier.Enabled, off.PropagateDeadline = retryOff, false, false, false
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"smart-all-on", DefaultConfig()}, {"smart-all-off", off}} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := New("dep", []string{addr, addr, addr}, time.Second, WithConfig(tc.cfg), WithRegisterer(prometheus.NewRegistry()))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				if err := c.GetJSON(ctx, "/x", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBalancerPick is the balancer and outlier bookkeeping alone: one
// pick and its done, with a latency sample, under each policy (bench/
// compares ewma with p2c in the same run).
func BenchmarkBalancerPick(b *testing.B) {
	for _, policy := range []string{balanceRoundRobin, balanceP2C, balanceEWMA} {
		b.Run(policy, func(b *testing.B) {
			lb := newBalancer([]string{"a:1", "b:1", "c:1"}, lbConfig{policy: policy, outlier: defaultOutlierConfig(), seed: 1}, time.Now())
			now := time.Now()
			r := result{oc: outcomeSuccess, rtt: 2 * time.Millisecond, timed: true}
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Microsecond) // the estimates decay between calls
				i := lb.pick(now, -1)
				lb.done(i, r, now)
			}
		})
	}
}
