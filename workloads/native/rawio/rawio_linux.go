// Package rawio reads and writes a socket with raw system calls. The
// socket is non-blocking, so no call blocks, and a raw call does not tell
// the Go scheduler it entered a system call. Through the ordinary path, a
// system call made while the process was idle wakes the runtime's monitor
// thread, and one that lasts (a loopback write spends tens of µs in the
// kernel delivering its bytes) has its P taken and handed to another
// thread: at a few thousand requests a second those wakes cost more CPU
// than the requests. Waiting, when a call would block, is still the
// netpoller's (syscall.RawConn), so deadlines and Close work as on
// net.Conn.
package rawio

import (
	"io"
	"sync"
	"syscall"
	"unsafe"
)

// IO is one socket's raw reads and writes. A read and a write may run at
// once; reads (and writes) take turns.
type IO struct {
	rc   syscall.RawConn
	r, w op
}

// op is one direction's call in progress, its callback bound once (no
// allocation per call).
type op struct {
	mu    sync.Mutex
	p     []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// New returns the raw I/O of c (a connection, or a non-blocking file the
// netpoller watches), or nil when c has no descriptor to call on.
func New(c any) *IO {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	x := &IO{rc: rc}
	x.r.fn, x.w.fn = x.r.readOnce, x.w.writeAll
	return x
}

// Read reads once into p: n > 0, or io.EOF at the peer's end of stream.
func (x *IO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	o := &x.r
	o.mu.Lock()
	defer o.mu.Unlock()
	o.p, o.n, o.errno = p, 0, 0
	err := x.rc.Read(o.fn)
	o.p = nil
	if err != nil {
		return 0, err
	}
	if o.errno != 0 {
		return 0, o.errno
	}
	if o.n == 0 {
		return 0, io.EOF
	}
	return o.n, nil
}

func (o *op) readOnce(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&o.p[0])), uintptr(len(o.p)))
		switch e {
		case 0:
			o.n = int(n)
			return true
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false // wait in the netpoller, then call again
		default:
			o.errno = e
			return true
		}
	}
}

// Write writes p whole; n is what was written when it failed.
func (x *IO) Write(p []byte) (int, error) {
	o := &x.w
	o.mu.Lock()
	defer o.mu.Unlock()
	o.p, o.n, o.errno = p, 0, 0
	err := x.rc.Write(o.fn)
	n := o.n
	o.p = nil
	if err != nil {
		return n, err
	}
	if o.errno != 0 {
		return n, o.errno
	}
	return n, nil
}

func (o *op) writeAll(fd uintptr) bool {
	for o.n < len(o.p) {
		rest := o.p[o.n:]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch e {
		case 0:
			o.n += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			o.errno = e
			return true
		}
	}
	return true
}

// SyscallConn is the wrapped connection's, for those who set socket
// options (gRPC's keepalive user timeout, channelz).
func (c *conn) SyscallConn() (syscall.RawConn, error) { return c.io.rc, nil }
