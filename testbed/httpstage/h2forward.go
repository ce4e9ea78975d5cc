package httpstage

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"

	"golang.org/x/net/http2"
)

// h2transport is the stage's HTTP/2 client to the current upstream
// (plaintext, prior knowledge); streams share its connections.
func (s *Stage) h2transport() *http2.Transport {
	s.h2once.Do(func() {
		s.h2t = &http2.Transport{
			AllowHTTP: true,
			// Relay requests as they are: no Accept-Encoding of the stage's own.
			DisableCompression: true,
			DialTLSContext: func(ctx context.Context, _, _ string, _ *tls.Config) (net.Conn, error) {
				d := net.Dialer{Timeout: DialTimeout}
				return d.DialContext(ctx, "tcp", s.Upstream())
			},
		}
	})
	return s.h2t
}

// forwardH2 sends an HTTP/2 stream upstream and relays the answer: its
// headers, its body as it comes, its trailers (gRPC's status), with no
// header of the stage's own. A client that cancels cancels the upstream
// stream (same context); an upstream stream that breaks resets the
// client's.
func (s *Stage) forwardH2(w http.ResponseWriter, r *http.Request) {
	out := r.WithContext(r.Context())
	u := *r.URL
	u.Scheme, u.Host = "http", s.Upstream()
	out.URL, out.RequestURI = &u, ""
	if r.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := s.h2transport().RoundTrip(out)
	if err != nil {
		if isGRPC(r) {
			writeGRPCStatus(w, grpcUnavailable, "chaosrun http stage: upstream: "+err.Error(), 0)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if err := copyFlushed(w, resp.Body); err != nil {
		panic(http.ErrAbortHandler) // the upstream stream broke: reset the client's
	}
	for k, v := range resp.Trailer {
		h[http.TrailerPrefix+k] = v
	}
}

// chunkPool holds copyFlushed's buffers.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyFlushed copies body to w and flushes each piece as it arrives (a
// gRPC stream's messages must not wait in a buffer); it returns the
// body's error other than EOF.
func copyFlushed(w http.ResponseWriter, body io.Reader) error {
	f, _ := w.(http.Flusher)
	buf := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(buf)
	for {
		n, err := body.Read(*buf)
		if n > 0 {
			if _, werr := w.Write((*buf)[:n]); werr != nil {
				return werr
			}
			if f != nil {
				f.Flush()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
