package httpstage

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// startH2Upstream serves h over plaintext HTTP/2 (prior knowledge).
func startH2Upstream(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// h2Client speaks plaintext HTTP/2 (prior knowledge) to any address.
func h2Client() *http.Client {
	return &http.Client{Transport: &http2.Transport{AllowHTTP: true, DisableCompression: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}, Timeout: 10 * time.Second}
}

// TestH2ForwardStreamsAndTrailers: a streamed answer's first part reaches
// the client before the upstream writes the rest, and trailers (declared
// or not) follow the body; path, query and headers reach the upstream,
// and no Accept-Encoding the client did not send.
func TestH2ForwardStreamsAndTrailers(t *testing.T) {
	next := make(chan struct{})
	up := startH2Upstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Declared")
		w.Header().Set("X-Got", r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("X-Meta")+" "+r.Header.Get("Accept-Encoding"))
		io.WriteString(w, "one")
		http.NewResponseController(w).Flush()
		select {
		case <-next:
		case <-time.After(5 * time.Second):
			return // the client never saw "one": the test fails below
		}
		io.WriteString(w, "two")
		w.Header().Set("X-Declared", "d")
		w.Header().Set(http.TrailerPrefix+"X-Late", "l")
	})
	s := startStage(t, up)
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.Addr()+"/a/b?q=1", nil)
	req.Header.Set("X-Meta", "m")
	resp, err := h2Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("X-Got"); got != "/a/b?q=1 m " {
		t.Errorf("upstream saw %q, want %q (no Accept-Encoding of the stage's own)", got, "/a/b?q=1 m ")
	}
	first := make([]byte, 3)
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "one" {
		t.Fatalf("first part %q, %v", first, err)
	}
	close(next)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "two" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	if d, l := resp.Trailer.Get("X-Declared"), resp.Trailer.Get("X-Late"); d != "d" || l != "l" {
		t.Errorf("trailers %v, want X-Declared: d and X-Late: l", resp.Trailer)
	}
}

// TestH2ForwardCancelReachesUpstream: a client that cancels a stream
// mid-answer cancels the upstream's stream too.
func TestH2ForwardCancelReachesUpstream(t *testing.T) {
	gone := make(chan struct{})
	up := startH2Upstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(5 * time.Second):
		}
	})
	s := startStage(t, up)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.Addr()+checkMethod, strings.NewReader("x"))
	req.Header.Set("Content-Type", "application/grpc")
	resp, err := h2Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancel()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream's stream outlived the client's")
	}
}

// TestH2ForwardUpstreamDown: with no upstream listening, a gRPC call is
// answered UNAVAILABLE and another HTTP/2 request 502.
func TestH2ForwardUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	s := startStage(t, ln.Addr().String())
	for _, tc := range []struct {
		contentType, status string
		code                int
	}{{"application/grpc", "14", http.StatusOK}, {"text/plain", "", http.StatusBadGateway}} {
		resp, err := h2Client().Post("http://"+s.Addr()+checkMethod, tc.contentType, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code || resp.Header.Get("Grpc-Status") != tc.status {
			t.Errorf("%s: HTTP %d grpc-status %q, want %d %q", tc.contentType, resp.StatusCode,
				resp.Header.Get("Grpc-Status"), tc.code, tc.status)
		}
	}
}
