package kvdispatcher

import (
	"sync"
	"time"
)

// capacity is a shard's budget per second; 0 means unlimited.
type capacity struct {
	ReadsPerSec  float64
	BytesPerSec  float64
	WritesPerSec float64
}

// debtBucket refills continuously at rate per second up to burst; it admits
// while its balance is positive and may be debited below zero after the fact.
type debtBucket struct {
	rate, burst, tokens float64
	last                time.Time
}

func newDebtBucket(rate float64, burstWindow time.Duration) debtBucket {
	b := rate * burstWindow.Seconds()
	return debtBucket{rate: rate, burst: b, tokens: b}
}

func (b *debtBucket) refill(now time.Time) {
	if b.last.IsZero() {
		b.last = now
		return
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(b.burst, b.tokens+el*b.rate)
		b.last = now
	}
}

// throttle enforces a shard's Capacity. Time is passed in. Safe for
// concurrent use.
type throttle struct {
	mu                   sync.Mutex
	on                   [3]bool
	reads, bytes, writes debtBucket
}

// throttleBurst is how much unused capacity a shard may bank.
const throttleBurst = time.Second

// newThrottle returns a throttle for c.
func newThrottle(c capacity) *throttle {
	return &throttle{
		on:     [3]bool{c.ReadsPerSec > 0, c.BytesPerSec > 0, c.WritesPerSec > 0},
		reads:  newDebtBucket(c.ReadsPerSec, throttleBurst),
		bytes:  newDebtBucket(c.BytesPerSec, throttleBurst),
		writes: newDebtBucket(c.WritesPerSec, throttleBurst),
	}
}

// AdmitRead says whether a read may run now, and which budget is spent if not.
func (t *throttle) AdmitRead(now time.Time) (ok bool, spent string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.on[1] {
		t.bytes.refill(now)
		if t.bytes.tokens <= 0 {
			return false, "bytes/s"
		}
	}
	if t.on[0] {
		t.reads.refill(now)
		if t.reads.tokens < 1 {
			return false, "reads/s"
		}
		t.reads.tokens--
	}
	return true, ""
}

// AdmitWrite says whether a write of n bytes may run now.
func (t *throttle) AdmitWrite(now time.Time, n int) (ok bool, spent string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.on[1] {
		t.bytes.refill(now)
		if t.bytes.tokens <= 0 {
			return false, "bytes/s"
		}
		t.bytes.tokens -= float64(n)
	}
	if t.on[2] {
		t.writes.refill(now)
		if t.writes.tokens < 1 {
			return false, "writes/s"
		}
		t.writes.tokens--
	}
	return true, ""
}

// ChargeBytes debits n bytes read.
func (t *throttle) ChargeBytes(now time.Time, n int) {
	if !t.on[1] {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bytes.refill(now)
	t.bytes.tokens -= float64(n)
}
