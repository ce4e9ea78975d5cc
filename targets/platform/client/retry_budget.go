package client

import (
	"sync"
	"time"
)

// budgetBuckets is how many slices the budget's sliding window has.
const budgetBuckets = 10

// retryBudget caps retries to a share of requests over a sliding window
// (Finagle's and gRPC's retry budget): a retry is allowed while the retries in
// the window, it included, are at most max(Min, Ratio × requests in the window).
// The window moves in tenths. Time is passed in, so decisions are exact in tests.
//
// failsafe-go's budget package bounds the share of retries among executions in
// flight at one instant, which does not cap retries over time when calls are
// fast; hence this one.
type retryBudget struct {
	ratio  float64
	min    int
	width  time.Duration // of one bucket
	mu     sync.Mutex
	bucket [budgetBuckets]budgetBucket
}

type budgetBucket struct {
	epoch   int64 // which width-long slice of time it holds
	reqs    int
	retries int
}

// newRetryBudget returns a budget allowing ratio retries per request over
// window, and at least min retries per window whatever the traffic.
func newRetryBudget(ratio float64, min int, window time.Duration) *retryBudget {
	width := max(window/budgetBuckets, time.Millisecond)
	return &retryBudget{ratio: ratio, min: min, width: width}
}

func (b *retryBudget) slot(now time.Time) *budgetBucket {
	e := now.UnixNano() / int64(b.width)
	s := &b.bucket[int(e%budgetBuckets)]
	if s.epoch != e {
		*s = budgetBucket{epoch: e}
	}
	return s
}

// sums returns the requests and retries in the window ending at now.
func (b *retryBudget) sums(now time.Time) (reqs, retries int) {
	e := now.UnixNano() / int64(b.width)
	for _, s := range b.bucket {
		if s.epoch > e-budgetBuckets && s.epoch <= e {
			reqs += s.reqs
			retries += s.retries
		}
	}
	return reqs, retries
}

// request records a request (a first attempt) at now.
func (b *retryBudget) request(now time.Time) {
	b.mu.Lock()
	b.slot(now).reqs++
	b.mu.Unlock()
}

// tryRetry withdraws a retry at now and says whether the budget allowed it.
func (b *retryBudget) tryRetry(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	reqs, retries := b.sums(now)
	if float64(retries+1) > max(float64(b.min), b.ratio*float64(reqs)) {
		return false
	}
	b.slot(now).retries++
	return true
}

// window returns the requests and retries counted in the window ending at now.
func (b *retryBudget) window(now time.Time) (requests, retries int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sums(now)
}
