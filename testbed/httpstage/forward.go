package httpstage

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/http2"
)

// h2transport is the stage's HTTP/2 client to the current upstream over
// plaintext (prior knowledge); its streams share a few connections. It
// asks for no compression of its own: Accept-Encoding and the answer's
// Content-Encoding pass through as the client and upstream set them.
func (s *Stage) h2transport() *http2.Transport {
	s.h2once.Do(func() {
		s.h2t = &http2.Transport{
			AllowHTTP:          true,
			DisableCompression: true,
			DialTLSContext: func(ctx context.Context, _, _ string, _ *tls.Config) (net.Conn, error) {
				d := net.Dialer{Timeout: DialTimeout}
				return d.DialContext(ctx, "tcp", s.Upstream())
			},
		}
	})
	return s.h2t
}

// forwardH2 forwards one HTTP/2 stream upstream and streams the answer
// back: headers, body (flushed as it comes) and trailers. The call's
// context is the client stream's, so a client that cancels cancels the
// upstream stream too. An upstream that fails before answering is
// answered as gRPC UNAVAILABLE (a gRPC call) or 502; one that fails
// mid-answer resets the client's stream.
func (s *Stage) forwardH2(w http.ResponseWriter, r *http.Request) {
	res, err := s.h2transport().RoundTrip(upstreamRequest(r, s.Upstream()))
	if err != nil {
		if isGRPC(r) {
			writeGRPCStatus(w, grpcUnavailable, "chaosrun http stage: upstream: "+err.Error(), 0)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	h := w.Header()
	for k, vv := range res.Header {
		h[k] = vv
	}
	var declared []string // trailers announced with the headers
	for k := range res.Trailer {
		declared = append(declared, k)
	}
	if len(declared) > 0 {
		h.Add("Trailer", strings.Join(declared, ", "))
	}
	w.WriteHeader(res.StatusCode)
	if err := copyFlushing(w, res.Body); err != nil {
		panic(http.ErrAbortHandler) // resets the client's stream
	}
	for k, vv := range res.Trailer {
		if !slices.Contains(declared, k) {
			k = http.TrailerPrefix + k
		}
		h[k] = vv
	}
}

// upstreamRequest is r as sent upstream: same method, path, query, host,
// headers, body and trailers, and r's context. The X-Forwarded and
// Forwarded headers a client sent are dropped, as a reverse proxy does.
func upstreamRequest(r *http.Request, upstream string) *http.Request {
	out := r.WithContext(r.Context())
	out.URL = &url.URL{Scheme: "http", Host: upstream, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	out.RequestURI = ""
	out.Close = false
	if r.ContentLength == 0 {
		out.Body = nil
	}
	h := r.Header
	for _, k := range [...]string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		delete(h, k)
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // no Go default user agent
	}
	return out
}

// copyFlushing copies body to w, flushing whenever no more of it is
// ready: a streamed message is never held back, and a unary answer's
// message leaves with its trailers. A goroutine reads ahead into two
// pooled buffers; it has ended when copyFlushing returns.
func copyFlushing(w http.ResponseWriter, body io.ReadCloser) error {
	rc := http.NewResponseController(w)
	bp := bodyBufs.Get().(*[2][16 << 10]byte)
	defer bodyBufs.Put(bp)
	free, full := make(chan []byte, 2), make(chan chunk, 2)
	free <- bp[0][:]
	free <- bp[1][:]
	go readAhead(body, free, full)
	dirty := true // the headers: sent at once if no body is ready
	for {
		var c chunk
		select {
		case c = <-full:
		default:
			if dirty {
				if err := rc.Flush(); err != nil {
					return drain(body, free, full, err)
				}
				dirty = false
			}
			c = <-full
		}
		if len(c.b) > 0 {
			if _, err := w.Write(c.b); err != nil {
				return drain(body, free, full, err)
			}
			dirty = true
		}
		switch {
		case errors.Is(c.err, io.EOF):
			return nil
		case c.err != nil:
			return c.err
		}
		free <- c.b[:cap(c.b)]
	}
}

// bodyBufs pools copyFlushing's read-ahead buffers.
var bodyBufs = sync.Pool{New: func() any { return new([2][16 << 10]byte) }}

// chunk is one read of a body: bytes, then the read's error (a non-nil
// error is the last chunk).
type chunk struct {
	b   []byte
	err error
}

// readAhead reads body into the buffers from free and sends each read on
// full, until a read fails (io.EOF included).
func readAhead(body io.Reader, free <-chan []byte, full chan<- chunk) {
	for b := range free {
		n, err := body.Read(b)
		full <- chunk{b[:n], err}
		if err != nil {
			return
		}
	}
}

// drain stops readAhead (closing body ends its read) and waits for it,
// then returns err.
func drain(body io.Closer, free chan<- []byte, full <-chan chunk, err error) error {
	body.Close()
	for c := range full {
		if c.err != nil {
			break
		}
		free <- c.b[:cap(c.b)]
	}
	return err
}
