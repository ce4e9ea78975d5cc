package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/targets/platform"
)

// startRedis runs Debian's redis-server on a free loopback port for the test
// and kills it (by PID) at the end. Without the binary the test fails on CI
// (CI=true) and is skipped elsewhere, saying why.
func startRedis(t *testing.T) string {
	t.Helper()
	bin := testenv.Tool(t, "redis-server", "redis-server")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	q := newRedisQuota(addr)
	defer q.close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := q.ping(context.Background()); err == nil {
			return addr
		} else if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not answer within 10s: %v", addr, err)
		}
	}
}

func TestRedisQuotaTake(t *testing.T) {
	addr := startRedis(t)
	q := newRedisQuota(addr)
	defer q.close()
	ctx := context.Background()
	ok := 0
	var retry time.Duration
	for range 10 {
		allowed, after, err := q.take(ctx, "rogue", 1, 3) // 1/s, burst 3
		if err != nil {
			t.Fatal(err)
		}
		if allowed {
			ok++
		} else {
			retry = after
		}
	}
	if ok < 3 || ok > 4 {
		t.Errorf("10 takes at 1/s burst 3: %d allowed, want 3 (4 if a second passed)", ok)
	}
	if retry <= 0 || retry > time.Second {
		t.Errorf("retry-after %s, want in (0, 1s]", retry)
	}
	if allowed, _, _ := q.take(ctx, "other", 1, 3); !allowed {
		t.Error("another caller's first request was refused: keys not per caller")
	}
}

// TestRedisQuotaSharedByReplicas: two server replicas sharing one Redis enforce
// one quota between them; the local counter would allow the rate on each.
func TestRedisQuotaSharedByReplicas(t *testing.T) {
	addr := startRedis(t)
	cfg := QuotaConfig{Callers: map[string]float64{"rogue": 5}}
	replica := func(redis string) *httptest.Server {
		s := New("test", Config{Workers: 4, QueueTimeout: time.Second, Quotas: true, Quota: cfg, QuotaRedis: redis}, nil, nil)
		s.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {})
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(ts.Close)
		return ts
	}
	burst := func(a, b *httptest.Server, caller string, n int) (ok int) {
		for i := range n {
			ts := a
			if i%2 == 1 {
				ts = b
			}
			r := do(t, "GET", ts.URL+"/x", map[string]string{platform.HeaderCaller: caller}, nil)
			if r.code == 200 {
				ok++
			} else if r.code != 429 || r.reason != platform.ReasonQuota {
				t.Fatalf("unexpected %d %s", r.code, r.raw)
			}
		}
		return ok
	}
	shared1, shared2 := replica(addr), replica(addr)
	local1, local2 := replica(""), replica("")
	// 20 requests in well under a second: burst 5 (+ a refill or two).
	if ok := burst(shared1, shared2, "rogue", 20); ok < 5 || ok > 7 {
		t.Errorf("redis: 20 requests over 2 replicas at 5/s: %d allowed, want 5-7 in total", ok)
	}
	if ok := burst(local1, local2, "rogue", 20); ok < 10 {
		t.Errorf("local: %d allowed, want ≥ 10 (5 per replica): the A/B shows nothing", ok)
	}
	// Runtime change on both replicas: 50/s.
	for _, ts := range []*httptest.Server{shared1, shared2} {
		if r := do(t, "PUT", ts.URL+"/admin/quotas", nil, QuotaConfig{Callers: map[string]float64{"rogue": 50}}); r.code != 200 {
			t.Fatalf("PUT /admin/quotas: %d %s", r.code, r.raw)
		}
	}
	time.Sleep(1100 * time.Millisecond) // let the bucket refill at the new rate
	if ok := burst(shared1, shared2, "rogue", 40); ok < 35 {
		t.Errorf("redis after raise to 50/s: %d of 40 allowed, want ≥ 35", ok)
	}
}

// TestRedisQuotaFailsOpen: with Redis gone, requests go through and are counted.
func TestRedisQuotaFailsOpen(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	s := New("test", Config{Workers: 4, QueueTimeout: time.Second, Quotas: true,
		Quota: QuotaConfig{Default: 1}, QuotaRedis: dead}, nil, nil)
	s.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for range 3 {
		if r := do(t, "GET", ts.URL+"/x", nil, nil); r.code != 200 {
			t.Fatalf("redis down: %d, want 200 (fail open)", r.code)
		}
	}
	wantMetric(t, metricsText(t, ts.URL), "platform_quota_errors_total 3")
}
