package server

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBulkheadFailsFastWhenFull(t *testing.T) {
	m := NewMetrics()
	b := NewBulkheadMode("vault", 2, BulkheadHard, 0, m)
	r1, ok1 := b.TryAcquire()
	r2, ok2 := b.TryAcquire()
	if !ok1 || !ok2 {
		t.Fatalf("first two acquires: got %v %v, want both admitted", ok1, ok2)
	}
	start := time.Now()
	if _, ok := b.TryAcquire(); ok {
		t.Fatal("third acquire on a full bulkhead of 2 was admitted")
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("refusal took %s, want fail-fast", d)
	}
	if got := value(t, m.bulkRejected.WithLabelValues("vault")); got != 1 {
		t.Errorf("rejected counter = %v, want 1", got)
	}
	if got := value(t, m.bulkInflight.WithLabelValues("vault")); got != 2 {
		t.Errorf("inflight gauge = %v, want 2", got)
	}
	r1()
	r1() // a second release must not free a second permit
	if got := b.inUse(); got != 1 {
		t.Fatalf("inflight after one (double) release = %d, want 1", got)
	}
	r3, ok := b.TryAcquire()
	if !ok {
		t.Fatal("acquire after a release was refused")
	}
	if _, ok := b.TryAcquire(); ok {
		t.Fatal("double release freed an extra permit")
	}
	r2()
	r3()
	if got := b.inUse(); got != 0 {
		t.Errorf("inflight after all releases = %d, want 0", got)
	}
}

func TestBulkheadDisabledAdmitsAll(t *testing.T) {
	b := NewBulkheadMode("vault", 1, BulkheadOff, 0, nil)
	var rels []func()
	for i := range 10 {
		r, ok := b.TryAcquire()
		if !ok {
			t.Fatalf("disabled bulkhead refused call %d", i)
		}
		rels = append(rels, r)
	}
	if got := b.inUse(); got != 10 {
		t.Errorf("inflight = %d, want 10", got)
	}
	for _, r := range rels {
		r()
	}
}

// TestBulkheadLimitUnderConcurrency hammers a bulkhead from many goroutines and
// checks the limit is never exceeded and that refusals happen (run with -race).
func TestBulkheadLimitUnderConcurrency(t *testing.T) {
	const limit, goroutines, iters = 5, 64, 300
	b := NewBulkheadMode("ledger", limit, BulkheadHard, 0, NewMetrics())
	var cur, peak, admitted, refused atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range iters {
				rel, ok := b.TryAcquire()
				if !ok {
					refused.Add(1)
					continue
				}
				admitted.Add(1)
				n := cur.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				time.Sleep(10 * time.Microsecond)
				cur.Add(-1)
				rel()
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Errorf("peak concurrency %d exceeded limit %d", p, limit)
	}
	if admitted.Load() == 0 || refused.Load() == 0 {
		t.Errorf("admitted %d, refused %d: want both > 0 under contention", admitted.Load(), refused.Load())
	}
	if got := b.inUse(); got != 0 {
		t.Errorf("inflight after all done = %d, want 0", got)
	}
}
