package native

import "sync"

// Kinds of event.
const (
	evAttempt = iota + 1 // one HTTP request
	evRequest            // one logical request (its attempts, its outcome)
	evDrop               // an arrival that found no free worker
)

// Flags of a logical request.
const (
	flOK       = 1 << iota // the last attempt succeeded (2xx, 3xx)
	flGaveUp               // it ended without success
	flRejected             // the open breaker refused it
	flGoodput              // OK within the client's deadline
	flCheck                // its status is one the stream expects
)

// event is one thing a worker saw, stamped with when it ended; the
// collector turns events into series.
type event struct {
	t        int64 // Unix ns: the second it falls in
	dur      int64 // ns: an attempt's duration, a request's elapsed time
	stream   uint16
	variant  uint16 // the tag variant (key classes, shards)
	status   uint16
	kind     uint8
	flags    uint8
	attempts uint16
	retries  uint16
	bp       uint16
	marks    uint16 // custom metrics whose condition held
}

// recorder is one worker's log of events, taken by the collector. The lock
// is the worker's own: it contends only with the collector's swap.
type recorder struct {
	mu  sync.Mutex
	evs []event
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

// take returns the events so far and continues in spare.
func (r *recorder) take(spare []event) []event {
	r.mu.Lock()
	evs := r.evs
	r.evs = spare[:0]
	r.mu.Unlock()
	return evs
}
