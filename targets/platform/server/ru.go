package server

import (
	"fmt"
	"sync"
	"time"
)

// MilliRU is an amount of request units in thousandths, so that buckets
// count in integers.
type MilliRU int64

// RU converts whole request units to MilliRU.
func RU(x float64) MilliRU { return MilliRU(x * 1000) }

// Float is m in whole request units.
func (m MilliRU) Float() float64 { return float64(m) / 1000 }

// RUWeights price a request in request units (RU):
//
//	read  RU = 1 + Read·bytes_read + Latency·latency_ms
//	write RU = 6 + Write·bytes_written/4096 + Latency·latency_ms
type RUWeights struct {
	// Read is the RU per byte read.
	Read float64
	// Write is the RU per 4 KiB written.
	Write float64
	// Latency is the RU per millisecond the backend took.
	Latency float64
}

// DefaultRUWeights charge 1 RU per 4 KiB read, 1 RU per 4 KiB written and
// 0.01 RU per millisecond of backend time.
func DefaultRUWeights() RUWeights {
	return RUWeights{Read: 1.0 / 4096, Write: 1, Latency: 0.01}
}

// Validate says which weight is negative.
func (w RUWeights) Validate() error {
	switch {
	case w.Read < 0:
		return fmt.Errorf("RU read weight %v: must not be negative", w.Read)
	case w.Write < 0:
		return fmt.Errorf("RU write weight %v: must not be negative", w.Write)
	case w.Latency < 0:
		return fmt.Errorf("RU latency weight %v: must not be negative", w.Latency)
	}
	return nil
}

// ReadBase is the part of a read's price known before it runs.
func (w RUWeights) ReadBase() MilliRU { return RU(1) }

// ReadAfter is the part of a read's price known once it answered.
func (w RUWeights) ReadAfter(bytesRead int, latency time.Duration) MilliRU {
	return RU(w.Read*float64(bytesRead) + w.Latency*ruMillis(latency))
}

// readCost is the whole price of a read: ReadBase + ReadAfter.
func (w RUWeights) readCost(bytesRead int, latency time.Duration) MilliRU {
	return w.ReadBase() + w.ReadAfter(bytesRead, latency)
}

// WriteBase is the part of a write's price known before it runs.
func (w RUWeights) WriteBase(bytesWritten int) MilliRU {
	return RU(6 + w.Write*float64(bytesWritten)/4096)
}

// WriteAfter is the part of a write's price known once it answered.
func (w RUWeights) WriteAfter(latency time.Duration) MilliRU {
	return RU(w.Latency * ruMillis(latency))
}

// writeCost is the whole price of a write: WriteBase + WriteAfter.
func (w RUWeights) writeCost(bytesWritten int, latency time.Duration) MilliRU {
	return w.WriteBase(bytesWritten) + w.WriteAfter(latency)
}

func ruMillis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// RUBuckets holds one token bucket per caller, local to this process (no
// coordination between replicas). Every epoch each bucket is refilled by the
// quota, up to Burst. A request is admitted while its caller's balance is
// positive; what it costs is debited then and after it answered, so the
// balance may go negative and the caller waits for later epochs to pay it
// back. Time is passed in, so tests need no clock. Safe for concurrent use.
type RUBuckets struct {
	quota MilliRU // per epoch
	burst MilliRU
	epoch time.Duration

	mu      sync.Mutex
	buckets map[string]*ruBucket
}

type ruBucket struct {
	balance MilliRU
	last    time.Time // start of the epoch last refilled
}

// NewRUBuckets refills quota every epoch up to burst (burst ≥ quota > 0).
func NewRUBuckets(quota, burst MilliRU, epoch time.Duration) (*RUBuckets, error) {
	switch {
	case quota <= 0:
		return nil, fmt.Errorf("RU quota %v per epoch: must be positive", quota.Float())
	case burst < quota:
		return nil, fmt.Errorf("RU burst %v: must be at least the quota %v", burst.Float(), quota.Float())
	case epoch <= 0:
		return nil, fmt.Errorf("RU epoch %s: must be positive", epoch)
	}
	return &RUBuckets{quota: quota, burst: burst, epoch: epoch, buckets: map[string]*ruBucket{}}, nil
}

// bucket returns caller's bucket refilled up to now; b.mu is held.
func (b *RUBuckets) bucket(caller string, now time.Time) *ruBucket {
	k, ok := b.buckets[caller]
	if !ok {
		k = &ruBucket{balance: b.burst, last: now}
		b.buckets[caller] = k
		return k
	}
	if el := now.Sub(k.last); el >= b.epoch {
		n := int64(el / b.epoch)
		k.last = k.last.Add(time.Duration(n) * b.epoch)
		need := b.burst - k.balance
		if MilliRU(n) > need/b.quota+1 {
			k.balance = b.burst
		} else {
			k.balance = min(b.burst, k.balance+MilliRU(n)*b.quota)
		}
	}
	return k
}

// Admit debits cost from caller's bucket if its balance is positive and says
// whether the request may run, with the balance left.
func (b *RUBuckets) Admit(caller string, now time.Time, cost MilliRU) (ok bool, balance MilliRU) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.bucket(caller, now)
	if k.balance <= 0 {
		return false, k.balance
	}
	k.balance -= cost
	return true, k.balance
}

// Charge debits cost (known after the answer) from caller's bucket.
func (b *RUBuckets) Charge(caller string, now time.Time, cost MilliRU) MilliRU {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.bucket(caller, now)
	k.balance -= cost
	return k.balance
}
