// Package clock is the harness's source of time, replaceable in tests.
package clock

import "time"

// Clock tells the time and waits.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns the current wall-clock time.
func (Real) Now() time.Time { return time.Now() }

// After waits on the wall clock.
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }
