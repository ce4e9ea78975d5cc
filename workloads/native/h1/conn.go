package h1

import (
	"bytes"
	"errors"
	"io"
	"net"

	"github.com/chaosrun/chaosrun/workloads/native/rawio"
)

// conn is one connection with its read buffer.
type conn struct {
	nc   net.Conn // with raw reads and writes where it can (rawio)
	buf  []byte
	r, w int // unread bytes are buf[r:w]
	// used: the connection carried a request before this one.
	used bool
}

func newConn(nc net.Conn, bufSize int) *conn {
	return &conn{nc: rawio.Wrap(nc), buf: make([]byte, bufSize)}
}

// write sends p whole.
func (c *conn) write(p []byte) error {
	for len(p) > 0 {
		n, err := c.nc.Write(p)
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// fill reads more bytes into the buffer, first moving the unread ones to
// its start; io.EOF when the peer closed.
func (c *conn) fill() error {
	if c.r > 0 {
		c.w = copy(c.buf, c.buf[c.r:c.w])
		c.r = 0
	}
	if c.w == len(c.buf) {
		return ErrHeadTooLarge
	}
	n, err := c.nc.Read(c.buf[c.w:])
	c.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.EOF
	}
	return err
}

// readHead returns an answer's head up to and without its blank line,
// consuming it; it must fit in the buffer.
func (c *conn) readHead() ([]byte, error) {
	from := 0 // where to look for the blank line in buf[r:w]
	for {
		b := c.buf[c.r:c.w]
		end, skip := blankLine(b[from:])
		if end >= 0 {
			end += from
			c.r += end + skip
			return b[:end+1], nil
		}
		from = max(len(b)-2, 0)
		if err := c.fill(); err != nil {
			if err == io.EOF && c.w > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// blankLine finds the end of a head in b: the index of the line end
// before the blank line, and how many bytes from there end the head
// ("\n\r\n" or "\n\n"); -1 when b holds no blank line yet.
func blankLine(b []byte) (end, skip int) {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1, 0
		}
		i += j
		switch {
		case i+1 < len(b) && b[i+1] == '\n':
			return i, 2
		case i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n':
			return i, 3
		}
		i++
	}
}

// readLine returns the next line without its line end, consuming it; a
// line over max bytes is an error.
func (c *conn) readLine(max int) ([]byte, error) {
	from := 0
	for {
		b := c.buf[c.r:c.w]
		if i := bytes.IndexByte(b[from:], '\n'); i >= 0 {
			end := from + i
			c.r += end + 1
			return bytes.TrimSuffix(b[:end], []byte{'\r'}), nil
		}
		if len(b) > max {
			return nil, errors.Join(ErrMalformed, errors.New("h1: a line over its bound"))
		}
		from = len(b)
		if err := c.fill(); err != nil {
			return nil, unexpectedEOF(err)
		}
	}
}
