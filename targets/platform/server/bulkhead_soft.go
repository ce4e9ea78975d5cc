package server

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// softAdmit is the soft bulkhead's decision for a call of a key that has used
// of its reserved permits in flight: within its reservation, or in the shared
// pool (limit minus all reservations) while sharedUsed of it is taken.
func softAdmit(limit, reservedTotal, reserved, used, sharedUsed int) bool {
	return used < reserved || sharedUsed < limit-reservedTotal
}

// softBulkhead is a bulkhead shared by several keys (APIs or dependencies):
// each key has a reservation nobody else may use, and the rest of the limit is
// a pool shared by all. Droppable calls are shed once shedAbove × limit calls
// run. Limit and reservations can change at runtime.
type softBulkhead struct {
	name string
	mode BulkheadMode
	shed float64

	mu         sync.Mutex
	limit      int
	resv       map[string]int
	resvTotal  int
	used       map[string]int
	sharedUsed int
	total      int

	m   *Metrics
	met map[string]*bulkheadMetrics
}

// newSoftBulkhead returns a soft bulkhead named name with limit permits of
// which reservations are set aside per key (their sum at most limit). With m
// it is registered for PUT /admin/bulkheads/{name}.
func newSoftBulkhead(name string, limit int, reservations map[string]int, mode BulkheadMode, shedAbove float64, m *Metrics) (*softBulkhead, error) {
	b := &softBulkhead{name: name, mode: mode, shed: shedAbove, used: map[string]int{}, m: m, met: map[string]*bulkheadMetrics{}}
	if err := b.resize(limit, reservations); err != nil {
		return nil, err
	}
	if m != nil {
		m.server.bulkheads.add(b)
	}
	return b, nil
}

// Name is the bulkhead's name.
func (b *softBulkhead) Name() string { return b.name }

// Limit is the total permits.
func (b *softBulkhead) Limit() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// reservations returns a copy of the per-key reservations.
func (b *softBulkhead) reservations() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]int, len(b.resv))
	for k, v := range b.resv {
		out[k] = v
	}
	return out
}

// setLimit changes the total, keeping the reservations.
func (b *softBulkhead) setLimit(n int) error { return b.resize(n, nil) }

// resize sets the total and, when reservations is non-nil, replaces them.
func (b *softBulkhead) resize(limit int, reservations map[string]int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	resv := b.resv
	if reservations != nil {
		resv = make(map[string]int, len(reservations))
		for k, v := range reservations {
			if v < 0 {
				return fmt.Errorf("bulkhead %s: reservation %s=%d: must not be negative", b.name, k, v)
			}
			resv[k] = v
		}
	}
	sum := 0
	for _, v := range resv {
		sum += v
	}
	if limit < 1 || sum > limit {
		return fmt.Errorf("bulkhead %s: limit %d: must be at least 1 and at least the reservations' sum %d", b.name, limit, sum)
	}
	b.limit, b.resv, b.resvTotal = limit, resv, sum
	b.sharedUsed = 0
	for k, u := range b.used {
		b.sharedUsed += max(0, u-b.resv[k])
	}
	for k := range b.met {
		b.metricsFor(k).limit(b.resv[k])
	}
	return nil
}

// inUse is the calls holding a permit, all keys together.
func (b *softBulkhead) inUse() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// inflightOf is key's calls holding a permit.
func (b *softBulkhead) inflightOf(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used[key]
}

// metricsFor returns key's series, labelled NAME/KEY (mu held).
func (b *softBulkhead) metricsFor(key string) *bulkheadMetrics {
	bm := b.met[key]
	if bm == nil {
		v := newBulkheadMetrics(b.m, b.name+"/"+key)
		bm = &v
		b.met[key] = bm
		bm.limit(b.resv[key])
	}
	return bm
}

// acquire takes a permit for key.
func (b *softBulkhead) acquire(key string, droppable bool) (func(), bulkheadDecision) {
	b.mu.Lock()
	bm := b.metricsFor(key)
	u := b.used[key]
	fits := softAdmit(b.limit, b.resvTotal, b.resv[key], u, b.sharedUsed)
	d := decide(b.mode, fits, b.total, shedLimit(b.limit, b.shed), droppable)
	if !d.ok() {
		b.mu.Unlock()
		bm.decided(d)
		return nil, d
	}
	if u >= b.resv[key] {
		b.sharedUsed++
	}
	b.used[key] = u + 1
	b.total++
	b.mu.Unlock()
	bm.decided(d)
	bm.inc()
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		b.mu.Lock()
		b.used[key]--
		if b.used[key] >= b.resv[key] {
			b.sharedUsed--
		}
		b.total--
		b.mu.Unlock()
		bm.dec()
	}, d
}
