package rawio

import "net"

// conn is a net.Conn whose Read and Write are raw.
type conn struct {
	net.Conn
	io *IO
}

func (c *conn) Read(p []byte) (int, error)  { return c.io.Read(p) }
func (c *conn) Write(p []byte) (int, error) { return c.io.Write(p) }

// Wrap returns nc with raw reads and writes, or nc itself where it has no
// raw I/O.
func Wrap(nc net.Conn) net.Conn {
	if x := New(nc); x != nil {
		return &conn{Conn: nc, io: x}
	}
	return nc
}
