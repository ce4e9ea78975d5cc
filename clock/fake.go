package clock

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Fake is a Clock that moves only when told to, so tests of schedules are
// exact and instant. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	changed *sync.Cond
	now     time.Time
	seq     int
	timers  []fakeTimer
}

type fakeTimer struct {
	at  time.Time
	seq int
	ch  chan time.Time
}

// NewFake returns a fake clock that reads t until advanced.
func NewFake(t time.Time) *Fake {
	f := &Fake{now: t}
	f.changed = sync.NewCond(&f.mu)
	return f
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that receives the fake time once the clock has
// been advanced by d. A d of zero or less fires at once.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.seq++
	f.timers = append(f.timers, fakeTimer{at: f.now.Add(d), seq: f.seq, ch: ch})
	f.changed.Broadcast()
	return ch
}

// Advance moves the clock forward by d, firing every timer that falls due on
// the way in order of due time (then creation), each at its own due time.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	target := f.now.Add(d)
	for {
		i := f.nextDue(target)
		if i < 0 {
			break
		}
		t := f.timers[i]
		f.timers = slices.Delete(f.timers, i, i+1)
		f.now = t.at
		t.ch <- t.at
	}
	if target.After(f.now) {
		f.now = target
	}
	f.changed.Broadcast()
}

// nextDue is the index of the earliest timer due at or before target, or -1.
func (f *Fake) nextDue(target time.Time) int {
	best := -1
	for i, t := range f.timers {
		if t.at.After(target) {
			continue
		}
		if best < 0 || t.at.Before(f.timers[best].at) ||
			(t.at.Equal(f.timers[best].at) && t.seq < f.timers[best].seq) {
			best = i
		}
	}
	return best
}

// Pending is how many timers wait to fire.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// BlockUntilTimeout is how long BlockUntil waits before it panics.
const BlockUntilTimeout = 10 * time.Second

// BlockUntil waits until at least n timers are pending. It panics after
// BlockUntilTimeout, so a test that miscounts fails instead of hanging.
func (f *Fake) BlockUntil(n int) {
	deadline := time.Now().Add(BlockUntilTimeout)
	// Wake the waiter when the deadline passes so it can give up.
	stop := time.AfterFunc(BlockUntilTimeout, func() {
		f.mu.Lock()
		f.changed.Broadcast()
		f.mu.Unlock()
	})
	defer stop.Stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.timers) < n {
		if !time.Now().Before(deadline) {
			panic(fmt.Sprintf("clock.Fake: BlockUntil(%d) gave up after %s with %d timers pending",
				n, BlockUntilTimeout, len(f.timers)))
		}
		f.changed.Wait()
	}
}
