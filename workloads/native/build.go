package native

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// newDraw returns an empty draw for a lane's keys.
func newDraw(l *lane, seed uint64) draw {
	n := len(l.keys)
	return draw{seed: strconv.FormatUint(seed, 10), text: make([][]byte, n), class: make([]uint8, n), shard: make([]int, n)}
}

// prepareDraw draws arrival g's keys into d and returns its tag variant.
// Draw g is the same in every shard (keys.Stream.At).
func (l *lane) prepareDraw(d *draw, g uint64) uint16 {
	d.seq = g
	for i, k := range l.keys {
		idx, c := k.at(g)
		d.text[i] = k.appendText(d.text[i][:0], idx)
		d.class[i] = c
		d.shard[i] = k.shardOf(d.text[i])
	}
	return l.variant(d)
}

// build sets the request up for arrival g: its target, path, headers and
// body, reusing the worker's objects.
func (w *worker) build(g uint64) {
	l := w.l
	if l.grpc != nil {
		w.buildGRPC(g)
		return
	}
	tg := &l.targets[g%uint64(len(l.targets))]
	if w.fr != nil {
		w.buildFast(tg)
		return
	}
	if tg.fixed != nil {
		w.req.URL = tg.fixed
	} else {
		w.pathBuf = l.path.render(w.pathBuf[:0], &w.d)
		p, q, _ := strings.Cut(string(w.pathBuf), "?")
		if tg.prefix != "" {
			p = tg.prefix + p
		}
		w.url = url.URL{Scheme: tg.scheme, Host: tg.host, Path: p, RawQuery: q}
		w.req.URL = &w.url
	}
	hv := 0
	for _, h := range l.headers {
		if !h.val.isStatic {
			w.hdrVals[hv][0] = string(h.val.render(nil, &w.d))
			hv++
		}
	}
	if l.Body == "" {
		return
	}
	if !w.body.closed.Load() {
		// The transport still reads the last body: leave it its bytes.
		w.body, w.bodyBuf = &reqBody{}, nil
	}
	w.bodyBuf = l.body.render(w.bodyBuf[:0], &w.d)
	w.req.ContentLength = int64(len(w.bodyBuf))
}

// setBody gives the request a body reader over the current bytes, before
// each attempt.
func (w *worker) setBody() {
	if w.l.Body == "" {
		return
	}
	if !w.body.closed.Load() {
		w.body = &reqBody{}
	}
	w.body.r.Reset(w.bodyBuf)
	w.body.closed.Store(false)
	w.req.Body = w.body
}

// getBody is the request's GetBody: the transport replays the body with it.
func (w *worker) getBody() (io.ReadCloser, error) {
	b := &reqBody{}
	b.r.Reset(w.bodyBuf)
	return b, nil
}

// fresh replaces the request with a copy after a failed round trip: the
// transport may still read the old one's headers.
func (w *worker) fresh() {
	h := make(http.Header, len(w.req.Header))
	for k, v := range w.req.Header {
		h[k] = v
	}
	hv := 0
	for _, hd := range w.l.headers {
		if !hd.val.isStatic {
			w.hdrVals[hv] = []string{w.hdrVals[hv][0]}
			h[hd.name] = w.hdrVals[hv]
			hv++
		}
	}
	if w.dlVal != nil {
		w.dlVal = []string{w.dlVal[0]}
		h[http.CanonicalHeaderKey(w.l.Client.Headers.Deadline)] = w.dlVal
	}
	r := *w.req
	r.Header = h
	w.req = &r
	w.body = &reqBody{}
	w.body.closed.Store(true)
	w.bodyBuf = append([]byte(nil), w.bodyBuf...)
}
