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
	l := NewWorkerLimit(1, 50*time.Millisecond)
	rel, _, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatalf("first acquire: %v", err)
	}
	start := time.Now()
	_, waited, err := l.Acquire(context.Background())
	if !errors.Is(err, ErrQueueTimeout) {
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
	if got := l.Busy(); got != 0 {
		t.Fatalf("busy after release = %d, want 0", got)
	}
}

func TestWorkerLimitWaitsForRelease(t *testing.T) {
	l := NewWorkerLimit(1, 5*time.Second)
	rel, _, _ := l.Acquire(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); rel() }()
	rel2, waited, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatalf("queued acquire: %v", err)
	}
	defer rel2()
	if waited < 20*time.Millisecond {
		t.Errorf("waited %s, want at least ~30ms", waited)
	}
}

func TestWorkerLimitCanceled(t *testing.T) {
	l := NewWorkerLimit(1, 5*time.Second)
	rel, _, _ := l.Acquire(context.Background())
	defer rel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := l.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire with ended ctx: err = %v, want context.DeadlineExceeded", err)
	}
}

// TestWorkerLimitNeverExceeded runs many goroutines through a small pool (-race).
func TestWorkerLimitNeverExceeded(t *testing.T) {
	const size, goroutines, iters = 4, 48, 50
	l := NewWorkerLimit(size, 10*time.Millisecond)
	var cur, peak, ok, timeouts atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range iters {
				rel, _, err := l.Acquire(context.Background())
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
	if l.Busy() != 0 {
		t.Errorf("busy after all done = %d, want 0", l.Busy())
	}
}
