package httpstage

import (
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2stream is one relayed call: its stream id on each connection, and
// the frames a grpc_latency toxic holds back in either direction.
type h2stream struct {
	down, up uint32 // client and upstream stream ids; up is 0 until forwarded

	// reqHold holds the call before it is forwarded; respHold its answer
	// from the response headers on. respDelay is the answer's hold, drawn
	// when the call arrived; respSeen marks the answer begun.
	reqHold, respHold *h2hold
	respDelay         time.Duration
	respSeen          bool
}

// h2hold is frames held back until a timer fires.
type h2hold struct {
	timer  *time.Timer
	frames []h2frame
}

func (h *h2hold) stop() {
	if h != nil && h.timer != nil {
		h.timer.Stop()
	}
}

// h2frame is a frame of one stream as the relay passes it on: header
// fields (re-encoded for the receiving peer), data with its padding, a
// window update or a reset.
type h2frame struct {
	typ    http2.FrameType
	fields []hpack.HeaderField
	data   []byte
	end    bool
	padded bool
	pad    uint8
	incr   uint32
	code   http2.ErrCode
}

// streamFrame is f as h2frame when it belongs to a stream, with copy
// set when it outlives the framer's next read (it is held).
func streamFrame(f http2.Frame, copyData bool) (h2frame, bool) {
	switch f := f.(type) {
	case *http2.MetaHeadersFrame:
		return h2frame{typ: http2.FrameHeaders, fields: f.Fields, end: f.StreamEnded()}, true
	case *http2.DataFrame:
		d := f.Data()
		if copyData {
			d = append([]byte(nil), d...)
		}
		fr := h2frame{typ: http2.FrameData, data: d, end: f.StreamEnded()}
		if f.Flags.Has(http2.FlagDataPadded) {
			fr.padded, fr.pad = true, uint8(int(f.Length)-len(f.Data())-1)
		}
		return fr, true
	case *http2.WindowUpdateFrame:
		return h2frame{typ: http2.FrameWindowUpdate, incr: f.Increment}, true
	case *http2.RSTStreamFrame:
		return h2frame{typ: http2.FrameRSTStream, code: f.ErrCode}, true
	}
	return h2frame{}, false
}

// ends reports whether the frame ends its stream in its direction.
func (f *h2frame) ends() bool { return f.end || f.typ == http2.FrameRSTStream }
