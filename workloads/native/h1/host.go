// Package h1 is the native engine's HTTP/1.1 client: one host's pool of
// kept-alive connections, a request written as the caller rendered it and
// an answer read into a reused buffer, with its body skipped. It does per
// request only what a load generator needs: one write, the reads of the
// answer, no goroutine and no allocation.
package h1

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// ErrCut is a request whose connection was cut (Host.CutAll).
var ErrCut = errors.New("h1: connection cut off")

// ErrNoConn is a request that found no connection free within its time.
var ErrNoConn = errors.New("h1: no free connection within the request's time")

// Options configure a Host.
type Options struct {
	// Addr is host:port; TLS dials with TLS, verifying the server name.
	Addr string
	TLS  bool
	// MaxConns bounds the open connections; a request beyond it waits.
	MaxConns int
	// ReadBuffer bounds an answer's head (status line and headers).
	ReadBuffer int
	// DialTimeout bounds a dial (10 s when zero).
	DialTimeout time.Duration
}

// Host is a pool of connections to one server. Idle connections are
// reused last-in first-out, so that a light load keeps to a few of them.
type Host struct {
	opts   Options
	dialer net.Dialer
	tlsCfg *tls.Config

	mu      sync.Mutex
	idle    []*conn
	open    int
	all     map[*conn]struct{}
	waiters []chan *conn // a nil conn: dial one
	cut     bool
}

// NewHost makes the pool of opts.Addr.
func NewHost(opts Options) *Host {
	if opts.ReadBuffer <= 0 {
		opts.ReadBuffer = 16 << 10
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 1
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 10 * time.Second
	}
	h := &Host{opts: opts, all: map[*conn]struct{}{},
		dialer: net.Dialer{Timeout: opts.DialTimeout, KeepAlive: 30 * time.Second}}
	if opts.TLS {
		name, _, err := net.SplitHostPort(opts.Addr)
		if err != nil {
			name = opts.Addr
		}
		h.tlsCfg = &tls.Config{ServerName: name, ClientSessionCache: tls.NewLRUClientSessionCache(64)}
	}
	return h
}

// Request is one request as it goes on the wire.
type Request struct {
	Wire []byte
	// Head: a HEAD request, whose answer has no body.
	Head bool
	// Retry: the request may go again on a fresh connection when a
	// kept-alive one turns out closed before any answer (an idempotent
	// method).
	Retry bool
}

// Do sends req and reads its answer into resp, all before deadline.
func (h *Host) Do(req *Request, resp *Response, deadline time.Time) error {
	for try := 0; ; try++ {
		c, err := h.get(deadline)
		if err != nil {
			return err
		}
		reused := c.used
		err = h.roundTrip(c, req, resp, deadline)
		if err == nil {
			return nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
		if !reused || !req.Retry || try > 0 || !errors.Is(err, errStale) {
			return err
		}
	}
}

// errStale is a kept-alive connection that failed before any answer.
var errStale = errors.New("h1: kept-alive connection closed before an answer")

func (h *Host) roundTrip(c *conn, req *Request, resp *Response, deadline time.Time) error {
	if err := c.nc.SetDeadline(deadline); err != nil {
		h.drop(c)
		return err
	}
	if err := c.write(req.Wire); err != nil {
		h.drop(c)
		return staleIf(c, err, true)
	}
	keep, err := readResponse(c, resp, req.Head)
	if err != nil {
		h.drop(c)
		return staleIf(c, err, c.w == 0 && c.r == 0)
	}
	c.used = true
	if !keep || c.r != c.w {
		h.drop(c) // closing, or bytes past the answer: not reusable
		return nil
	}
	c.r, c.w = 0, 0
	h.put(c)
	return nil
}

// staleIf marks err as a stale connection's when the connection had been
// used and nothing of an answer came.
func staleIf(c *conn, err error, nothing bool) error {
	if c.used && nothing && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, ErrCut) {
		return errors.Join(errStale, err)
	}
	return err
}

// get takes an idle connection, dials a new one within the bound, or waits
// for one until deadline.
func (h *Host) get(deadline time.Time) (*conn, error) {
	h.mu.Lock()
	if h.cut {
		h.mu.Unlock()
		return nil, ErrCut
	}
	if n := len(h.idle); n > 0 {
		c := h.idle[n-1]
		h.idle = h.idle[:n-1]
		h.mu.Unlock()
		return c, nil
	}
	if h.open < h.opts.MaxConns {
		h.open++
		h.mu.Unlock()
		return h.dial(deadline)
	}
	ch := make(chan *conn, 1)
	h.waiters = append(h.waiters, ch)
	h.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case c, ok := <-ch:
		if !ok {
			return nil, ErrCut
		}
		if c == nil {
			return h.dial(deadline)
		}
		return c, nil
	case <-t.C:
	}
	h.mu.Lock()
	for i, w := range h.waiters {
		if w == ch {
			h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
			h.mu.Unlock()
			return nil, ErrNoConn
		}
	}
	h.mu.Unlock()
	// Handed a connection or a slot as the timer fired: pass it on.
	switch c, ok := <-ch; {
	case !ok:
	case c == nil:
		h.release()
	default:
		h.put(c)
	}
	return nil, ErrNoConn
}

// dial opens a connection in a slot already counted in h.open.
func (h *Host) dial(deadline time.Time) (*conn, error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	nc, err := h.dialer.DialContext(ctx, "tcp", h.opts.Addr)
	if err == nil && h.tlsCfg != nil {
		tc := tls.Client(nc, h.tlsCfg)
		if err = tc.HandshakeContext(ctx); err != nil {
			nc.Close()
		}
		nc = tc
	}
	if err != nil {
		h.release()
		return nil, err
	}
	c := newConn(nc, h.opts.ReadBuffer)
	h.mu.Lock()
	if h.cut {
		h.mu.Unlock()
		nc.Close()
		h.release()
		return nil, ErrCut
	}
	h.all[c] = struct{}{}
	h.mu.Unlock()
	return c, nil
}

// put returns a connection for reuse: to a waiter first.
func (h *Host) put(c *conn) {
	if c == nil {
		return
	}
	h.mu.Lock()
	if h.cut {
		h.mu.Unlock()
		h.drop(c)
		return
	}
	if len(h.waiters) > 0 {
		w := h.waiters[0]
		h.waiters = h.waiters[1:]
		h.mu.Unlock()
		w <- c
		return
	}
	h.idle = append(h.idle, c)
	h.mu.Unlock()
}

// drop closes a connection and frees its slot.
func (h *Host) drop(c *conn) {
	h.mu.Lock()
	_, ok := h.all[c]
	delete(h.all, c)
	h.mu.Unlock()
	_ = c.nc.Close()
	if ok {
		h.release()
	}
}

// release frees a connection's slot: a waiter may dial in it.
func (h *Host) release() {
	h.mu.Lock()
	if len(h.waiters) > 0 && !h.cut {
		w := h.waiters[0]
		h.waiters = h.waiters[1:]
		h.mu.Unlock()
		w <- nil
		return
	}
	h.open--
	h.mu.Unlock()
}

// CutAll closes every connection, in use or idle, and refuses new
// requests: requests still out end at once with an error.
func (h *Host) CutAll() {
	h.mu.Lock()
	h.cut = true
	conns := make([]*conn, 0, len(h.all))
	for c := range h.all {
		conns = append(conns, c)
	}
	h.idle = nil
	waiters := h.waiters
	h.waiters = nil
	h.mu.Unlock()
	for _, c := range conns {
		_ = c.nc.Close()
	}
	for _, w := range waiters {
		close(w)
	}
}

// Open is how many connections are open.
func (h *Host) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.all)
}
