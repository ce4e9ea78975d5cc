package h1

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// get is a GET of path as the engine renders it.
func get(addr, path string, extra ...string) *Request {
	wire := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n" + strings.Join(extra, "") + "\r\n"
	return &Request{Wire: []byte(wire), Retry: true}
}

// countingServer starts a test server that counts the connections it
// accepted; configure, if set, adjusts it before it starts.
func countingServer(hd http.Handler, configure func(*http.Server)) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(hd)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	if configure != nil {
		configure(srv.Config)
	}
	srv.Start()
	return srv, &n
}

func hostOf(srv *httptest.Server) string { return strings.TrimPrefix(srv.URL, "http://") }

// TestHostAgainstNetHTTP sends to a real net/http server the answers it
// writes in its usual ways: by length, chunked as a handler flushes, an
// early hint before the answer, HEAD, and a close. The connection must
// carry every request but the one after the close.
func TestHostAgainstNetHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/len", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen", r.Header.Get("X-Key"))
		_, _ = io.WriteString(w, "hello")
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "part %d;", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(make([]byte, 1<<20))
	})
	mux.HandleFunc("/hint", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	srv, conns := countingServer(mux, nil)
	defer srv.Close()
	addr := hostOf(srv)
	h := NewHost(Options{Addr: addr, MaxConns: 4, ReadBuffer: 4096})
	defer h.CutAll()
	steps := []struct {
		req    *Request
		status int
		conns  int64
	}{
		{get(addr, "/len", "X-Key: k42\r\n"), 200, 1},
		{get(addr, "/chunked"), 200, 1},
		{get(addr, "/big"), 200, 1},
		{&Request{Wire: []byte("HEAD /big HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"), Head: true}, 200, 1},
		{get(addr, "/hint"), 202, 1},
		{get(addr, "/missing"), 404, 1},
		{get(addr, "/close"), 503, 1},
		{get(addr, "/len", "X-Key: again\r\n"), 200, 2},
	}
	var resp Response
	for i, s := range steps {
		if err := h.Do(s.req, &resp, time.Now().Add(5*time.Second)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if resp.Status != s.status || conns.Load() != s.conns {
			t.Fatalf("step %d: status %d on %d connections; want %d on %d", i, resp.Status, conns.Load(), s.status, s.conns)
		}
	}
	if got := resp.Header("X-Seen"); got != "again" {
		t.Fatalf("X-Seen %q: the answer's headers are not the last answer's", got)
	}
}

// TestHostRetriesAStaleConnection: a server that closes idle connections
// after 50 ms. A GET on a connection it closed goes again on a fresh one;
// a POST, which may not be repeated, fails.
func TestHostRetriesAStaleConnection(t *testing.T) {
	srv, conns := countingServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		func(s *http.Server) { s.IdleTimeout = 50 * time.Millisecond })
	defer srv.Close()
	addr := hostOf(srv)
	h := NewHost(Options{Addr: addr, MaxConns: 1})
	defer h.CutAll()
	var resp Response
	post := &Request{Wire: []byte("POST / HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 0\r\n\r\n")}
	for i, req := range []*Request{get(addr, "/"), get(addr, "/"), post} {
		err := h.Do(req, &resp, time.Now().Add(5*time.Second))
		if i < 2 && err != nil {
			t.Fatalf("GET %d after the server closed the idle connection: %v", i, err)
		}
		if i == 2 && err == nil {
			t.Fatal("a POST on a closed kept-alive connection succeeded: it was sent twice")
		}
		time.Sleep(150 * time.Millisecond)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the first, and the retried GET's; the POST went on the closed one)", n)
	}
}

// TestHostBound: with one connection, a second request waits for it, and
// one that cannot get it in its time fails with ErrNoConn.
func TestHostBound(t *testing.T) {
	release := make(chan struct{})
	srv, conns := countingServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
	}), nil)
	defer srv.Close()
	defer close(release)
	addr := hostOf(srv)
	h := NewHost(Options{Addr: addr, MaxConns: 1})
	defer h.CutAll()
	slow := make(chan error, 1)
	go func() { slow <- h.Do(get(addr, "/slow"), &Response{}, time.Now().Add(10*time.Second)) }()
	time.Sleep(100 * time.Millisecond)
	if err := h.Do(get(addr, "/"), &Response{}, time.Now().Add(100*time.Millisecond)); !errors.Is(err, ErrNoConn) {
		t.Fatalf("a request with the only connection busy: %v, want ErrNoConn", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- h.Do(get(addr, "/"), &Response{}, time.Now().Add(10*time.Second)) }()
	time.Sleep(50 * time.Millisecond)
	release <- struct{}{}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the waiting request: %v", err)
	}
	if conns.Load() != 1 || h.Open() != 1 {
		t.Fatalf("%d connections accepted, %d open; want 1 and 1", conns.Load(), h.Open())
	}
}

// TestHostDeadlineAndCut: a request past its deadline fails with the
// deadline's error and closes its connection; CutAll ends requests in
// flight at once and refuses new ones.
func TestHostDeadlineAndCut(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(stop)
	addr := hostOf(srv)
	h := NewHost(Options{Addr: addr, MaxConns: 8})
	t0 := time.Now()
	err := h.Do(get(addr, "/"), &Response{}, time.Now().Add(100*time.Millisecond))
	if !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(t0) > 2*time.Second {
		t.Fatalf("after %v: %v, want the deadline's error", time.Since(t0), err)
	}
	if h.Open() != 0 {
		t.Fatalf("%d connections open after a timeout, want 0", h.Open())
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = h.Do(get(addr, "/"), &Response{}, time.Now().Add(time.Minute)) })
	}
	time.Sleep(100 * time.Millisecond)
	t0 = time.Now()
	h.CutAll()
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Fatalf("request %d survived the cut", i)
		}
	}
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("the cut took %v", d)
	}
	if err := h.Do(get(addr, "/"), &Response{}, time.Now().Add(time.Second)); !errors.Is(err, ErrCut) {
		t.Fatalf("a request after the cut: %v, want ErrCut", err)
	}
}

// TestDoDoesNotAllocate: a request on a kept-alive connection allocates
// nothing (the server here is a loop over one connection that allocates
// nothing either).
func TestDoDoesNotAllocate(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		answer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Backpressure: 0\r\n\r\nok")
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if _, err := c.Write(answer); err != nil {
				return
			}
		}
	}()
	addr := ln.Addr().String()
	h := NewHost(Options{Addr: addr, MaxConns: 1})
	defer h.CutAll()
	req, resp := get(addr, "/"), &Response{}
	deadline := time.Now().Add(time.Minute)
	if err := h.Do(req, resp, deadline); err != nil { // dials
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(200, func() {
		if err := h.Do(req, resp, deadline); err != nil || resp.Status != 200 {
			t.Fatalf("status %d: %v", resp.Status, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per request, want 0", allocs)
	}
}
