package httpstage

import (
	"golang.org/x/net/http2"
)

// settings passes a SETTINGS frame on, noting what it asks of the relay's
// writes to its sender.
func (r *h2relay) settings(from, to *h2side, f *http2.SettingsFrame) error {
	if f.IsAck() {
		return to.write(false, func(s *h2side) error { return s.fw.WriteSettingsAck() })
	}
	out, err := from.peerSettings(f)
	if err != nil {
		return err
	}
	return to.write(false, func(s *h2side) error { return s.fw.WriteSettings(out...) })
}

// upstreamGoAway passes the upstream's GOAWAY on to the client. A
// graceful first GOAWAY (every stream so far) only warns: calls go on.
// Otherwise the calls the upstream took go on, the others (held, or
// beyond its last stream) are refused so the client retries them, and no
// new call is taken.
func (r *h2relay) upstreamGoAway(f *http2.GoAwayFrame) error {
	if f.LastStreamID == 1<<31-1 {
		return r.down.write(true, func(s *h2side) error { return s.fw.WriteGoAway(f.LastStreamID, f.ErrCode, f.DebugData()) })
	}
	var refused []uint32
	r.mu.Lock()
	r.goingAway = true
	last := r.lastDone
	for id, st := range r.streams {
		if st.up != 0 && st.up <= f.LastStreamID {
			last = max(last, id)
			continue
		}
		refused = append(refused, id)
		if st.up != 0 {
			delete(r.byUp, st.up)
			st.up = 0 // not taken: not done
		}
		r.forgetLocked(st)
	}
	r.mu.Unlock()
	err := r.down.write(true, func(s *h2side) error {
		if err := s.fw.WriteGoAway(last, f.ErrCode, f.DebugData()); err != nil {
			return err
		}
		for _, id := range refused {
			if err := s.fw.WriteRSTStream(id, http2.ErrCodeRefusedStream); err != nil {
				return err
			}
		}
		return nil
	})
	r.closeIfDone()
	return err
}

// streamError answers a stream error in a frame from one side: that side
// gets RST_STREAM, and the call's stream on the other side is cancelled.
func (r *h2relay) streamError(from *h2side, se http2.StreamError) error {
	st := r.stream(se.StreamID, from == r.up)
	if st == nil && from == r.down {
		r.mu.Lock()
		r.lastDown = max(r.lastDown, se.StreamID)
		r.mu.Unlock()
	}
	if st != nil {
		r.forget(st)
		to, id := r.up, st.up
		if from == r.up {
			to, id = r.down, st.down
		}
		if id != 0 {
			if err := to.write(false, func(s *h2side) error { return s.fw.WriteRSTStream(id, http2.ErrCodeCancel) }); err != nil {
				return err
			}
		}
	}
	return from.write(false, func(s *h2side) error { return s.fw.WriteRSTStream(se.StreamID, se.Code) })
}

// lastClientStream is the last stream id a GOAWAY to side names: the
// client's last call, or none of the upstream's (it opens no streams).
func (r *h2relay) lastClientStream(side *h2side) uint32 {
	if side != r.down {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastDown
}

// forget drops a call that has ended (or was reset) from the relay.
func (r *h2relay) forget(st *h2stream) {
	r.mu.Lock()
	r.forgetLocked(st)
	r.mu.Unlock()
	r.closeIfDone()
}

func (r *h2relay) forgetLocked(st *h2stream) {
	st.reqHold.stop()
	st.respHold.stop()
	st.reqHold, st.respHold = nil, nil
	delete(r.streams, st.down)
	if st.up != 0 {
		delete(r.byUp, st.up)
		r.lastDone = max(r.lastDone, st.down)
	}
}

// closeIfDone ends the connection once a GOAWAY was sent and no call is
// left.
func (r *h2relay) closeIfDone() {
	r.mu.Lock()
	done := r.goingAway && len(r.streams) == 0
	r.mu.Unlock()
	if done {
		r.down.flush()
		r.close()
	}
}

// close ends both connections and every hold.
func (r *h2relay) close() {
	r.mu.Lock()
	r.closed = true
	for _, st := range r.streams {
		st.reqHold.stop()
		st.respHold.stop()
	}
	r.mu.Unlock()
	r.k.closeConns()
}
