package testbed

import (
	"fmt"
	"syscall"
)

// reservePort binds a socket to a free 127.0.0.1 port that the kernel
// picks, with address reuse on, and does not listen on it: until release,
// the kernel gives the port to no one who asks for a free one (bind to
// port 0, an outgoing connection), and a program that binds it without
// address reuse is refused, while the program it is meant for, which sets
// SO_REUSEADDR as servers do, binds and listens on it.
func reservePort() (reservation, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return reservation{}, fmt.Errorf("socket: %w", err)
	}
	fail := func(what string, err error) (reservation, error) {
		syscall.Close(fd)
		return reservation{}, fmt.Errorf("%s: %w", what, err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return fail("SO_REUSEADDR", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("bind 127.0.0.1:0", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		return fail("getsockname", fmt.Errorf("address %v is not IPv4", sa))
	}
	return reservation{port: in4.Port, release: func() { syscall.Close(fd) }, held: true}, nil
}
