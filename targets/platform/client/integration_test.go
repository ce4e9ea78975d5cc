package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/prometheus/client_golang/prometheus"
)

// replica is a real HTTP server that counts what it serves and can turn bad.
type replica struct {
	srv    *httptest.Server
	served atomic.Int64
	bad    atomic.Bool
}

func newReplica(t *testing.T, badMode string) *replica {
	r := &replica{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.served.Add(1)
		if r.bad.Load() {
			switch badMode {
			case "500":
				platform.WriteError(w, http.StatusInternalServerError, "internal", "replica broken")
				return
			case "latency":
				select {
				case <-time.After(time.Second):
				case <-req.Context().Done():
					return
				}
			case "slow":
				time.Sleep(60 * time.Millisecond)
			}
		}
		platform.WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// drive calls c from 4 goroutines until d has passed (at most 40000 calls).
func drive(c *Client, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	var budget atomic.Int64
	budget.Store(40000)
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil && budget.Add(-1) >= 0 {
				_ = c.GetJSON(context.Background(), "/x", nil)
			}
		})
	}
	wg.Wait()
}

// TestOutlierEjectionEndToEnd: one of three real replicas starts failing
// (500s, or 1 s latency against a 100 ms timeout). With outlier detection on it
// is ejected within a few seconds and then gets under 5% of the traffic; off,
// it keeps about its third.
func TestOutlierEjectionEndToEnd(t *testing.T) {
	tests := []struct {
		badMode string
		outlier bool
	}{
		{"500", true}, {"500", false}, {"latency", true}, {"latency", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/outlier=%v", tt.badMode, tt.outlier), func(t *testing.T) {
			reps := []*replica{newReplica(t, tt.badMode), newReplica(t, tt.badMode), newReplica(t, tt.badMode)}
			addrs := []string{hostPort(reps[0].srv), hostPort(reps[1].srv), hostPort(reps[2].srv)}
			cfg := DefaultConfig()
			cfg.Balancer = balanceRoundRobin // ejection alone, not the latency-aware balancer
			cfg.Outlier.Enabled = tt.outlier
			cfg.Outlier.Interval = 200 * time.Millisecond
			cfg.Outlier.BaseEjection = 2 * time.Second
			cfg.Breaker = false // a third of the traffic failing must not open it anyway
			reg := prometheus.NewRegistry()
			c, err := New("ledger", addrs, 100*time.Millisecond, WithConfig(cfg), WithRegisterer(reg))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			drive(c, 300*time.Millisecond) // warm up, all healthy
			bad := reps[2]
			bad.bad.Store(true)
			start := time.Now()
			ejectedAt := time.Duration(-1)
			done, stop := make(chan struct{}), make(chan struct{})
			go func() { // owner: this test, which closes stop and waits on done
				defer close(done)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if metricValue(t, c.m.hostEjected[2]) == 1 {
						ejectedAt = time.Since(start)
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
			drive(c, time.Second) // detection period
			close(stop)
			<-done
			var before [3]int64
			for i, r := range reps {
				before[i] = r.served.Load()
			}
			drive(c, 2*time.Second) // measured window
			var total int64
			var share [3]int64
			for i, r := range reps {
				share[i] = r.served.Load() - before[i]
				total += share[i]
			}
			badShare := float64(share[2]) / float64(total)
			t.Logf("ejected after %v; window requests per replica %v, bad share %.1f%%", ejectedAt, share, 100*badShare)
			if total < 100 {
				t.Fatalf("only %d requests in the window; the test did not drive load", total)
			}
			if tt.outlier {
				if ejectedAt < 0 || ejectedAt > 3*time.Second {
					t.Errorf("bad replica ejected after %v, want within 3s", ejectedAt)
				}
				if badShare >= 0.05 {
					t.Errorf("bad replica's share after ejection = %.1f%%, want < 5%%", 100*badShare)
				}
				if got := c.ejectedHosts(); len(got) > 1 {
					t.Errorf("ejected %v; healthy replicas were ejected too", got)
				}
			} else {
				if ejectedAt >= 0 {
					t.Errorf("outlier detection off but the replica was ejected")
				}
				if badShare < 0.2 {
					t.Errorf("outlier off: bad replica's share = %.1f%%, want about a third (> 20%%)", 100*badShare)
				}
			}
		})
	}
}

// TestSlowReplicaEndToEnd: one of three real replicas answers 60 ms late,
// well under the 1 s timeout, never failing. The latency-aware balancer
// alone keeps it under 5% of the calls; round robin with the latency
// detector ejects it (the ejection metric says: signal latency); round robin
// without it leaves it a third.
func TestSlowReplicaEndToEnd(t *testing.T) {
	tests := []struct {
		name        string
		balancer    string
		latency     bool
		maxShare    float64
		minShare    float64
		wantLatency bool // ejected by the latency detector
	}{
		{"ewma", balanceEWMA, true, 0.05, 0, false},
		{"rr with latency ejection", balanceRoundRobin, true, 0.15, 0, true},
		{"rr alone", balanceRoundRobin, false, 1, 0.25, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reps := []*replica{newReplica(t, "slow"), newReplica(t, "slow"), newReplica(t, "slow")}
			addrs := []string{hostPort(reps[0].srv), hostPort(reps[1].srv), hostPort(reps[2].srv)}
			cfg := DefaultConfig()
			cfg.Balancer = tt.balancer
			cfg.Outlier.Interval = 200 * time.Millisecond
			cfg.Outlier.BaseEjection = 2 * time.Second
			cfg.Outlier.LatencyVolume = 5 // a closed loop of 4 makes few calls to a slow host
			if !tt.latency {
				cfg.Outlier.LatencyFactor = 0
			}
			c, err := New("ledger", addrs, time.Second, WithConfig(cfg), WithRegisterer(prometheus.NewRegistry()))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			drive(c, 300*time.Millisecond) // warm up, all fast
			reps[2].bad.Store(true)
			drive(c, 500*time.Millisecond) // detection
			var before [3]int64
			for i, r := range reps {
				before[i] = r.served.Load()
			}
			drive(c, 1500*time.Millisecond)
			var total, slow int64
			for i, r := range reps {
				n := r.served.Load() - before[i]
				total += n
				if i == 2 {
					slow = n
				}
			}
			share := float64(slow) / float64(total)
			ejections := metricValue(t, c.m.vecs.ejections.WithLabelValues("ledger", addrs[2], string(detectLatency), signalLatency))
			t.Logf("slow replica: %d of %d calls (%.1f%%), latency ejections %g", slow, total, 100*share, ejections)
			if share > tt.maxShare || share < tt.minShare {
				t.Errorf("slow replica's share %.1f%%, want %.0f%%..%.0f%%", 100*share, 100*tt.minShare, 100*tt.maxShare)
			}
			if tt.wantLatency && ejections == 0 {
				t.Error("no ejection with signal latency")
			}
			if !tt.latency && ejections != 0 {
				t.Error("latency detector off, yet a latency ejection")
			}
		})
	}
}
