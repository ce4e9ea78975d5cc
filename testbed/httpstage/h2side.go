package httpstage

import (
	"bufio"
	"bytes"
	"net"
	"sync"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// maxHeaderTable bounds the HPACK dynamic table either peer may ask the
// relay to keep: a larger SETTINGS_HEADER_TABLE_SIZE is lowered to it on
// its way through.
const maxHeaderTable = 64 << 10

// h2side is one end of a relayed HTTP/2 connection: its frames are read
// (and header blocks decoded) by one goroutine; frames to it are written
// under wmu, header blocks encoded with the relay's own HPACK encoder for
// that peer.
type h2side struct {
	br *bufio.Reader
	fr *http2.Framer // reads

	wmu      sync.Mutex
	bw       *bufio.Writer
	fw       *http2.Framer // writes into bw
	enc      *hpack.Encoder
	encBuf   bytes.Buffer
	maxFrame uint32 // the peer's SETTINGS_MAX_FRAME_SIZE
	err      error  // the first write error: the peer is gone
}

func newH2Side(c net.Conn, br *bufio.Reader) *h2side {
	s := &h2side{br: br, bw: bufio.NewWriterSize(c, 32<<10), maxFrame: 16 << 10}
	s.fr = http2.NewFramer(nil, br)
	s.fr.SetMaxReadFrameSize(1<<24 - 1) // the peers' own limits apply end to end
	dec := hpack.NewDecoder(4096, nil)
	dec.SetAllowedMaxDynamicTableSize(maxHeaderTable)
	s.fr.ReadMetaHeaders = dec
	s.fw = http2.NewFramer(s.bw, nil)
	s.enc = hpack.NewEncoder(&s.encBuf)
	return s
}

// write runs fn with the side's framer under its lock and flushes when
// flush is set; otherwise the frames wait in the buffer for the next
// flush. A write that fails marks the side gone.
func (s *h2side) write(flush bool, fn func(*h2side) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.err != nil {
		return s.err
	}
	err := fn(s)
	if err == nil && flush {
		err = s.bw.Flush()
	}
	if err != nil {
		s.err = err
	}
	return err
}

// pong acknowledges a PING from this peer; an acknowledgement is dropped
// (the relay sends no pings of its own).
func (s *h2side) pong(f *http2.PingFrame) error {
	if f.IsAck() {
		return nil
	}
	return s.write(false, func(s *h2side) error { return s.fw.WritePing(true, f.Data) })
}

// flush sends whatever frames wait in the buffer.
func (s *h2side) flush() { _ = s.write(true, func(*h2side) error { return nil }) }

// headersLocked encodes fields for this peer and writes them as one
// HEADERS frame and as many CONTINUATION frames as the peer's frame size
// asks for.
func (s *h2side) headersLocked(id uint32, fields []hpack.HeaderField, end bool) error {
	s.encBuf.Reset()
	for _, f := range fields {
		if err := s.enc.WriteField(f); err != nil {
			return err
		}
	}
	block := s.encBuf.Bytes()
	n := min(len(block), int(s.maxFrame))
	p := http2.HeadersFrameParam{StreamID: id, BlockFragment: block[:n], EndStream: end, EndHeaders: n == len(block)}
	if err := s.fw.WriteHeaders(p); err != nil {
		return err
	}
	for rest := block[n:]; len(rest) > 0; rest = rest[n:] {
		n = min(len(rest), int(s.maxFrame))
		if err := s.fw.WriteContinuation(id, n == len(rest), rest[:n]); err != nil {
			return err
		}
	}
	return nil
}

// frameLocked writes one relayed frame to this peer under stream id.
func (s *h2side) frameLocked(id uint32, f *h2frame) error {
	switch f.typ {
	case http2.FrameHeaders:
		return s.headersLocked(id, f.fields, f.end)
	case http2.FrameData:
		if f.padded {
			return s.fw.WriteDataPadded(id, f.end, f.data, zeroPad[:f.pad])
		}
		return s.fw.WriteData(id, f.end, f.data)
	case http2.FrameWindowUpdate:
		return s.fw.WriteWindowUpdate(id, f.incr)
	case http2.FrameRSTStream:
		return s.fw.WriteRSTStream(id, f.code)
	}
	return nil
}

// peerSettings notes the settings that shape what the relay writes to
// this peer (its HPACK table, its largest frame) and returns them as they
// go on to the other peer: a table larger than the relay keeps is lowered.
// A value out of its range is the peer's protocol error.
func (s *h2side) peerSettings(f *http2.SettingsFrame) ([]http2.Setting, error) {
	out := make([]http2.Setting, 0, f.NumSettings())
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := f.ForeachSetting(func(st http2.Setting) error {
		if err := st.Valid(); err != nil {
			return err
		}
		switch st.ID {
		case http2.SettingHeaderTableSize:
			st.Val = min(st.Val, maxHeaderTable)
			s.enc.SetMaxDynamicTableSizeLimit(st.Val)
		case http2.SettingMaxFrameSize:
			s.maxFrame = st.Val // the framer checked its range
		}
		out = append(out, st)
		return nil
	})
	return out, err
}

var zeroPad [255]byte

// frameReady reports whether br already holds a whole frame, so that the
// next read will not wait on the network: until then, frames written to
// the other side may wait in its buffer.
func frameReady(br *bufio.Reader) bool {
	n := br.Buffered()
	if n < 9 {
		return false
	}
	h, _ := br.Peek(9)
	return n >= 9+(int(h[0])<<16|int(h[1])<<8|int(h[2]))
}
