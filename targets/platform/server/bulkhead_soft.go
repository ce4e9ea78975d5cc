package server

import (
	"fmt"
	"sync/atomic"
)

// softAdmit is the soft bulkhead's decision for a call of a key that has used
// of its reserved permits in flight: within its reservation, or in the shared
// pool (limit minus all reservations) while sharedUsed of it is taken.
func softAdmit(limit, reservedTotal, reserved, used, sharedUsed int) bool {
	return used < reserved || sharedUsed < limit-reservedTotal
}

// softUse is who holds a soft bulkhead's permits: each key's count, the
// permits taken from the shared pool and the total.
type softUse struct {
	used       map[string]int
	sharedUsed int
	total      int
}

// take counts one permit for key, whose reservation is resv.
func (u *softUse) take(key string, resv int) {
	if u.used[key] >= resv {
		u.sharedUsed++
	}
	u.used[key]++
	u.total++
}

// give returns one of key's permits.
func (u *softUse) give(key string, resv int) {
	u.used[key]--
	if u.used[key] >= resv {
		u.sharedUsed--
	}
	u.total--
}

// reshare recounts the shared pool's use under new reservations.
func (u *softUse) reshare(resv map[string]int) {
	u.sharedUsed = 0
	for k, n := range u.used {
		u.sharedUsed += max(0, n-resv[k])
	}
}

// softBulkhead is a bulkhead shared by several keys (APIs or dependencies):
// each key has a reservation nobody else may use, and the rest of the limit is
// a pool shared by all. Droppable calls are shed once shedAbove × limit calls
// run. Limit and reservations can change at runtime.
type softBulkhead struct {
	bulkheadBase
	resv      map[string]int
	resvTotal int
	use       softUse // calls holding a permit
	held      softUse // of them, those hard mode would hold (see BulkheadShadow)

	m   *Metrics
	met map[string]*bulkheadMetrics
}

// newSoftBulkhead returns a soft bulkhead named name with limit permits of
// which reservations are set aside per key (their sum at most limit). With m
// it is registered for PUT /admin/bulkheads/{name}.
func newSoftBulkhead(name string, limit int, reservations map[string]int, mode BulkheadMode, shedAbove float64, m *Metrics) (*softBulkhead, error) {
	b := &softBulkhead{bulkheadBase: bulkheadBase{name: name, mode: mode, shed: shedAbove}, m: m, met: map[string]*bulkheadMetrics{},
		use: softUse{used: map[string]int{}}, held: softUse{used: map[string]int{}}}
	if err := b.resize(limit, reservations); err != nil {
		return nil, err
	}
	if m != nil {
		m.server.bulkheads.add(b)
	}
	return b, nil
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
	b.use.reshare(resv)
	b.held.reshare(resv)
	for k := range b.met {
		b.metricsFor(k).limit(b.resv[k])
	}
	return nil
}

// inUse is the calls holding a permit, all keys together.
func (b *softBulkhead) inUse() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.use.total
}

// inflightOf is key's calls holding a permit.
func (b *softBulkhead) inflightOf(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.use.used[key]
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

// acquire takes a permit for key. Every mode decides on the permits hard
// mode would hold; a call shadow mode would have refused runs without taking
// one of those.
func (b *softBulkhead) acquire(key string, droppable bool) (func(), bulkheadDecision) {
	b.mu.Lock()
	bm := b.metricsFor(key)
	fits := softAdmit(b.limit, b.resvTotal, b.resv[key], b.held.used[key], b.held.sharedUsed)
	hard := decide(fits, b.held.total, shedLimit(b.limit, b.shed), droppable)
	d := b.mode.in(hard)
	if !d.ok() {
		b.mu.Unlock()
		bm.decided(d, hard)
		return nil, d
	}
	b.use.take(key, b.resv[key])
	holds := hard == admitted
	if holds {
		b.held.take(key, b.resv[key])
	}
	b.mu.Unlock()
	bm.decided(d, hard)
	bm.inc()
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		b.mu.Lock()
		b.use.give(key, b.resv[key])
		if holds {
			b.held.give(key, b.resv[key])
		}
		b.mu.Unlock()
		bm.dec()
	}, d
}
