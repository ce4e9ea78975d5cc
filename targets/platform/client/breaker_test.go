package client

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestBreakerTransitions(t *testing.T) {
	cfg := quickConfig(retryOff, 0)
	cfg.Breaker = true
	cfg.BreakerFailureRate, cfg.BreakerMinCalls = 0.5, 4
	cfg.BreakerWindow, cfg.BreakerDelay, cfg.BreakerProbes = 10*time.Second, 50*time.Millisecond, 1
	ft := &fakeTransport{script: []answer{answer502}}
	c, err := New("vault", []string{"a:1"}, time.Second, WithConfig(cfg), withTransport(ft), WithRegisterer(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	state := func() float64 { return metricValue(t, c.m.breakerState) }

	// 4xx and back pressure do not count: the breaker stays closed
	ft.script = []answer{answer409, bpAnswer, answer409, bpAnswer, answer409}
	for range 5 {
		_ = c.GetJSON(ctx, "/x", nil)
	}
	if state() != breakerClosed {
		t.Fatalf("breaker state %g after 4xx and back pressure, want closed", state())
	}
	// failures open it; then calls fail fast without reaching the dependency
	ft.script, ft.n = []answer{answer502}, 0
	for range 8 { // 5 of 10 attempts failed: 50% opens it
		_ = c.GetJSON(ctx, "/x", nil)
	}
	if state() != breakerOpen || ft.count() != 5 {
		t.Fatalf("breaker state %g after %d failures, want open (1) after 5", state(), ft.count())
	}
	rejected := metricValue(t, c.m.breakerReject)
	sent := ft.count()
	err = c.GetJSON(ctx, "/x", nil)
	if KindOf(err) != KindBreaker || ft.count() != sent {
		t.Fatalf("call while open: kind %v, sent %d more; want breaker, 0", KindOf(err), ft.count()-sent)
	}
	if metricValue(t, c.m.breakerReject) != rejected+1 || metricValue(t, c.m.calls[callBreaker]) != rejected+1 {
		t.Error("breaker rejection not counted")
	}
	// after the delay one probe goes through; its success closes the breaker
	time.Sleep(150 * time.Millisecond)
	ft.script = []answer{okAnswer}
	if err := c.GetJSON(ctx, "/x", nil); err != nil {
		t.Fatalf("probe after the delay: %v", err)
	}
	if state() != breakerClosed {
		t.Fatalf("breaker state %g after a successful probe, want closed", state())
	}
	// a failed probe re-opens it
	ft.script = []answer{answer502}
	for range 4 {
		_ = c.GetJSON(ctx, "/x", nil)
	}
	time.Sleep(150 * time.Millisecond)
	_ = c.GetJSON(ctx, "/x", nil) // the probe fails
	if state() != breakerOpen {
		t.Fatalf("breaker state %g after a failed probe, want open", state())
	}
}

func TestBreakerOff(t *testing.T) {
	cfg := quickConfig(retryOff, 0)
	ft := &fakeTransport{script: []answer{answer502}}
	c, _ := New("vault", []string{"a:1"}, time.Second, WithConfig(cfg), withTransport(ft))
	for range 50 {
		if KindOf(c.GetJSON(context.Background(), "/x", nil)) == KindBreaker {
			t.Fatal("breaker off but a call failed fast")
		}
	}
	if ft.count() != 50 {
		t.Errorf("attempts = %d, want 50", ft.count())
	}
}
