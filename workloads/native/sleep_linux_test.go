package native

import (
	"testing"
	"time"
)

// TestSleeperWaits: the timer never wakes the dispatcher early, from a
// fraction of batchWindow to a whole slice of sleepUntil, nor when the
// timerfd could not be made (time.Sleep then).
func TestSleeperWaits(t *testing.T) {
	precise, fallback := newSleeper(), &sleeper{fd: -1}
	defer precise.close()
	if precise.io == nil {
		t.Fatal("no timerfd on Linux: the dispatcher would fall back to the runtime's millisecond timers")
	}
	for _, s := range []struct {
		name string
		sl   *sleeper
	}{{"timerfd", precise}, {"time.Sleep", fallback}} {
		for _, d := range []time.Duration{0, -time.Millisecond, 50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond, 20 * time.Millisecond} {
			for range 3 {
				t0 := time.Now()
				s.sl.sleep(d)
				if took := time.Since(t0); took < d {
					t.Errorf("%s: sleep(%s) returned after %s", s.name, d, took)
				}
			}
		}
	}
}
