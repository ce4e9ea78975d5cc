package server

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// BulkheadMode says what a bulkhead does with a call beyond its limit.
type BulkheadMode int

// Bulkhead modes.
const (
	// BulkheadHard refuses calls beyond the limit.
	BulkheadHard BulkheadMode = iota
	// BulkheadShadow (instrumentation only) admits everything and counts what
	// hard would have refused. It keeps hard mode's admission state aside —
	// the calls enforcement would have admitted, still running — so that a
	// call it would have refused takes no slot there, and the count is the
	// one an enforcing run would see.
	BulkheadShadow
	// BulkheadOff admits everything and counts nothing.
	BulkheadOff
)

func (m BulkheadMode) String() string {
	switch m {
	case BulkheadShadow:
		return "shadow"
	case BulkheadOff:
		return "off"
	}
	return "hard"
}

// ParseBulkheadMode reads hard, shadow (or its former name observe) or off.
func ParseBulkheadMode(s string) (BulkheadMode, error) {
	switch s {
	case "hard":
		return BulkheadHard, nil
	case "shadow", "observe":
		return BulkheadShadow, nil
	case "off":
		return BulkheadOff, nil
	}
	return 0, fmt.Errorf("bulkhead mode %q: want hard, shadow or off", s)
}

// bulkheadDecision is what a bulkhead did with one call.
type bulkheadDecision int

// Bulkhead decisions.
const (
	// admitted: within the limit (or the bulkhead is off).
	admitted bulkheadDecision = iota
	// rejected: the limit is reached.
	rejected
	// shed: a droppable call above the shedding threshold.
	shed
	// wouldReject: shadow mode admitted a call hard mode would have refused.
	wouldReject
)

func (d bulkheadDecision) String() string {
	return [...]string{"admit", "reject", "shed", "would-reject"}[d]
}

// ok says whether the call may go ahead.
func (d bulkheadDecision) ok() bool { return d == admitted || d == wouldReject }

// Reasons a shadow-mode limit would have refused a call
// (platform_shadow_rejections_total).
const (
	shadowFull      = "full"       // a bulkhead at its limit
	shadowShed      = "shed"       // a droppable call above the shedding threshold
	shadowOverQuota = "over-quota" // a caller over its rate quota
)

// shedLimit is how many calls may run before droppable ones are shed:
// above × limit, rounded down, at least 1 (above ≤ 0 or ≥ 1: the limit itself).
func shedLimit(limit int, above float64) int {
	if above <= 0 || above >= 1 {
		return limit
	}
	return max(1, int(above*float64(limit)))
}

// decide is hard mode's decision for one call given the calls it holds
// admitted: fits is what the limit says; droppable calls are also measured
// against the shedding limit.
func decide(fits bool, held, shedLimit int, droppable bool) bulkheadDecision {
	switch {
	case !fits:
		return rejected
	case droppable && held >= shedLimit:
		return shed
	}
	return admitted
}

// in turns hard mode's decision d into mode's: off admits everything, shadow
// admits what hard refuses and says it would have refused it.
func (m BulkheadMode) in(d bulkheadDecision) bulkheadDecision {
	switch {
	case m == BulkheadOff:
		return admitted
	case m == BulkheadShadow && d != admitted:
		return wouldReject
	}
	return d
}

// ConcurrencyLimit is the bulkhead one kind of call goes through (a *Bulkhead).
type ConcurrencyLimit interface {
	// Name names the bulkhead (and key) in answers and metrics.
	Name() string
	// acquireFor takes a permit; release is nil unless d.ok().
	acquireFor(droppable bool) (release func(), d bulkheadDecision)
}

// bulkheadBase is what every bulkhead has: a name, a shedding threshold, and
// a mode and limit that change at runtime under mu.
type bulkheadBase struct {
	name string
	shed float64

	mu    sync.Mutex
	mode  BulkheadMode
	limit int
}

// Name is the bulkhead's name (its metrics label).
func (b *bulkheadBase) Name() string { return b.name }

// Limit is the most concurrent calls admitted in hard mode.
func (b *bulkheadBase) Limit() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// bulkMode is the bulkhead's mode.
func (b *bulkheadBase) bulkMode() BulkheadMode {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mode
}

// setMode switches the mode; calls in flight keep the permits they hold.
func (b *bulkheadBase) setMode(m BulkheadMode) {
	b.mu.Lock()
	b.mode = m
	b.mu.Unlock()
}

// Bulkhead limits concurrent calls to one API or dependency. It never waits:
// when full the call fails fast. Its limit and mode can change at runtime.
type Bulkhead struct {
	bulkheadBase
	inflight int // calls holding a permit
	// held is the calls hard mode would hold admitted: in hard mode every
	// call in flight, in shadow mode those it would not have refused.
	held int

	met bulkheadMetrics
}

// NewBulkheadMode returns a bulkhead in mode; droppable calls are shed once
// shedAbove × limit calls run (0: never shed). With m it is registered for
// PUT /admin/bulkheads/{name}.
func NewBulkheadMode(name string, limit int, mode BulkheadMode, shedAbove float64, m *Metrics) *Bulkhead {
	b := &Bulkhead{bulkheadBase: bulkheadBase{name: name, limit: max(limit, 1), mode: mode, shed: shedAbove}}
	b.met = newBulkheadMetrics(m, name)
	b.met.limit(b.limit)
	if m != nil {
		m.server.bulkheads.add(b)
	}
	return b
}

// setLimit resizes the bulkhead; calls in flight above a smaller limit finish.
func (b *Bulkhead) setLimit(n int) error {
	if n < 1 {
		return fmt.Errorf("bulkhead %s: limit %d: must be at least 1", b.name, n)
	}
	b.mu.Lock()
	b.limit = n
	b.mu.Unlock()
	b.met.limit(n)
	return nil
}

// inUse is the number of calls holding a permit now.
func (b *Bulkhead) inUse() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inflight
}

// TryAcquire takes a permit if one is free. On success it returns a release func
// (extra calls do nothing) and true; when full it returns nil and false at once.
func (b *Bulkhead) TryAcquire() (release func(), ok bool) {
	rel, d := b.acquireFor(false)
	return rel, d.ok()
}

// acquireFor implements ConcurrencyLimit. Every mode decides on the calls
// hard mode would hold; a call shadow mode would have refused runs without
// taking one of those slots.
func (b *Bulkhead) acquireFor(droppable bool) (func(), bulkheadDecision) {
	b.mu.Lock()
	hard := decide(b.held < b.limit, b.held, shedLimit(b.limit, b.shed), droppable)
	d := b.mode.in(hard)
	if !d.ok() {
		b.mu.Unlock()
		b.met.decided(d, hard)
		return nil, d
	}
	b.inflight++
	holds := hard == admitted
	if holds {
		b.held++
	}
	b.mu.Unlock()
	b.met.decided(d, hard)
	b.met.inc()
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		b.mu.Lock()
		b.inflight--
		if holds {
			b.held--
		}
		b.mu.Unlock()
		b.met.dec()
	}, d
}

// bulkheadMetrics are one bulkhead's series; the zero value records nothing.
type bulkheadMetrics struct {
	gauge, limitG prometheus.Gauge
	rejected      prometheus.Counter
	decisions     [4]prometheus.Counter
	shadow        [3]prometheus.Counter // by hard mode's decision: -, full, shed
}

func newBulkheadMetrics(m *Metrics, name string) bulkheadMetrics {
	if m == nil {
		return bulkheadMetrics{}
	}
	x := m.server
	bm := bulkheadMetrics{
		gauge:    m.bulkInflight.WithLabelValues(name),
		rejected: m.bulkRejected.WithLabelValues(name),
		limitG:   x.BulkLimit.WithLabelValues(name),
	}
	for d := range bm.decisions {
		bm.decisions[d] = x.BulkDecisions.WithLabelValues(name, bulkheadDecision(d).String())
	}
	bm.shadow[rejected] = x.ShadowRejections.WithLabelValues(limitBulkhead, name, shadowFull)
	bm.shadow[shed] = x.ShadowRejections.WithLabelValues(limitBulkhead, name, shadowShed)
	return bm
}

// decided counts decision d, hard being what hard mode decided.
func (bm *bulkheadMetrics) decided(d, hard bulkheadDecision) {
	if bm.gauge == nil {
		return
	}
	bm.decisions[d].Inc()
	switch {
	case d == rejected || d == shed:
		bm.rejected.Inc()
	case d == wouldReject:
		bm.shadow[hard].Inc()
	}
}

func (bm *bulkheadMetrics) inc() {
	if bm.gauge != nil {
		bm.gauge.Inc()
	}
}

func (bm *bulkheadMetrics) dec() {
	if bm.gauge != nil {
		bm.gauge.Dec()
	}
}

func (bm *bulkheadMetrics) limit(n int) {
	if bm.limitG != nil {
		bm.limitG.Set(float64(n))
	}
}
