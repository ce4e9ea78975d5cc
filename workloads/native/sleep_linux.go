package native

import (
	"runtime"
	"syscall"
	"time"
)

// pause sleeps for d. The runtime's timers round a sleep up to the next
// millisecond when the process is idle, which would show as latency from
// the intended send time: a short sleep is a nanosleep (tens of µs late)
// instead, after yielding (dispatched: the dispatcher readied workers since
// its last pause, which should run while it sleeps, not wait for its P).
func pause(d time.Duration, dispatched bool) {
	if d > 1500*time.Microsecond {
		time.Sleep(d - time.Millisecond)
		return
	}
	if dispatched {
		runtime.Gosched()
	}
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
