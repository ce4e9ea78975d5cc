package server

import (
	"testing"
	"time"
)

// BenchmarkCodelObserve is the CoDel decision each dequeued request costs.
func BenchmarkCodelObserve(b *testing.B) {
	p := CodelParams{Target: 5 * time.Millisecond, Interval: 100 * time.Millisecond}
	var s codelState
	now := time.Unix(0, 0)
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(50 * time.Microsecond)
		s.tick(p, now)
		s.observe(p, now, 3*time.Millisecond)
	}
}

// BenchmarkBulkheadAcquire is one permit taken and given back.
func BenchmarkBulkheadAcquire(b *testing.B) {
	bh := NewBulkheadMode("bench", 64, BulkheadHard, 0, nil)
	b.ReportAllocs()
	for b.Loop() {
		release, ok := bh.TryAcquire()
		if !ok {
			b.Fatal("bulkhead full")
		}
		release()
	}
}
