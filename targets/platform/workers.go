package platform

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// ErrQueueTimeout is returned when no worker came free within the queue timeout.
var ErrQueueTimeout = errors.New("no worker free within the queue timeout")

// WorkerLimit is the server-wide worker pool: at most Size requests execute at once;
// others wait, in arrival order, up to the queue timeout.
type WorkerLimit struct {
	slots   chan struct{}
	timeout time.Duration
}

// NewWorkerLimit returns a pool of size workers (at least 1) whose queue holds a
// request at most timeout.
func NewWorkerLimit(size int, timeout time.Duration) *WorkerLimit {
	if size < 1 {
		size = 1
	}
	return &WorkerLimit{slots: make(chan struct{}, size), timeout: timeout}
}

// Size is the number of workers.
func (l *WorkerLimit) Size() int { return cap(l.slots) }

// Busy is the number of workers executing a request now.
func (l *WorkerLimit) Busy() int { return len(l.slots) }

// Acquire waits for a worker. It returns a release func (call it exactly once;
// extra calls do nothing) and how long it waited. It fails with ErrQueueTimeout
// after the queue timeout, or with ctx's error if ctx ends first.
func (l *WorkerLimit) Acquire(ctx context.Context) (release func(), waited time.Duration, err error) {
	start := time.Now()
	select {
	case l.slots <- struct{}{}:
		return l.releaser(), 0, nil
	default:
	}
	t := time.NewTimer(l.timeout)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return l.releaser(), time.Since(start), nil
	case <-t.C:
		return nil, time.Since(start), ErrQueueTimeout
	case <-ctx.Done():
		return nil, time.Since(start), ctx.Err()
	}
}

func (l *WorkerLimit) releaser() func() {
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			<-l.slots
		}
	}
}
