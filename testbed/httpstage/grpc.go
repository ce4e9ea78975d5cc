package httpstage

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Kinds of gRPC toxics: they act on gRPC calls (HTTP/2 requests whose
// content-type is application/grpc…), matched by path (the call's
// /package.Service/Method), method and header (metadata) as HTTP toxics
// are.
const (
	// KindGRPCError answers the call with a gRPC status, without
	// forwarding it.
	KindGRPCError = "grpc_error"
	// KindGRPCLatency delays the call before forwarding it, or with
	// response its response headers once the server has answered.
	KindGRPCLatency = "grpc_latency"
	// KindGRPCReset resets the call's stream (RST_STREAM), or with goaway
	// ends the connection (GOAWAY).
	KindGRPCReset = "grpc_reset"
)

// grpcUnavailable is gRPC's UNAVAILABLE, grpc_error's default code.
const grpcUnavailable = 14

func isGRPCKind(t string) bool {
	return t == KindGRPCError || t == KindGRPCLatency || t == KindGRPCReset
}

// checkGRPC checks grpc_error's and grpc_reset's attributes and sets
// grpc_error's default code.
func checkGRPC(name string, a *Attributes) error {
	if a.Code == 0 {
		a.Code = grpcUnavailable
	}
	switch {
	case a.Code < 1 || a.Code > 16:
		return fmt.Errorf("toxic %s: code %d (allowed: 1..16, a gRPC status other than OK)", name, a.Code)
	case a.PushbackMS < 0 || a.PushbackMS > MaxLatency.Milliseconds():
		return fmt.Errorf("toxic %s: pushback_ms %d (allowed: 0..%d)", name, a.PushbackMS, MaxLatency.Milliseconds())
	case a.GoAway != 0 && a.GoAway != 1:
		return fmt.Errorf("toxic %s: goaway %d (allowed: 0 or 1)", name, a.GoAway)
	case a.Response != 0 && a.Response != 1:
		return fmt.Errorf("toxic %s: response %d (allowed: 0 or 1)", name, a.Response)
	}
	return nil
}

// isH2 reports whether the client opened with HTTP/2's connection preface
// (prior knowledge, as gRPC clients do over plaintext). It peeks one byte
// more only while the bytes so far match the preface, so a request or a
// stream of any other protocol is never held waiting for bytes its client
// will not send. An HTTP/1.1 "Upgrade: h2c" request is served (and
// tunnelled after its 101) on the HTTP/1.1 path.
func isH2(r interface{ Peek(int) ([]byte, error) }) bool {
	for n := 1; n <= len(http2.ClientPreface); n++ {
		b, err := r.Peek(n)
		if err != nil || b[n-1] != http2.ClientPreface[n-1] {
			return false
		}
	}
	return true
}

// serveH2 serves the connection as HTTP/2 when the upstream could not be
// reached for a relay (see relayH2): each stream is decided on by the gRPC
// toxics, then answered, delayed, reset or forwarded upstream over the
// stage's own HTTP/2 connections, which answer UNAVAILABLE (or 502) while
// the upstream is down.
func (k *conn) serveH2() {
	base := &http.Server{ReadHeaderTimeout: DialTimeout}
	srv := &http2.Server{MaxConcurrentStreams: 1000}
	if err := http2.ConfigureServer(base, srv); err != nil {
		return
	}
	h := &h2Handler{s: k.s, goaway: func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = base.Shutdown(ctx) // sends GOAWAY, lets streams in flight end
	}}
	srv.ServeConn(bufferedConn{Conn: k.c, r: k.cr}, &http2.ServeConnOpts{BaseConfig: base, Handler: h})
}

// bufferedConn reads through the reader that already holds the preface.
type bufferedConn struct {
	net.Conn
	r interface{ Read([]byte) (int, error) }
}

func (c bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// h2Handler serves one client connection's HTTP/2 streams.
type h2Handler struct {
	s      *Stage
	goaway func()
}

func (h *h2Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	s.requests.Add(1)
	delay, respDelay, act := s.decideCall(requestCall(r))
	if delay > 0 && !s.sleepCtx(r.Context(), min(delay, MaxLatency)) {
		return
	}
	switch {
	case act == nil && respDelay > 0:
		s.forwardH2(&heldHeaders{ResponseWriter: w, hold: func() bool {
			return s.sleepCtx(r.Context(), min(respDelay, MaxLatency))
		}}, r)
	case act == nil:
		s.forwardH2(w, r)
	case act.toxic.Type == KindGRPCError:
		a := act.toxic.Attributes
		writeGRPCStatus(w, a.Code, "injected by chaosrun grpc_error "+act.toxic.Name, a.PushbackMS)
	case act.toxic.Attributes.GoAway == 1:
		go h.goaway()
		panic(http.ErrAbortHandler)
	default:
		panic(http.ErrAbortHandler) // RST_STREAM
	}
}

// heldHeaders holds a response's headers, and so everything after them,
// until hold returns: the first WriteHeader, Write or Flush waits for it.
// A hold cut short (the caller gone, the stage closing) aborts the stream.
type heldHeaders struct {
	http.ResponseWriter
	hold func() bool
	done bool
}

func (h *heldHeaders) wait() {
	if h.done {
		return
	}
	h.done = true
	if !h.hold() {
		panic(http.ErrAbortHandler)
	}
}

func (h *heldHeaders) WriteHeader(code int) {
	h.wait()
	h.ResponseWriter.WriteHeader(code)
}

func (h *heldHeaders) Write(b []byte) (int, error) {
	h.wait()
	return h.ResponseWriter.Write(b)
}

// FlushError flushes after the hold and reports a client gone, as
// http.ResponseController's Flush does for the writer underneath.
func (h *heldHeaders) FlushError() error {
	h.wait()
	return http.NewResponseController(h.ResponseWriter).Flush()
}

func (h *heldHeaders) Flush() { _ = h.FlushError() }

// isGRPC reports whether r is a gRPC call (content-type application/grpc,
// application/grpc+proto, …).
func isGRPC(r *http.Request) bool { return isGRPCContentType(r.Header.Get("Content-Type")) }

func isGRPCContentType(ct string) bool {
	return ct == "application/grpc" || strings.HasPrefix(ct, "application/grpc+") || strings.HasPrefix(ct, "application/grpc;")
}

// callInfo is what the gRPC toxics match a call on.
type callInfo struct {
	grpc         bool
	method, path string                     // path without its query
	values       func(name string) []string // a header's (metadata's) values
}

// requestCall is an HTTP/2 request as the toxics see it.
func requestCall(r *http.Request) callInfo {
	return callInfo{grpc: isGRPC(r), method: r.Method, path: r.URL.Path, values: r.Header.Values}
}

// fieldsCall is a decoded request header block as the toxics see it.
func fieldsCall(fields []hpack.HeaderField) callInfo {
	c := callInfo{values: func(name string) []string {
		var vv []string
		for _, f := range fields {
			if strings.EqualFold(f.Name, name) {
				vv = append(vv, f.Value)
			}
		}
		return vv
	}}
	for _, f := range fields {
		switch f.Name {
		case ":method":
			c.method = f.Value
		case ":path":
			c.path, _, _ = strings.Cut(f.Value, "?")
		case "content-type":
			c.grpc = isGRPCContentType(f.Value)
		}
	}
	return c
}

// decideCall rolls every gRPC toxic for one call: the delay before it is
// forwarded, the hold of its answer's headers, and the toxic that answers
// or resets it instead of forwarding it (nil: none). A call that is not
// gRPC is left alone.
func (s *Stage) decideCall(c callInfo) (delay, respDelay time.Duration, act *rule) {
	if !c.grpc {
		return 0, 0, nil
	}
	for _, ru := range *s.rules.Load() {
		if !ru.grpc {
			continue
		}
		hit, d := ru.roll(ru.matchesCall(c))
		switch {
		case !hit:
		case ru.toxic.Type == KindGRPCLatency && ru.toxic.Attributes.Response == 1:
			respDelay += d
		default:
			delay += d
			if act == nil && ru.toxic.Type != KindGRPCLatency {
				act = ru
			}
		}
	}
	return delay, respDelay, act
}

// writeGRPCStatus answers a call trailers-only: HTTP 200 with the status
// in the one HEADERS frame that ends the stream.
func writeGRPCStatus(w http.ResponseWriter, code int, msg string, pushbackMS int64) {
	h := w.Header()
	for _, f := range grpcStatusFields(code, msg, pushbackMS)[1:] { // after :status
		h.Set(f.Name, f.Value)
	}
	w.WriteHeader(http.StatusOK)
}

// grpcMessage percent-encodes a status message as gRPC's wire format asks
// (every byte outside printable ASCII, and %).
func grpcMessage(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// matchesCall reports whether a call is one the rule selects: method,
// path glob and regex, header globs (metadata).
func (r *rule) matchesCall(c callInfo) bool {
	a := &r.toxic.Attributes
	if a.Method != "" && !strings.EqualFold(c.method, a.Method) {
		return false
	}
	p := []byte(c.path)
	if a.Path != "" && !globMatch(a.Path, p) {
		return false
	}
	if r.re != nil && !r.re.Match(p) {
		return false
	}
	for name, pattern := range a.Header {
		if !slices.ContainsFunc(c.values(name), func(v string) bool { return globMatch(pattern, []byte(v)) }) {
			return false
		}
	}
	return true
}

// sleepCtx waits d unless the stage closes or ctx ends first.
func (s *Stage) sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	case <-ctx.Done():
		return false
	}
}
