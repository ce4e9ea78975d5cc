package h1

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Errors of a malformed or oversized answer.
var (
	ErrHeadTooLarge = errors.New("h1: the answer's head is over the read buffer")
	ErrMalformed    = errors.New("h1: malformed answer")
)

// Response is the head of the last answer: its status and header block,
// valid until the next request on the same Response.
type Response struct {
	Status int
	// head holds the header lines, from after the status line to the
	// blank line.
	head []byte
}

// Header returns the first value of the named header (ASCII case
// ignored), or "" without one.
func (r *Response) Header(name string) string {
	rest := r.head
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		k, v, ok := bytes.Cut(line, []byte{':'})
		if ok && asciiEqualFold(k, name) {
			return string(trimSpace(v))
		}
	}
	return ""
}

// body is how an answer's body is delimited.
type body struct {
	length  int64 // with Content-Length; -1 without
	chunked bool
	toClose bool // read until the server closes
}

// readResponse reads one answer from c into resp and skips its body;
// keep reports whether the connection may carry another request.
func readResponse(c *conn, resp *Response, headReq bool) (keep bool, err error) {
	for {
		head, err := c.readHead()
		if err != nil {
			return false, err
		}
		status, minor, rest, err := parseStatusLine(head)
		if err != nil {
			return false, err
		}
		if status >= 100 && status < 200 && status != 101 {
			continue // an interim answer (100 Continue, 103): the final one follows
		}
		resp.Status = status
		resp.head = append(resp.head[:0], rest...)
		b, keep, err := framing(resp.head, status, minor, headReq)
		if err != nil {
			return false, err
		}
		if err := c.skipBody(b); err != nil {
			return false, err
		}
		return keep && !b.toClose && status != 101, nil
	}
}

// parseStatusLine reads "HTTP/1.x SSS reason" off head and returns the
// status, the minor version and the header lines after it.
func parseStatusLine(head []byte) (status, minor int, rest []byte, err error) {
	line, rest, _ := bytes.Cut(head, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, 0, nil, fmt.Errorf("%w: status line %.40q", ErrMalformed, line)
	}
	minor = int(line[7] - '0')
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return 0, 0, nil, fmt.Errorf("%w: status line %.40q", ErrMalformed, line)
		}
		status = status*10 + int(d-'0')
	}
	if minor < 0 || minor > 1 || status < 100 || (len(line) > 12 && line[12] != ' ') {
		return 0, 0, nil, fmt.Errorf("%w: status line %.40q", ErrMalformed, line)
	}
	return status, minor, rest, nil
}

// framing reads from the header lines how the body ends and whether the
// connection stays open (RFC 9112 §6.3).
func framing(head []byte, status, minor int, headReq bool) (body, bool, error) {
	b := body{length: -1}
	keep := minor == 1
	rest := head
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		k, v, ok := bytes.Cut(bytes.TrimSuffix(line, []byte{'\r'}), []byte{':'})
		if !ok {
			if len(trimSpace(line)) == 0 {
				continue
			}
			return b, false, fmt.Errorf("%w: header line %.40q", ErrMalformed, line)
		}
		v = trimSpace(v)
		switch {
		case asciiEqualFold(k, "content-length"):
			n, ok := parseLength(v)
			if !ok || (b.length >= 0 && b.length != n) {
				return b, false, fmt.Errorf("%w: Content-Length %.40q", ErrMalformed, v)
			}
			b.length = n
		case asciiEqualFold(k, "transfer-encoding"):
			b.chunked = hasToken(v, "chunked")
		case asciiEqualFold(k, "connection"):
			if hasToken(v, "close") {
				keep = false
			} else if hasToken(v, "keep-alive") {
				keep = true
			}
		}
	}
	switch {
	case headReq || status == 204 || status == 304 || status == 101:
		return body{}, keep, nil
	case b.chunked:
		b.length = -1
	case b.length < 0:
		b.toClose = true
	}
	return b, keep, nil
}

func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, d := range v {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}

// hasToken reports whether the comma-separated list v holds tok (ASCII
// case ignored).
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		var item []byte
		item, v, _ = bytes.Cut(v, []byte{','})
		if asciiEqualFold(trimSpace(item), tok) {
			return true
		}
	}
	return false
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// skipBody reads past the answer's body.
func (c *conn) skipBody(b body) error {
	switch {
	case b.chunked:
		return c.skipChunked()
	case b.toClose:
		for {
			c.r = c.w
			if err := c.fill(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	default:
		return c.skipN(b.length)
	}
}

// skipN reads past n bytes.
func (c *conn) skipN(n int64) error {
	for {
		have := int64(c.w - c.r)
		if have >= n {
			c.r += int(n)
			return nil
		}
		n -= have
		c.r = c.w
		if err := c.fill(); err != nil {
			return unexpectedEOF(err)
		}
	}
}

// maxChunkLine bounds a chunk's size line (with extensions) and a trailer
// line.
const maxChunkLine = 4096

// skipChunked reads past a chunked body and its trailers.
func (c *conn) skipChunked() error {
	for {
		line, err := c.readLine(maxChunkLine)
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(line, []byte{';'})
		n, ok := parseHex(trimSpace(size))
		if !ok {
			return fmt.Errorf("%w: chunk size %.40q", ErrMalformed, line)
		}
		if n == 0 {
			break
		}
		if err := c.skipN(n); err != nil {
			return err
		}
		if crlf, err := c.readLine(maxChunkLine); err != nil {
			return err
		} else if len(trimSpace(crlf)) != 0 {
			return fmt.Errorf("%w: %d bytes after a chunk", ErrMalformed, len(crlf))
		}
	}
	for { // trailers, up to the blank line
		line, err := c.readLine(maxChunkLine)
		if err != nil {
			return err
		}
		if len(trimSpace(line)) == 0 {
			return nil
		}
	}
}

func parseHex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, d := range b {
		switch {
		case '0' <= d && d <= '9':
			d -= '0'
		case 'a' <= d && d <= 'f':
			d -= 'a' - 10
		case 'A' <= d && d <= 'F':
			d -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	return n, true
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
