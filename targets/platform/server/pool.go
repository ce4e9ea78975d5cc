package server

import (
	"errors"
	"fmt"
	"time"
)

// QueueMode is the discipline of the queue in front of the worker pool.
type QueueMode int

// Queue disciplines.
const (
	// QueueFIFO is a classic bounded FIFO: first come, first served, up to
	// MaxQueue waiting, each for at most the queue timeout.
	QueueFIFO QueueMode = iota
	// QueueCodel is CoDel with adaptive LIFO: FIFO while healthy; while
	// overloaded, LIFO, and requests that waited more than 2×target fail fast.
	QueueCodel
)

func (m QueueMode) String() string {
	if m == QueueCodel {
		return "codel"
	}
	return "fifo"
}

// parseQueueMode reads "codel" or "fifo".
func parseQueueMode(s string) (QueueMode, error) {
	switch s {
	case "codel":
		return QueueCodel, nil
	case "fifo":
		return QueueFIFO, nil
	}
	return 0, fmt.Errorf("queue mode %q: want codel or fifo", s)
}

// Errors a request may get instead of a worker.
var (
	// errCodel: the request waited more than 2×target while the queue was overloaded.
	errCodel = errors.New("queueing delay above 2×target while the queue is overloaded (codel)")
	// errBackpressure: the queue is overloaded; the caller should back off.
	errBackpressure = errors.New("queue overloaded: back pressure")
	// errQueueFull: the bounded queue holds its maximum already.
	errQueueFull = errors.New("queue full")
)

// poolConfig configures a Pool: workers and the queue in front of them.
type poolConfig struct {
	Mode    QueueMode
	Workers int
	// MaxQueue bounds the requests waiting (0: unbounded).
	MaxQueue int
	// QueueTimeout is the longest any request waits, in either mode.
	QueueTimeout time.Duration
	// Codel is used in QueueCodel mode.
	Codel CodelParams
	// Backpressure refuses arrivals with ErrBackpressure while the CoDel queue
	// is overloaded, until fewer than Watermark requests wait (QueueCodel only).
	Backpressure bool
	Watermark    int
}

// waiter is one queued request, an intrusive list node.
type waiter struct {
	enq        time.Time
	prev, next *waiter
	queued     bool
	ch         chan error // buffered 1: nil = a worker is yours; else why not
}

// admission is the core's answer to an arrival.
type admission int

const (
	admitNow admission = iota
	mustQueue
	refused
)

// poolCore is the pool's logic, a function of (state, now) without locks,
// goroutines or clocks: the Pool wraps it, tests drive it directly.
type poolCore struct {
	cfg        poolConfig
	busy       int
	head, tail *waiter // head is the oldest
	n          int
	codel      codelState
	bp         bool
	// notify tells a queued request its fate (nil: run; else the error).
	notify func(w *waiter, err error)
}

// admit decides for a request arriving at now: run at once, queue, or refuse (err).
func (c *poolCore) admit(now time.Time) (admission, error) {
	if c.cfg.Mode == QueueCodel {
		c.sweep(now)
	}
	if c.busy < c.cfg.Workers && c.n == 0 {
		if c.cfg.Mode == QueueCodel {
			c.codel.observe(c.cfg.Codel, now, 0) // never drops: delay 0
		}
		c.busy++
		return admitNow, nil
	}
	if c.cfg.Mode == QueueCodel && c.cfg.Backpressure {
		c.bp = backpressureOn(c.bp, c.codel.tick(c.cfg.Codel, now), c.n, c.cfg.Watermark)
		if c.bp {
			return refused, errBackpressure
		}
	}
	if c.cfg.MaxQueue > 0 && c.n >= c.cfg.MaxQueue {
		return refused, errQueueFull
	}
	return mustQueue, nil
}

// push queues w (the newest).
func (c *poolCore) push(w *waiter) {
	w.queued, w.prev, w.next = true, c.tail, nil
	if c.tail != nil {
		c.tail.next = w
	} else {
		c.head = w
	}
	c.tail = w
	c.n++
}

// remove takes w out of the queue; false if it was not queued.
func (c *poolCore) remove(w *waiter) bool {
	if !w.queued {
		return false
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		c.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		c.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	c.n--
	return true
}

// release frees a worker at now and hands free workers to queued requests.
func (c *poolCore) release(now time.Time) {
	c.busy--
	c.dispatch(now)
}

// dispatch gives free workers to queued requests: FIFO, or in CoDel mode LIFO
// while overloaded, failing those CoDel drops; then sweeps stale requests.
func (c *poolCore) dispatch(now time.Time) {
	for c.busy < c.cfg.Workers && c.n > 0 {
		w := c.head
		if c.cfg.Mode == QueueCodel {
			if c.codel.tick(c.cfg.Codel, now) {
				w = c.tail // adaptive LIFO
			}
			c.remove(w)
			if c.codel.observe(c.cfg.Codel, now, now.Sub(w.enq)) {
				c.notify(w, errCodel)
				continue
			}
		} else {
			c.remove(w)
		}
		c.busy++
		c.notify(w, nil)
	}
	if c.cfg.Mode == QueueCodel {
		c.sweep(now)
	}
}

// sweep fails fast, while overloaded, every queued request that has waited
// more than 2×target (they sit at the old end; LIFO would never reach them).
func (c *poolCore) sweep(now time.Time) {
	if !c.codel.tick(c.cfg.Codel, now) {
		return
	}
	slough := c.cfg.Codel.slough()
	for c.head != nil && now.Sub(c.head.enq) > slough {
		w := c.head
		c.remove(w)
		c.notify(w, errCodel)
	}
}
