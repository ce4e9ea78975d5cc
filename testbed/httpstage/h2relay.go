package httpstage

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2relay relays one client's HTTP/2 connection frame by frame over an
// upstream connection of its own. Settings, flow control and data pass
// as they come; pings are answered on each hop, as an HTTP/2 proxy does
// (an upstream's ping policy never counts a client's pings against it).
// Each header block is decoded, so the gRPC toxics can decide on the call,
// and encoded again for the other peer, so a call can be answered, reset
// or held while the streams around it go on. Calls get upstream stream ids
// in the order they are forwarded.
//
// One goroutine reads each side and writes what it reads to the other,
// flushing when no whole frame is left to read: a call costs the two
// hops of a TCP relay, not the hand-offs of an HTTP/2 server and client.
type h2relay struct {
	s        *Stage
	k        *conn
	down, up *h2side // the client and the upstream

	mu        sync.Mutex
	streams   map[uint32]*h2stream // by client stream id
	byUp      map[uint32]*h2stream // by upstream stream id
	lastDown  uint32               // the highest client stream id opened
	lastDone  uint32               // the highest client stream id the upstream answered
	nextUp    uint32               // the next upstream stream id
	goingAway bool                 // a GOAWAY went to the client: no new calls
	closed    bool
}

// relayH2 relays the connection, which opened with HTTP/2's preface, to a
// new upstream connection. When the upstream cannot be reached, the
// stage's HTTP/2 server answers each call instead (UNAVAILABLE, 502).
func (k *conn) relayH2() {
	u, err := k.s.dial(k)
	if err != nil {
		k.serveH2()
		return
	}
	newH2Relay(k, u, bufio.NewReaderSize(u, 32<<10)).run()
}

// relayUpgradedH2 relays a connection that an HTTP/1.1 "Upgrade: h2c"
// request switched to HTTP/2 (the 101 has gone to the client): the
// request is stream 1 on both connections, and its answer comes as
// HTTP/2. A client that does not go on with the preface is tunnelled.
func (k *conn) relayUpgradedH2() {
	if !isH2(k.cr) {
		k.tunnel(nil, nil)
		return
	}
	r := newH2Relay(k, k.u, k.ur)
	st := &h2stream{down: 1, up: 1}
	r.streams[1], r.byUp[1] = st, st
	r.lastDown, r.nextUp = 1, 3
	r.run()
}

func newH2Relay(k *conn, u net.Conn, ur *bufio.Reader) *h2relay {
	r := &h2relay{s: k.s, k: k, down: newH2Side(k.c, k.cr), up: newH2Side(u, ur),
		streams: map[uint32]*h2stream{}, byUp: map[uint32]*h2stream{}, nextUp: 1}
	r.up.bw.WriteString(http2.ClientPreface)
	return r
}

// run relays until either side ends; then both connections are closed.
func (r *h2relay) run() {
	if _, err := r.k.cr.Discard(len(http2.ClientPreface)); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.loop(r.up, r.down) })
	r.loop(r.down, r.up)
	wg.Wait()
}

// loop reads from's frames and passes each on to the other side,
// flushing both sides whenever no whole frame waits to be read, until a
// read or a write fails; then it closes both connections.
func (r *h2relay) loop(from, to *h2side) {
	defer r.close()
	for {
		f, err := from.fr.ReadFrame()
		var se http2.StreamError
		switch {
		case errors.As(err, &se):
			err = r.streamError(from, se)
		case err == nil:
			err = r.frame(from, to, f)
		}
		if err != nil {
			var ce http2.ConnectionError
			if errors.As(err, &ce) {
				last := r.lastClientStream(from)
				from.write(true, func(s *h2side) error { return s.fw.WriteGoAway(last, http2.ErrCode(ce), nil) })
			}
			return
		}
		if !frameReady(from.br) {
			r.up.flush()
			r.down.flush()
		}
	}
}

// frame passes on one frame that from sent to the other side.
func (r *h2relay) frame(from, to *h2side, f http2.Frame) error {
	switch f := f.(type) {
	case *http2.MetaHeadersFrame, *http2.DataFrame, *http2.WindowUpdateFrame, *http2.RSTStreamFrame:
		return r.streamFrame(from, to, f)
	case *http2.SettingsFrame:
		return r.settings(from, to, f)
	case *http2.PingFrame:
		return from.pong(f)
	case *http2.GoAwayFrame:
		if from == r.up {
			return r.upstreamGoAway(f)
		}
		return to.write(false, func(s *h2side) error { return s.fw.WriteGoAway(f.LastStreamID, f.ErrCode, f.DebugData()) })
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol) // a client cannot push; pushes are not relayed
	}
	return nil // PRIORITY and unknown frame types are dropped
}

// streamFrame passes on a frame of a stream (or the connection's window
// update) from one side to the other; a client's headers on a new stream
// open a call. A header block over the framer's limit is refused, not
// passed on cut short. A frame of a stream the relay no longer knows is
// dropped; its data's flow-control credit goes back to its sender, since
// the other peer will never return it.
func (r *h2relay) streamFrame(from, to *h2side, f http2.Frame) error {
	if wu, ok := f.(*http2.WindowUpdateFrame); ok && wu.StreamID == 0 {
		return to.write(false, func(s *h2side) error { return s.fw.WriteWindowUpdate(0, wu.Increment) })
	}
	mh, headers := f.(*http2.MetaHeadersFrame)
	if headers && mh.Truncated {
		return r.streamError(from, http2.StreamError{StreamID: mh.StreamID, Code: http2.ErrCodeProtocol})
	}
	st := r.stream(f.Header().StreamID, from == r.up)
	if st == nil && headers && from == r.down {
		return r.openCall(mh)
	}
	if st == nil {
		if df, ok := f.(*http2.DataFrame); ok && df.Length > 0 {
			return from.write(false, func(s *h2side) error { return s.fw.WriteWindowUpdate(0, df.Length) })
		}
		return nil
	}
	if from == r.up {
		return r.toClient(st, f)
	}
	return r.toUpstream(st, f)
}

// stream is the call with client (or upstream) stream id id, or nil.
func (r *h2relay) stream(id uint32, upstream bool) *h2stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	if upstream {
		return r.byUp[id]
	}
	return r.streams[id]
}

// openCall decides on a new call: answered, reset or held by a toxic, or
// forwarded at once.
func (r *h2relay) openCall(f *http2.MetaHeadersFrame) error {
	id := f.StreamID
	r.mu.Lock()
	if id%2 == 0 {
		r.mu.Unlock()
		return http2.ConnectionError(http2.ErrCodeProtocol) // clients open odd streams
	}
	if id <= r.lastDown {
		r.mu.Unlock()
		return nil // trailers of a call already ended here: dropped
	}
	r.lastDown = id
	away := r.goingAway
	r.mu.Unlock()
	if away {
		return r.down.write(false, func(s *h2side) error { return s.fw.WriteRSTStream(id, http2.ErrCodeRefusedStream) })
	}
	r.s.requests.Add(1)
	delay, respDelay, act := r.s.decideCall(fieldsCall(f.Fields))
	if act != nil {
		return r.act(f, act)
	}
	fr, _ := streamFrame(f, false)
	st := &h2stream{down: id, respDelay: respDelay, reqHold: &h2hold{frames: []h2frame{fr}}}
	r.mu.Lock()
	r.streams[id] = st
	if delay > 0 {
		st.reqHold.timer = time.AfterFunc(min(delay, MaxLatency), func() { r.forward(st, true) })
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	return r.forward(st, false)
}

// forward opens the call upstream with the frames held for it: it gets
// the next upstream stream id as its headers are written.
func (r *h2relay) forward(st *h2stream, flush bool) error {
	return r.up.write(flush, func(s *h2side) error {
		r.mu.Lock()
		h := st.reqHold
		if h == nil || r.closed {
			r.mu.Unlock()
			return nil // reset while held, or the connection ended
		}
		if r.nextUp > 1<<31-1 {
			r.mu.Unlock()
			return http2.ConnectionError(http2.ErrCodeRefusedStream) // stream ids used up
		}
		st.reqHold, st.up = nil, r.nextUp
		r.nextUp += 2
		r.byUp[st.up] = st
		r.mu.Unlock()
		for i := range h.frames {
			if err := s.frameLocked(st.up, &h.frames[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// toUpstream passes on a frame of a call from the client: held with the
// call while it is held, else written with the call's upstream id.
func (r *h2relay) toUpstream(st *h2stream, f http2.Frame) error {
	r.mu.Lock()
	if h := st.reqHold; h != nil {
		fr, _ := streamFrame(f, true)
		if fr.typ == http2.FrameRSTStream {
			r.forgetLocked(st) // cancelled before it was forwarded
		} else {
			h.frames = append(h.frames, fr)
		}
		r.mu.Unlock()
		return nil
	}
	id := st.up
	r.mu.Unlock()
	fr, _ := streamFrame(f, false)
	if fr.typ == http2.FrameRSTStream {
		r.forget(st)
	}
	return r.up.write(false, func(s *h2side) error { return s.frameLocked(id, &fr) })
}

// toClient passes on a frame of a call's answer: the answer's headers and
// what follows them are held while a grpc_latency toxic holds the answer.
func (r *h2relay) toClient(st *h2stream, f http2.Frame) error {
	fr, _ := streamFrame(f, false)
	r.mu.Lock()
	switch {
	case fr.typ == http2.FrameWindowUpdate: // credit for the call's body: never held
	case st.respDelay > 0 && !st.respSeen && fr.typ == http2.FrameHeaders:
		st.respSeen = true
		st.respHold = &h2hold{frames: []h2frame{fr}}
		st.respHold.timer = time.AfterFunc(min(st.respDelay, MaxLatency), func() { r.answer(st) })
		r.mu.Unlock()
		return nil
	case st.respHold != nil && fr.typ != http2.FrameRSTStream:
		fr, _ = streamFrame(f, true)
		st.respHold.frames = append(st.respHold.frames, fr)
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	err := r.down.write(false, func(s *h2side) error { return s.frameLocked(st.down, &fr) })
	if fr.ends() {
		r.forget(st)
	}
	return err
}

// answer sends a held answer on to the client.
func (r *h2relay) answer(st *h2stream) {
	ended := false
	r.down.write(true, func(s *h2side) error {
		r.mu.Lock()
		h := st.respHold
		st.respHold = nil
		r.mu.Unlock()
		if h == nil {
			return nil // reset meanwhile
		}
		for i := range h.frames {
			ended = ended || h.frames[i].ends()
			if err := s.frameLocked(st.down, &h.frames[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if ended {
		r.forget(st)
	}
}

// act answers or resets a call as the toxic act says, without forwarding
// it: grpc_error answers trailers-only, grpc_reset resets the stream, and
// with goaway also sends GOAWAY: the connection ends once its calls have.
func (r *h2relay) act(f *http2.MetaHeadersFrame, act *rule) error {
	id, a := f.StreamID, act.toxic.Attributes
	switch {
	case act.toxic.Type == KindGRPCError:
		fields := grpcStatusFields(a.Code, "injected by chaosrun grpc_error "+act.toxic.Name, a.PushbackMS)
		return r.down.write(false, func(s *h2side) error {
			if err := s.headersLocked(id, fields, true); err != nil || f.StreamEnded() {
				return err
			}
			return s.fw.WriteRSTStream(id, http2.ErrCodeNo) // the rest of the call is not needed
		})
	case a.GoAway == 1:
		r.mu.Lock()
		r.goingAway = true
		last := r.lastDown
		r.mu.Unlock()
		err := r.down.write(true, func(s *h2side) error {
			if err := s.fw.WriteRSTStream(id, http2.ErrCodeInternal); err != nil {
				return err
			}
			return s.fw.WriteGoAway(last, http2.ErrCodeNo, nil)
		})
		r.closeIfDone()
		return err
	}
	return r.down.write(false, func(s *h2side) error { return s.fw.WriteRSTStream(id, http2.ErrCodeInternal) })
}

// grpcStatusFields are a trailers-only answer: HTTP 200 and the status in
// the one HEADERS frame that ends the stream.
func grpcStatusFields(code int, msg string, pushbackMS int64) []hpack.HeaderField {
	f := []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"},
		{Name: "grpc-status", Value: strconv.Itoa(code)}, {Name: "grpc-message", Value: grpcMessage(msg)}}
	if pushbackMS > 0 {
		f = append(f, hpack.HeaderField{Name: "grpc-retry-pushback-ms", Value: strconv.FormatInt(pushbackMS, 10)})
	}
	return f
}
