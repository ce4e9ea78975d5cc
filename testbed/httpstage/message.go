package httpstage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Limits of what the stage parses; anything larger is passed through
// unparsed (tunnelled), never rejected.
const (
	maxHeadBytes = 64 << 10 // request or response line plus header fields
	maxLineBytes = 16 << 10 // one line; also the size of the read buffers
	maxFields    = 200
)

// errMalformed marks input the stage does not parse as HTTP/1.x; the
// connection is then tunnelled as raw bytes.
var errMalformed = errors.New("not an HTTP/1.x message the stage parses")

// field is one header field; name and value point into the head's raw bytes.
type field struct{ name, value []byte }

// head is a parsed request or response head. Its slices point into raw,
// which is exactly the bytes read from the wire.
type head struct {
	raw []byte
	// Request: method and target; response: status.
	method, target []byte
	status         int
	minor          int // HTTP/1.minor
	fields         []field
	// length is the Content-Length, or -1 when there is none.
	length  int64
	chunked bool
	// keepAlive is false when the message asks to close the connection.
	keepAlive bool
	expect100 bool
	// upgradeH2C: the message names h2c in Upgrade (a 101 switching to
	// HTTP/2 over plaintext).
	upgradeH2C bool
}

// framing says how a message's body is delimited.
type framing int

const (
	noBody      framing = iota
	lengthBody          // Content-Length bytes
	chunkedBody         // chunked transfer coding
	closeBody           // until the server closes (responses only)
	tunnelBody          // switch to raw bytes both ways (101, CONNECT 2xx)
)

// readHead reads one message head into h (reusing its buffers). It returns
// io.EOF when the stream ends cleanly before a message starts, and
// errMalformed (with h.raw holding every byte consumed) when the head is not
// one the stage parses.
func readHead(r *bufio.Reader, h *head, request bool) error {
	h.raw = h.raw[:0]
	h.fields = h.fields[:0]
	h.method, h.target, h.status, h.minor = nil, nil, 0, 0
	h.length, h.chunked, h.keepAlive, h.expect100 = -1, false, true, false
	var offs [][2]int // value offsets are fixed up once raw stops growing
	first := true
	for {
		line, err := r.ReadSlice('\n')
		h.raw = append(h.raw, line...)
		if err != nil {
			if len(h.raw) == 0 && errors.Is(err, io.EOF) {
				return io.EOF
			}
			if errors.Is(err, bufio.ErrBufferFull) || (errors.Is(err, io.EOF) && len(h.raw) > 0) {
				return errMalformed
			}
			return err
		}
		if len(h.raw) > maxHeadBytes {
			return errMalformed
		}
		body := trimEOL(line)
		if first {
			if len(body) == 0 && len(h.raw) <= 4 && request {
				continue // RFC 9112 2.2: ignore an empty line before a request
			}
			first = false
			start := len(h.raw) - len(line)
			if err := h.parseStart(start, len(body), request); err != nil {
				return err
			}
			continue
		}
		if len(body) == 0 {
			break
		}
		if len(offs) >= maxFields || body[0] == ' ' || body[0] == '\t' {
			return errMalformed // too many fields, or obsolete line folding
		}
		colon := bytes.IndexByte(body, ':')
		if colon <= 0 || !isToken(body[:colon]) {
			return errMalformed
		}
		start := len(h.raw) - len(line)
		vs, ve := colon+1, len(body)
		for vs < ve && (body[vs] == ' ' || body[vs] == '\t') {
			vs++
		}
		for ve > vs && (body[ve-1] == ' ' || body[ve-1] == '\t') {
			ve--
		}
		offs = append(offs, [2]int{start, start + colon}, [2]int{start + vs, start + ve})
	}
	for i := 0; i < len(offs); i += 2 {
		h.fields = append(h.fields, field{name: h.raw[offs[i][0]:offs[i][1]], value: h.raw[offs[i+1][0]:offs[i+1][1]]})
	}
	if h.parseStart(h.startOffset(), -1, request) != nil {
		return errMalformed
	}
	return h.interpret(request)
}

// startOffset is where the start line begins in raw (after ignored CRLFs).
func (h *head) startOffset() int {
	i := 0
	for i < len(h.raw) && (h.raw[i] == '\r' || h.raw[i] == '\n') {
		i++
	}
	return i
}

// parseStart parses the start line at raw[start:]; n is its length without
// the line end, or -1 to find it again (raw may have moved since).
func (h *head) parseStart(start, n int, request bool) error {
	line := h.raw[start:]
	if n < 0 {
		n = bytes.IndexByte(line, '\n')
		if n < 0 {
			return errMalformed
		}
		line = trimEOL(line[:n+1])
	} else {
		line = line[:n]
	}
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return errMalformed
	}
	if request {
		sp2 := bytes.LastIndexByte(line, ' ')
		if sp2 <= sp1+1 || !isToken(line[:sp1]) {
			return errMalformed
		}
		minor, ok := parseVersion(line[sp2+1:])
		target := line[sp1+1 : sp2]
		if !ok || bytes.ContainsAny(target, " \t") {
			return errMalformed
		}
		h.method, h.target, h.minor = line[:sp1], target, minor
		return nil
	}
	minor, ok := parseVersion(line[:sp1])
	rest := line[sp1+1:]
	if !ok || len(rest) < 3 || (len(rest) > 3 && rest[3] != ' ') {
		return errMalformed
	}
	code, err := strconv.Atoi(string(rest[:3]))
	if err != nil || code < 100 {
		return errMalformed
	}
	h.status, h.minor = code, minor
	return nil
}

// interpret reads the fields that frame the message and the connection.
func (h *head) interpret(request bool) error {
	h.keepAlive, h.upgradeH2C = h.minor >= 1, false
	var te []byte
	for _, f := range h.fields {
		switch {
		case bytes.EqualFold(f.name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(f.value), 10, 64)
			if err != nil || n < 0 || (h.length >= 0 && n != h.length) {
				return errMalformed
			}
			h.length = n
		case bytes.EqualFold(f.name, []byte("Transfer-Encoding")):
			te = append(append(te, ','), f.value...)
		case bytes.EqualFold(f.name, []byte("Connection")):
			for _, tok := range bytes.Split(f.value, []byte(",")) {
				tok = bytes.TrimSpace(tok)
				switch {
				case bytes.EqualFold(tok, []byte("close")):
					h.keepAlive = false
				case bytes.EqualFold(tok, []byte("keep-alive")) && h.minor == 0:
					h.keepAlive = true
				}
			}
		case bytes.EqualFold(f.name, []byte("Upgrade")):
			h.upgradeH2C = bytes.EqualFold(bytes.TrimSpace(f.value), []byte("h2c"))
		case request && bytes.EqualFold(f.name, []byte("Expect")):
			h.expect100 = bytes.EqualFold(f.value, []byte("100-continue"))
		}
	}
	if te != nil {
		codings := bytes.Split(te[1:], []byte(","))
		last := bytes.TrimSpace(codings[len(codings)-1])
		h.chunked = bytes.EqualFold(last, []byte("chunked"))
		if h.length >= 0 || (request && !h.chunked) || h.minor == 0 {
			// Both framings, or a request the server must refuse: the
			// upstream decides, on raw bytes.
			return errMalformed
		}
	}
	return nil
}

// requestFraming is how a request's body is delimited.
func (h *head) requestFraming() framing {
	switch {
	case h.chunked:
		return chunkedBody
	case h.length > 0:
		return lengthBody
	}
	return noBody
}

// responseFraming is how the body of response h to a request with the given
// method is delimited (RFC 9112 6.3).
func (h *head) responseFraming(method []byte) framing {
	switch {
	case h.status == 101, bytes.Equal(method, []byte("CONNECT")) && h.status/100 == 2:
		return tunnelBody
	case bytes.Equal(method, []byte("HEAD")), h.status/100 == 1, h.status == 204, h.status == 304:
		return noBody
	case h.chunked:
		return chunkedBody
	case h.length >= 0:
		if h.length == 0 {
			return noBody
		}
		return lengthBody
	}
	return closeBody
}

// copyChunked copies one chunked body, chunk lines and trailers included,
// byte for byte from r to w. It returns errMalformed on a bad chunk line.
func copyChunked(w io.Writer, r *bufio.Reader) error {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return chunkErr(err)
		}
		size, ok := parseChunkSize(trimEOL(line))
		if !ok {
			return errMalformed
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if size == 0 {
			break
		}
		if _, err := io.CopyN(w, r, size); err != nil {
			return err
		}
		line, err = r.ReadSlice('\n')
		if err != nil {
			return chunkErr(err)
		}
		if len(trimEOL(line)) != 0 {
			return errMalformed
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	for n := 0; ; n++ { // trailer fields, then the empty line
		line, err := r.ReadSlice('\n')
		if err != nil {
			return chunkErr(err)
		}
		if n > maxFields {
			return errMalformed
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		if len(trimEOL(line)) == 0 {
			return nil
		}
	}
}

func chunkErr(err error) error {
	if errors.Is(err, bufio.ErrBufferFull) {
		return errMalformed
	}
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseChunkSize reads the hex size of a chunk line, ignoring extensions.
func parseChunkSize(line []byte) (int64, bool) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t")
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range line {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	return n, true
}

func parseVersion(v []byte) (minor int, ok bool) {
	if len(v) != 8 || string(v[:7]) != "HTTP/1." || v[7] < '0' || v[7] > '9' {
		return 0, false
	}
	return int(v[7] - '0'), true
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// isToken reports whether b is a non-empty RFC 9110 token.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return true
}

// path is the path of a request target, without the query.
func (h *head) path() []byte {
	t := h.target
	if i := bytes.Index(t, []byte("://")); i >= 0 && t[0] != '/' { // absolute-form
		t = t[i+3:]
		if j := bytes.IndexByte(t, '/'); j >= 0 {
			t = t[j:]
		} else {
			t = []byte("/")
		}
	}
	if i := bytes.IndexAny(t, "?#"); i >= 0 {
		t = t[:i]
	}
	return t
}

func (h *head) String() string {
	if h.method != nil {
		return fmt.Sprintf("%s %s HTTP/1.%d", h.method, h.target, h.minor)
	}
	return fmt.Sprintf("HTTP/1.%d %d", h.minor, h.status)
}
