package native

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/chaosrun/chaosrun/workloads/native/rawio"
)

// sleeper is the dispatcher's precise sleep: a timerfd that the runtime's
// netpoller waits on. The runtime's own timers round a sleep up to the
// next millisecond when the process is idle (the poller's timeout is in
// milliseconds), which would show as latency from the intended send time;
// a nanosleep is precise but holds the thread and its P, so the workers'
// answers wait behind it. A timerfd is both: the kernel's high-resolution
// timer, and a parked goroutine that holds nothing while it waits.
//
// Its calls are raw (they never block: the descriptor is non-blocking): an
// ordinary system call wakes the runtime's monitor thread when the process
// was idle, which at a few thousand arrivals a second costs more CPU than
// the requests themselves.
type sleeper struct {
	fd   int       // the timer's descriptor
	io   *rawio.IO // its reads, waiting in the netpoller; nil: time.Sleep
	file *os.File
	buf  [8]byte // the expiry count a read returns
}

func newSleeper() *sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &sleeper{fd: -1}
	}
	// os.NewFile registers a non-blocking descriptor with the netpoller.
	s := &sleeper{fd: fd, file: os.NewFile(uintptr(fd), "timerfd")}
	if s.io = rawio.New(s.file); s.io == nil {
		_ = s.file.Close()
		return &sleeper{fd: -1}
	}
	return s
}

// sleep waits d, or returns at once when d ≤ 0.
func (s *sleeper) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	if s.io == nil {
		time.Sleep(d)
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	_, _, e := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(s.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if e != 0 {
		time.Sleep(d)
		return
	}
	// The read waits until the timer fires: the count of expiries.
	if _, err := s.io.Read(s.buf[:]); err != nil {
		time.Sleep(d)
	}
}

func (s *sleeper) close() {
	if s.io != nil {
		_ = s.file.Close()
	}
}
