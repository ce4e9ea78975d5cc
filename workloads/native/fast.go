package native

import (
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/workloads/native/h1"
)

// The engine's own sending path, used unless Options.Transport replaces
// it: the h1 client, one pool per target host. A worker renders its
// request's bytes into a buffer of its own and sends them on a pooled
// connection from its own goroutine: no goroutines per connection, no
// allocation and no parsing of its own request.

// fastReadBuffer bounds an answer's head (status line and headers).
const fastReadBuffer = 16 << 10

// fastClients are the run's pools by scheme and host.
type fastClients struct {
	hosts map[string]*h1.Host
}

// newFastClients makes a pool for each target host of the lanes, each with
// at most conns connections, and gives each target its pool.
func newFastClients(lanes []*lane, conns int) *fastClients {
	f := &fastClients{hosts: map[string]*h1.Host{}}
	for _, l := range lanes {
		for i := range l.targets {
			t := &l.targets[i]
			key := t.scheme + "://" + t.host
			if f.hosts[key] == nil {
				f.hosts[key] = h1.NewHost(h1.Options{Addr: hostPort(*t), TLS: t.scheme == "https",
					MaxConns: conns, ReadBuffer: fastReadBuffer})
			}
			t.pool = f.hosts[key]
		}
	}
	return f
}

// hostPort is a target's address with its scheme's port when it has none.
func hostPort(t target) string {
	if _, _, err := net.SplitHostPort(t.host); err == nil {
		return t.host
	}
	port := "80"
	if t.scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(t.host, "[]"), port)
}

// cutAll closes every connection, in use or idle, and refuses new ones:
// requests still out end at once.
func (f *fastClients) cutAll() {
	for _, h := range f.hosts {
		h.CutAll()
	}
}

// fastReq is a worker's reusable request and answer.
type fastReq struct {
	// head is the current draw's request line and headers, without the
	// deadline header, the body's length and the blank line.
	head []byte
	// fixed are the header lines that never change, rendered once.
	fixed     []byte
	ownHost   bool // the stream sets Host itself
	deadline  []byte
	hasLength bool // the request says its body's length
	req       h1.Request
	resp      h1.Response
	// answered: resp holds the last attempt's answer.
	answered bool
	host     *h1.Host
}

// initFast renders the worker's header lines that never change: the
// stream's static headers and the client's tier.
func (w *worker) initFast() {
	fr := &fastReq{}
	w.fr = fr
	for _, name := range slices.Sorted(maps.Keys(w.req.Header)) {
		v := w.req.Header[name]
		if len(v) == 0 || v[0] == "" {
			continue
		}
		fr.ownHost = fr.ownHost || name == "Host"
		fr.fixed = appendHeader(fr.fixed, name, []byte(v[0]))
	}
	m := w.l.Method
	fr.req.Head = m == http.MethodHead
	fr.req.Retry = m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions || m == http.MethodPut || m == http.MethodDelete
	fr.hasLength = w.l.Body != "" || m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch
}

// appendHeader appends "name: value\r\n", with line ends in the value
// turned into spaces so that a value cannot add header lines.
func appendHeader(dst []byte, name string, v []byte) []byte {
	dst = append(append(dst, name...), ": "...)
	for _, c := range v {
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return append(dst, "\r\n"...)
}

// appendTarget appends a request target, percent-encoding the bytes a
// request line cannot carry (controls, space, non-ASCII).
func appendTarget(dst, p []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range p {
		if c <= ' ' || c >= 0x7f {
			dst = append(dst, '%', hex[c>>4], hex[c&15])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// buildFast renders the request line and headers of the current draw at
// target t.
func (w *worker) buildFast(t *target) {
	fr, l := w.fr, w.l
	h := append(append(fr.head[:0], l.Method...), ' ')
	h = appendTarget(h, []byte(t.prefix))
	w.pathBuf = l.path.render(w.pathBuf[:0], &w.d)
	h = appendTarget(h, w.pathBuf)
	h = append(h, " HTTP/1.1\r\n"...)
	if !fr.ownHost {
		h = append(append(append(h, "Host: "...), t.host...), "\r\n"...)
	}
	h = append(h, fr.fixed...)
	for _, hd := range l.headers {
		if !hd.val.isStatic {
			w.pathBuf = hd.val.render(w.pathBuf[:0], &w.d)
			h = appendHeader(h, hd.name, w.pathBuf)
		}
	}
	fr.head = h
	fr.deadline = fr.deadline[:0]
	fr.host = t.pool
	if l.Body != "" {
		w.bodyBuf = l.body.render(w.bodyBuf[:0], &w.d)
	}
}

// sendFast makes one attempt; status 0 is no answer.
func (w *worker) sendFast(timeout time.Duration) int {
	fr := w.fr
	fr.answered = false
	wire := append(fr.req.Wire[:0], fr.head...)
	if len(fr.deadline) > 0 {
		wire = appendHeader(wire, w.dlName, fr.deadline)
	}
	if fr.hasLength {
		wire = strconv.AppendInt(append(wire, "Content-Length: "...), int64(len(w.bodyBuf)), 10)
		wire = append(wire, "\r\n"...)
	}
	wire = append(append(wire, "\r\n"...), w.bodyBuf...)
	fr.req.Wire = wire
	if err := fr.host.Do(&fr.req, &fr.resp, time.Now().Add(timeout)); err != nil {
		return 0
	}
	fr.answered = true
	return fr.resp.Status
}

// fastHeader is a header of the last answer ("" without one).
func (w *worker) fastHeader(name string) string {
	if !w.fr.answered {
		return ""
	}
	return w.fr.resp.Header(name)
}
