package native

import (
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// The engine's own sending path, used unless Options.Transport replaces
// it: fasthttp's HostClient (MIT), one per target host. A worker sends on a
// pooled connection from its own goroutine, with request and response
// objects it reuses: no goroutines per connection, no allocation per
// request. It costs about half of net/http's CPU per request, which is
// most of what a load generator spends.

// fastReadBuffer bounds an answer's head (status line and headers).
const fastReadBuffer = 16 << 10

// fastClients are the run's HostClients by scheme and host, and every
// connection they opened, so that requests still out at the end of the
// grace can be cut off (fasthttp takes no context).
type fastClients struct {
	hosts map[string]*fasthttp.HostClient
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
	cut   bool
}

// newFastClients makes a HostClient for each target host of the lanes,
// each with at most conns connections; a request waits up to wait for one.
func newFastClients(lanes []*lane, conns int, wait time.Duration) *fastClients {
	f := &fastClients{hosts: map[string]*fasthttp.HostClient{}, conns: map[*trackedConn]struct{}{}}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	for _, l := range lanes {
		for _, t := range l.targets {
			key := t.scheme + "://" + t.host
			if f.hosts[key] != nil {
				continue
			}
			f.hosts[key] = &fasthttp.HostClient{
				Addr: t.host, IsTLS: t.scheme == "https", MaxConns: conns, MaxConnWaitTimeout: wait,
				Dial:                      func(addr string) (net.Conn, error) { return f.dial(dialer, addr) },
				MaxIdleConnDuration:       90 * time.Second,
				MaxIdemponentCallAttempts: 2, // one retry on a kept-alive connection the server closed
				ReadBufferSize:            fastReadBuffer,
				NoDefaultUserAgentHeader:  true,
				DisablePathNormalizing:    true,
			}
		}
	}
	return f
}

func (f *fastClients) client(t *target) *fasthttp.HostClient {
	return f.hosts[t.scheme+"://"+t.host]
}

func (f *fastClients) dial(d *net.Dialer, addr string) (net.Conn, error) {
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, f: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut {
		c.Close()
		return nil, errCut
	}
	f.conns[tc] = struct{}{}
	return tc, nil
}

// cutAll closes every connection, in use or idle, and refuses new ones:
// requests still out end at once.
func (f *fastClients) cutAll() {
	f.mu.Lock()
	f.cut = true
	conns := make([]*trackedConn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// trackedConn is a connection that leaves its registry when closed.
type trackedConn struct {
	net.Conn
	f    *fastClients
	once sync.Once
}

func (c *trackedConn) Close() error {
	var err error
	c.once.Do(func() {
		c.f.mu.Lock()
		delete(c.f.conns, c)
		c.f.mu.Unlock()
		err = c.Conn.Close()
	})
	return err
}

// fastReq is a worker's reusable request and response.
type fastReq struct {
	req  fasthttp.Request
	resp fasthttp.Response
	// answered: resp holds the last attempt's answer.
	answered bool
	url      []byte
	hc       *fasthttp.HostClient
}

// initFast sets up the worker's fasthttp request: method and the headers
// that never change.
func (w *worker) initFast() {
	w.fr = &fastReq{}
	r := &w.fr.req
	r.Header.SetMethod(w.l.Method)
	r.Header.DisableNormalizing()
	r.URI().DisablePathNormalizing = true
	for name, v := range w.req.Header {
		if len(v) > 0 && v[0] != "" {
			r.Header.Set(name, v[0])
		}
	}
}

// buildFast sets the request up for the current draw at target t.
func (w *worker) buildFast(t *target) {
	fr, l := w.fr, w.l
	fr.url = append(append(append(append(fr.url[:0], t.scheme...), "://"...), t.host...), t.prefix...)
	fr.url = l.path.render(fr.url, &w.d)
	fr.req.SetRequestURIBytes(fr.url)
	fr.hc = w.e.fast.client(t)
	for i, h := range l.headers {
		if !h.val.isStatic {
			w.pathBuf = h.val.render(w.pathBuf[:0], &w.d)
			fr.req.Header.SetBytesV(l.headers[i].name, w.pathBuf)
		}
	}
	if l.Body != "" {
		w.bodyBuf = l.body.render(w.bodyBuf[:0], &w.d)
		fr.req.SetBodyRaw(w.bodyBuf)
	}
}

// sendFast makes one attempt; status 0 is no answer.
func (w *worker) sendFast(timeout time.Duration) int {
	fr := w.fr
	fr.answered = false
	if err := fr.hc.DoTimeout(&fr.req, &fr.resp, timeout); err != nil {
		return 0
	}
	fr.answered = true
	return fr.resp.StatusCode()
}

// fastHeader is a header of the last answer ("" without one).
func (w *worker) fastHeader(name string) string {
	if !w.fr.answered {
		return ""
	}
	return string(w.fr.resp.Header.Peek(name))
}
