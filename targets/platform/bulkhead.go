package platform

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Bulkhead limits concurrent calls to one dependency. TryAcquire never waits:
// when the bulkhead is full the call fails fast. A disabled bulkhead admits all.
type Bulkhead struct {
	name    string
	limit   int
	enabled bool

	mu       sync.Mutex
	inflight int

	gauge    prometheus.Gauge
	rejected prometheus.Counter
}

// NewBulkhead returns a bulkhead named name admitting up to limit concurrent calls
// (at least 1) when enabled. m may be nil (no metrics).
func NewBulkhead(name string, limit int, enabled bool, m *Metrics) *Bulkhead {
	if limit < 1 {
		limit = 1
	}
	b := &Bulkhead{name: name, limit: limit, enabled: enabled}
	if m != nil {
		b.gauge = m.BulkInflight.WithLabelValues(name)
		b.rejected = m.BulkRejected.WithLabelValues(name)
	}
	return b
}

// Name is the bulkhead's name (its metrics label).
func (b *Bulkhead) Name() string { return b.name }

// Limit is the most concurrent calls admitted when enabled.
func (b *Bulkhead) Limit() int { return b.limit }

// Enabled says whether the bulkhead refuses calls beyond its limit.
func (b *Bulkhead) Enabled() bool { return b.enabled }

// Inflight is the number of calls holding a permit now.
func (b *Bulkhead) Inflight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inflight
}

// Admit is the bulkhead's decision: may a call start with inflight calls running?
func Admit(enabled bool, limit, inflight int) bool {
	return !enabled || inflight < limit
}

// TryAcquire takes a permit if one is free. On success it returns a release func
// (extra calls do nothing) and true; when full it returns nil and false at once.
func (b *Bulkhead) TryAcquire() (release func(), ok bool) {
	b.mu.Lock()
	if !Admit(b.enabled, b.limit, b.inflight) {
		b.mu.Unlock()
		if b.rejected != nil {
			b.rejected.Inc()
		}
		return nil, false
	}
	b.inflight++
	b.mu.Unlock()
	if b.gauge != nil {
		b.gauge.Inc()
	}
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		b.mu.Lock()
		b.inflight--
		b.mu.Unlock()
		if b.gauge != nil {
			b.gauge.Dec()
		}
	}, true
}
