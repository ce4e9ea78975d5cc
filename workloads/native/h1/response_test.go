package h1

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// scriptConn is a net.Conn whose reads return data in pieces of at most
// step bytes; writes are dropped.
type scriptConn struct {
	data []byte
	step int
}

func (c *scriptConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.step, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}
func (c *scriptConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *scriptConn) Close() error                     { return nil }
func (c *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// next is what the answers' tests put after the answer: another answer's
// first bytes, which must be left unread.
const next = "HTTP/1.1 204 No Content\r\n\r\n"

func TestReadResponse(t *testing.T) {
	cases := []struct {
		name     string
		in       string
		head     bool
		status   int
		keep     bool
		header   string // the value of X-Test
		err      error
		leftover bool // next follows the answer and stays unread
	}{
		{name: "length", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Test: a b\r\n\r\nok", status: 200, keep: true, header: "a b", leftover: true},
		{name: "no reason", in: "HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n", status: 503, keep: true, leftover: true},
		{name: "lower-case names, tabs", in: "HTTP/1.1 200 OK\r\ncontent-length:\t3\r\nx-test:\tv\t\r\n\r\nabc", status: 200, keep: true, header: "v", leftover: true},
		{name: "bare line feeds", in: "HTTP/1.1 200 OK\nContent-Length: 1\nX-Test: lf\n\nx", status: 200, keep: true, header: "lf", leftover: true},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n", status: 200, keep: true, leftover: true},
		{name: "chunked wins over length", in: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n", status: 200, keep: true, leftover: true},
		{name: "close", in: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: false, leftover: true},
		{name: "1.0 closes", in: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: false, leftover: true},
		{name: "1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", status: 200, keep: true, leftover: true},
		{name: "until close", in: "HTTP/1.1 200 OK\r\n\r\nall of this is the body", status: 200, keep: false},
		{name: "HEAD", in: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", head: true, status: 200, keep: true, leftover: true},
		{name: "204 has no body", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, keep: true, leftover: true},
		{name: "304 has no body", in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", status: 304, keep: true, leftover: true},
		{name: "interim answers", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\nX-Test: final\r\n\r\n", status: 201, keep: true, header: "final", leftover: true},
		{name: "empty", in: "", err: io.EOF},
		{name: "cut in the head", in: "HTTP/1.1 200 OK\r\nContent-Le", err: io.ErrUnexpectedEOF},
		{name: "cut in the body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", err: io.ErrUnexpectedEOF},
		{name: "cut in a chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", err: io.ErrUnexpectedEOF},
		{name: "not HTTP", in: "SSH-2.0-OpenSSH_9.6\r\n\r\n", err: ErrMalformed},
		{name: "HTTP/2 preface answer", in: "HTTP/2 200\r\n\r\n", err: ErrMalformed},
		{name: "bad status", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: ErrMalformed},
		{name: "two lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", err: ErrMalformed},
		{name: "negative length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: ErrMalformed},
		{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: ErrMalformed},
		{name: "header line without colon", in: "HTTP/1.1 200 OK\r\nnonsense\r\n\r\n", err: ErrMalformed},
	}
	for _, tc := range cases {
		for _, step := range []int{1, 7, 1 << 20} {
			in := tc.in
			if tc.leftover {
				in += next
			}
			c := newConn(&scriptConn{data: []byte(in), step: step}, 4096)
			var resp Response
			keep, err := readResponse(c, &resp, tc.head)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("%s (reads of %d): error %v, want %v", tc.name, step, err, tc.err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s (reads of %d): %v", tc.name, step, err)
				continue
			}
			if resp.Status != tc.status || keep != tc.keep || resp.Header("x-TEST") != tc.header {
				t.Errorf("%s (reads of %d): status %d keep %v X-Test %q; want %d %v %q", tc.name, step,
					resp.Status, keep, resp.Header("X-Test"), tc.status, tc.keep, tc.header)
			}
			// Whatever follows the answer is what the connection has left.
			rest := append(append([]byte{}, c.buf[c.r:c.w]...), c.nc.(*scriptConn).data...)
			if want := map[bool]string{true: next}[tc.leftover]; string(rest) != want {
				t.Errorf("%s (reads of %d): %q left after the answer, want %q", tc.name, step, rest, want)
			}
		}
	}
}

func TestReadResponseHeadBound(t *testing.T) {
	in := "HTTP/1.1 200 OK\r\nX-Big: " + string(bytes.Repeat([]byte("a"), 5000)) + "\r\n\r\n"
	c := newConn(&scriptConn{data: []byte(in), step: 512}, 4096)
	if _, err := readResponse(c, &Response{}, false); !errors.Is(err, ErrHeadTooLarge) {
		t.Fatalf("a 5 KB head in a 4 KiB buffer: %v, want ErrHeadTooLarge", err)
	}
	line := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + string(bytes.Repeat([]byte("e"), 5000)) + "\r\n"
	c = newConn(&scriptConn{data: []byte(line), step: 512}, 16384)
	if _, err := readResponse(c, &Response{}, false); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a 5 KB chunk line: %v, want ErrMalformed", err)
	}
}

// FuzzReadResponse feeds arbitrary answers in arbitrary pieces: the reader
// must end (an answer or an error) without a panic, and never read past
// what it was given.
func FuzzReadResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), uint8(3), false)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), uint8(1), false)
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 404 Not Found\r\n\r\nbody"), uint8(9), false)
	f.Add([]byte("HTTP/1.1 200 OK\nContent-Length: 100\n\n"), uint8(200), true)
	f.Fuzz(func(t *testing.T, data []byte, step uint8, head bool) {
		c := newConn(&scriptConn{data: data, step: int(step) + 1}, 1024)
		var resp Response
		if _, err := readResponse(c, &resp, head); err == nil {
			if resp.Status < 100 || resp.Status > 999 {
				t.Fatalf("status %d accepted", resp.Status)
			}
			_ = resp.Header("Content-Type")
		}
		if c.r > c.w || c.w > len(c.buf) {
			t.Fatalf("buffer indices %d..%d of %d", c.r, c.w, len(c.buf))
		}
	})
}
