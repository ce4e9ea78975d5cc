package httpstage

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// maxReplay is the largest request the stage keeps to send again when a
// reused upstream connection turns out closed before it answered.
const maxReplay = 64 << 10

// conn is one client connection and its upstream connection, served one
// request at a time: requests are read, decided on, then forwarded or
// answered, and each response is relayed before the next request is read.
// Pipelined requests wait in the client's read buffer, so responses keep
// their order.
type conn struct {
	s  *Stage
	c  net.Conn
	cr *bufio.Reader
	cw *bufio.Writer

	mu sync.Mutex // guards u for closeConns
	u  net.Conn
	ur *bufio.Reader
	uw *bufio.Writer
	// served counts responses relayed on u: a stale u is only suspected
	// once it has been reused.
	served int

	req, resp head
	replay    []byte
}

func newConn(s *Stage, c net.Conn) *conn {
	return &conn{s: s, c: c, cr: bufio.NewReaderSize(c, maxLineBytes), cw: bufio.NewWriterSize(c, maxLineBytes)}
}

// closeConns closes both connections (from Stage.Close or when done).
func (k *conn) closeConns() {
	k.c.Close()
	k.mu.Lock()
	if k.u != nil {
		k.u.Close()
	}
	k.mu.Unlock()
}

// serve runs the connection until either side closes or a message cannot
// be relayed.
func (k *conn) serve() {
	defer k.closeConns()
	if isH2(k.cr) {
		k.relayH2()
		return
	}
	for {
		err := readHead(k.cr, &k.req, true)
		switch {
		case errors.Is(err, errMalformed):
			k.tunnel(k.req.raw, nil)
			return
		case err != nil:
			return
		}
		k.s.requests.Add(1)
		var delay time.Duration
		var answer *rule
		for _, r := range *k.s.rules.Load() {
			if r.grpc {
				continue // gRPC calls come over HTTP/2 only
			}
			if hit, d := r.decide(&k.req); hit {
				delay += d
				if answer == nil && r.toxic.Type == KindError {
					answer = r
				}
			}
		}
		if delay > 0 && !k.s.sleep(min(delay, MaxLatency)) {
			return
		}
		if answer != nil {
			if !k.answer(answer) {
				return
			}
			continue
		}
		if !k.forward() {
			return
		}
	}
}

// answer consumes the request's body and answers it with r's response; it
// reports whether the connection stays open.
func (k *conn) answer(r *rule) bool {
	keep := k.req.keepAlive
	switch k.req.requestFraming() {
	case lengthBody, chunkedBody:
		if k.req.expect100 {
			keep = false // the client waits to send the body: close instead
		} else if k.copyBody(io.Discard, k.cr, &k.req) != nil {
			return false
		}
	}
	k.cw.Write(r.answer[:r.headLen])
	if !keep {
		k.cw.WriteString("Connection: close\r\n")
	}
	k.cw.WriteString("\r\n")
	if string(k.req.method) != "HEAD" {
		k.cw.Write(r.answer[r.headLen:])
	}
	return k.cw.Flush() == nil && keep
}

// copyBody copies the body of message h from r to w byte for byte.
func (k *conn) copyBody(w io.Writer, r *bufio.Reader, h *head) error {
	if h.chunked {
		return copyChunked(w, r)
	}
	if h.length > 0 {
		_, err := io.CopyN(w, r, h.length)
		return err
	}
	return nil
}

// forward sends the request upstream and relays the response; it reports
// whether the connection stays open.
func (k *conn) forward() bool {
	if k.u == nil && !k.redial() {
		return false
	}
	fr := k.req.requestFraming()
	if !k.req.expect100 && (fr == noBody || (fr == lengthBody && k.req.length <= maxReplay)) {
		// Small request: read it whole, send it in one write, and send it
		// again on a fresh connection if a reused one was stale.
		k.replay = append(k.replay[:0], k.req.raw...)
		if fr == lengthBody {
			n := len(k.replay)
			k.replay = append(k.replay, make([]byte, k.req.length)...)
			if _, err := io.ReadFull(k.cr, k.replay[n:]); err != nil {
				return false
			}
		}
		k.resp.raw = k.resp.raw[:0]
		err := k.send(k.replay)
		if err == nil {
			err = readHead(k.ur, &k.resp, false)
		}
		if err != nil && !errors.Is(err, errMalformed) && k.served > 0 && len(k.resp.raw) == 0 {
			k.served = 0
			if !k.redial() {
				return false
			}
			if err = k.send(k.replay); err == nil {
				err = readHead(k.ur, &k.resp, false)
			}
		}
		return k.relay(err)
	}
	if _, err := k.uw.Write(k.req.raw); err != nil {
		return false
	}
	if k.req.expect100 {
		return k.forwardExpect()
	}
	switch err := k.copyBody(k.uw, k.cr, &k.req); {
	case errors.Is(err, errMalformed):
		// The body is not chunked as it says: the upstream judges raw bytes.
		k.uw.Flush()
		k.tunnel(nil, nil)
		return false
	case err != nil:
		return false
	}
	if k.uw.Flush() != nil {
		return false
	}
	return k.relay(readHead(k.ur, &k.resp, false))
}

// forwardExpect forwards a request with "Expect: 100-continue": its body
// goes upstream whenever the client sends it (after the upstream's 100, or
// after the client tires of waiting) while responses come back, so neither
// side waits on the stage. It reports whether the connection stays open.
func (k *conn) forwardExpect() bool {
	if k.uw.Flush() != nil {
		return false
	}
	sent := make(chan error, 1)
	go func() {
		err := k.copyBody(k.uw, k.cr, &k.req)
		if err == nil {
			err = k.uw.Flush()
		}
		sent <- err
	}()
	keep := k.relay(readHead(k.ur, &k.resp, false))
	select {
	case err := <-sent:
		return keep && err == nil
	default:
		// A final answer came before the body: its fate is unknown, so the
		// connection ends (which also ends the copy).
		k.closeConns()
		<-sent
		return false
	}
}

// redial opens a fresh upstream connection, closing the old one.
func (k *conn) redial() bool {
	k.mu.Lock()
	old := k.u
	k.u = nil
	k.mu.Unlock()
	if old != nil {
		old.Close()
	}
	u, err := k.s.dial(k)
	if err != nil {
		return false
	}
	if k.ur == nil {
		k.ur = bufio.NewReaderSize(u, maxLineBytes)
		k.uw = bufio.NewWriterSize(u, maxLineBytes)
	} else {
		k.ur.Reset(u)
		k.uw.Reset(u)
	}
	return true
}

func (k *conn) send(b []byte) error {
	_, err := k.u.Write(b)
	return err
}

// relay relays the response whose head reading ended with err (and any
// 1xx before the final one); it reports whether the connection stays open.
func (k *conn) relay(err error) bool {
	for {
		switch {
		case errors.Is(err, errMalformed):
			k.tunnel(nil, k.resp.raw)
			return false
		case err != nil:
			return false
		}
		if s := k.resp.status; s/100 != 1 || s == 101 {
			break
		}
		k.cw.Write(k.resp.raw) // 100 Continue, 103 Early Hints: relay, read on
		if k.cw.Flush() != nil {
			return false
		}
		err = readHead(k.ur, &k.resp, false)
	}
	k.cw.Write(k.resp.raw)
	switch k.resp.responseFraming(k.req.method) {
	case lengthBody, chunkedBody:
		if k.copyBody(k.cw, k.ur, &k.resp) != nil {
			k.cw.Flush()
			return false
		}
	case closeBody:
		io.Copy(k.cw, k.ur)
		k.cw.Flush()
		return false
	case tunnelBody:
		if k.resp.status == 101 && k.resp.upgradeH2C {
			if k.cw.Flush() == nil {
				k.relayUpgradedH2()
			}
			return false
		}
		k.tunnel(nil, nil)
		return false
	}
	k.served++
	return k.cw.Flush() == nil && k.req.keepAlive && k.resp.keepAlive
}

// tunnel passes raw bytes both ways until either side is done: first up
// and down (bytes already consumed), then whatever the connections carry.
func (k *conn) tunnel(up, down []byte) {
	k.s.tunnels.Add(1)
	if k.u == nil && !k.redial() {
		return
	}
	if k.cw.Flush() != nil || k.uw.Flush() != nil {
		return
	}
	if len(down) > 0 {
		if _, err := k.c.Write(down); err != nil {
			return
		}
	}
	if len(up) > 0 {
		if _, err := k.u.Write(up); err != nil {
			return
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		io.Copy(k.u, k.cr)
		if tc, ok := k.u.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	})
	io.Copy(k.c, k.ur)
	k.closeConns()
	wg.Wait()
}
