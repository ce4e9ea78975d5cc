package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWorkerLimitQueueTimeout(t *testing.T) {
	l := newPool(poolConfig{Mode: QueueFIFO, Workers: 1, QueueTimeout: 50 * time.Millisecond}, nil)
	rel, _, err := l.acquire(context.Background())
	if err != nil {
		t.Fatalf("first acquire: %v", err)
	}
	start := time.Now()
	_, waited, err := l.acquire(context.Background())
	if !errors.Is(err, errQueueTimeout) {
		t.Fatalf("second acquire on a busy pool of 1: err = %v, want ErrQueueTimeout", err)
	}
	if d := time.Since(start); d < 40*time.Millisecond || d > 2*time.Second {
		t.Errorf("queue timeout after %s, want about 50ms", d)
	}
	if waited < 40*time.Millisecond {
		t.Errorf("waited = %s, want about 50ms", waited)
	}
	rel()
	rel() // extra release is harmless
	if got := l.busyWorkers(); got != 0 {
		t.Fatalf("busy after release = %d, want 0", got)
	}
}

func TestWorkerLimitWaitsForRelease(t *testing.T) {
	l := newPool(poolConfig{Mode: QueueFIFO, Workers: 1, QueueTimeout: 5 * time.Second}, nil)
	rel, _, _ := l.acquire(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); rel() }()
	rel2, waited, err := l.acquire(context.Background())
	if err != nil {
		t.Fatalf("queued acquire: %v", err)
	}
	defer rel2()
	if waited < 20*time.Millisecond {
		t.Errorf("waited %s, want at least ~30ms", waited)
	}
}

func TestWorkerLimitCanceled(t *testing.T) {
	l := newPool(poolConfig{Mode: QueueFIFO, Workers: 1, QueueTimeout: 5 * time.Second}, nil)
	rel, _, _ := l.acquire(context.Background())
	defer rel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := l.acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire with ended ctx: err = %v, want context.DeadlineExceeded", err)
	}
}

// TestWorkerLimitNeverExceeded runs many goroutines through a small pool (-race).
func TestWorkerLimitNeverExceeded(t *testing.T) {
	const size, goroutines, iters = 4, 48, 50
	l := newPool(poolConfig{Mode: QueueFIFO, Workers: size, QueueTimeout: 10 * time.Millisecond}, nil)
	var cur, peak, ok, timeouts atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range iters {
				rel, _, err := l.acquire(context.Background())
				if err != nil {
					timeouts.Add(1)
					continue
				}
				ok.Add(1)
				n := cur.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(200 * time.Microsecond)
				cur.Add(-1)
				rel()
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > size {
		t.Errorf("peak concurrency %d exceeded %d workers", p, size)
	}
	if ok.Load() == 0 {
		t.Error("no request ever got a worker")
	}
	if l.busyWorkers() != 0 {
		t.Errorf("busy after all done = %d, want 0", l.busyWorkers())
	}
}
