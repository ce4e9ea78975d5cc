package h1

import (
	"net"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a socket with raw system calls: the socket is
// non-blocking, so no call blocks, and a raw call does not tell the
// scheduler it entered a system call. A loopback write spends tens of µs in
// the kernel delivering the bytes; through the ordinary path the runtime's
// monitor takes the P away from such a call and hands it to another thread,
// so every request wakes threads that then go back to sleep. Waiting, when
// a call would block, is still the netpoller's (syscall.RawConn), so
// deadlines and Close work as on net.Conn.
type rawIO struct {
	rc     syscall.RawConn
	p      []byte // what the current call reads into or writes from
	n      int
	errno  syscall.Errno
	readFn func(fd uintptr) bool // the methods below, bound once: no allocation per call
	wrFn   func(fd uintptr) bool
}

func newRawIO(nc net.Conn) *rawIO {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawIO{rc: rc}
	r.readFn, r.wrFn = r.readOnce, r.writeAll
	return r
}

// read reads once into p: n > 0, or 0 and nil at the peer's end of stream.
func (r *rawIO) read(p []byte) (int, error) {
	r.p, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.readFn)
	r.p = nil
	if err != nil {
		return 0, err
	}
	if r.errno != 0 {
		return 0, r.errno
	}
	return r.n, nil
}

func (r *rawIO) readOnce(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch e {
		case 0:
			r.n = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait in the netpoller, then call again
		default:
			r.errno = e
			return true
		}
	}
}

// write writes p whole.
func (r *rawIO) write(p []byte) error {
	r.p, r.errno = p, 0
	err := r.rc.Write(r.wrFn)
	r.p = nil
	if err != nil {
		return err
	}
	if r.errno != 0 {
		return r.errno
	}
	return nil
}

func (r *rawIO) writeAll(fd uintptr) bool {
	for len(r.p) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch e {
		case 0:
			r.p = r.p[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			r.errno = e
			return true
		}
	}
	return true
}
