package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// errQueueTimeout is returned when no worker came free within the queue timeout.
var errQueueTimeout = errors.New("no worker free within the queue timeout")

// pool is the server-wide worker pool (the service's thread pool) and the queue
// in front of it: at most Size requests execute at once; the others wait in a
// bounded FIFO or a CoDel queue with adaptive LIFO (see poolConfig).
type pool struct {
	mu   sync.Mutex
	core poolCore
	now  func() time.Time
	obs  func(p *pool) // called after each decision (metrics gauges); may be nil
}

// newPool returns a pool configured by cfg (Workers at least 1; zero Codel
// params take DefaultCodel's). now is the clock (nil: time.Now).
func newPool(cfg poolConfig, now func() time.Time) *pool {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.Codel.Target <= 0 {
		cfg.Codel.Target = defaultCodel.Target
	}
	if cfg.Codel.Interval <= 0 {
		cfg.Codel.Interval = defaultCodel.Interval
	}
	if now == nil {
		now = time.Now
	}
	p := &pool{now: now}
	p.core = poolCore{cfg: cfg, notify: func(w *waiter, err error) { w.ch <- err }}
	return p
}

// size is the number of workers.
func (p *pool) size() int { return p.core.cfg.Workers }

// busyWorkers is the number of workers executing a request now.
func (p *pool) busyWorkers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.core.busy
}

// poolState is a snapshot of the pool for metrics and tests.
type poolState struct {
	Busy, Queued          int
	Overloaded, Backpress bool
	MinDelay              time.Duration
}

// state returns a snapshot of the pool.
func (p *pool) state() poolState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stateLocked()
}

func (p *pool) stateLocked() poolState {
	c := &p.core
	return poolState{Busy: c.busy, Queued: c.n, Overloaded: c.cfg.Mode == QueueCodel && c.codel.Overloaded,
		Backpress: c.bp, MinDelay: c.codel.MinDelay}
}

// acquire waits for a worker. It returns a release func (call it once; extra
// calls do nothing) and how long it waited. It fails with ErrQueueTimeout,
// ErrQueueFull, ErrCodel, ErrBackpressure, or ctx's error if ctx ends first.
func (p *pool) acquire(ctx context.Context) (release func(), waited time.Duration, err error) {
	start := p.now()
	p.mu.Lock()
	adm, err := p.core.admit(start)
	var w *waiter
	if adm == mustQueue {
		w = &waiter{enq: start, ch: make(chan error, 1)}
		p.core.push(w)
	}
	p.observed()
	p.mu.Unlock()
	switch adm {
	case admitNow:
		return p.releaser(), 0, nil
	case refused:
		return nil, 0, err
	}
	t := time.NewTimer(p.core.cfg.QueueTimeout)
	defer t.Stop()
	var why error
	select {
	case err := <-w.ch:
		return p.granted(err, start)
	case <-t.C:
		why = errQueueTimeout
	case <-ctx.Done():
		why = ctx.Err()
	}
	p.mu.Lock()
	removed := p.core.remove(w)
	p.observed()
	p.mu.Unlock()
	if removed {
		return nil, p.now().Sub(start), why
	}
	// Decided just as we gave up: take the decision.
	rel, waited, err := p.granted(<-w.ch, start)
	if err == nil && ctx.Err() != nil {
		rel()
		return nil, waited, ctx.Err()
	}
	return rel, waited, err
}

func (p *pool) granted(err error, start time.Time) (func(), time.Duration, error) {
	waited := p.now().Sub(start)
	if err != nil {
		return nil, waited, err
	}
	return p.releaser(), waited, nil
}

func (p *pool) releaser() func() {
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			p.mu.Lock()
			p.core.release(p.now())
			p.observed()
			p.mu.Unlock()
		}
	}
}

// observed reports the state to the observer (mu held).
func (p *pool) observed() {
	if p.obs != nil {
		p.obs(p)
	}
}
