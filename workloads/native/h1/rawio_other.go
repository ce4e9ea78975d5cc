//go:build !linux

package h1

import "net"

// rawIO is Linux's; elsewhere the connection's own Read and Write serve.
type rawIO struct{}

func newRawIO(net.Conn) *rawIO { return nil }

func (*rawIO) read([]byte) (int, error) { panic("h1: no raw I/O here") }

func (*rawIO) write([]byte) error { panic("h1: no raw I/O here") }
