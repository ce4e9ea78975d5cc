//go:build !linux

package native

import "time"

// sleeper is the dispatcher's sleep; off Linux, the runtime's timers.
type sleeper struct{}

func newSleeper() *sleeper { return &sleeper{} }

func (*sleeper) sleep(d time.Duration) { time.Sleep(d) }

func (*sleeper) close() {}
