package httpstage

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// upstream is a real HTTP server that echoes what it got and counts it.
type upstream struct {
	*httptest.Server
	hits atomic.Int64
}

func startUpstream(t testing.TB) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/chunked":
			w.Write([]byte("part1 "))
			w.(http.Flusher).Flush()
			w.Write([]byte("part2"))
			return
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fmt.Fprintf(w, "%s %s body=%q", r.Method, r.URL.Path, body)
	}))
	t.Cleanup(u.Close)
	return u
}

func startStage(t testing.TB, up string, toxics ...Toxic) *Stage {
	t.Helper()
	s, err := New("test", "127.0.0.1:0", up, 7)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, tx := range toxics {
		if _, err := s.Add(tx); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func dial(t testing.TB, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

// readResponses reads n responses to the given methods and returns
// "STATUS body" for each.
func readResponses(t *testing.T, r *bufio.Reader, methods ...string) []string {
	t.Helper()
	var out []string
	for _, m := range methods {
		resp, err := http.ReadResponse(r, &http.Request{Method: m})
		if err != nil {
			t.Fatalf("response %d: %v", len(out), err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("response %d body: %v", len(out), err)
		}
		out = append(out, fmt.Sprintf("%d %s", resp.StatusCode, b))
	}
	return out
}

func TestStagePipelined(t *testing.T) {
	up := startUpstream(t)
	s := startStage(t, up.Listener.Addr().String(),
		Toxic{Name: "cash", Type: KindError, Attributes: Attributes{Path: "/transact/cash", Status: 429, RetryAfter: 2}})
	c, r := dial(t, s.Addr())
	// Five requests in one write: plain, matched with a body, chunked,
	// HEAD, then a chunked response; responses must come back in order.
	reqs := "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /transact/cash HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
		"POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n" +
		"HEAD /transact/cash HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /chunked HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /empty HTTP/1.1\r\nHost: x\r\n\r\n"
	if _, err := io.WriteString(c, reqs); err != nil {
		t.Fatal(err)
	}
	got := readResponses(t, r, "GET", "POST", "POST", "HEAD", "GET", "GET")
	want := []string{
		`200 GET /a body=""`,
		"429 429 Too Many Requests (injected by chaosrun http_error cash)\n",
		`200 POST /b body="abcde"`,
		"429 ",
		"200 part1 part2",
		"204 ",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("response %d = %q, want %q", i, got[i], want[i])
		}
	}
	if n := up.hits.Load(); n != 4 {
		t.Errorf("upstream got %d requests, want 4 (the matched ones answered by the stage)", n)
	}
	tx, _ := s.Get("cash")
	if tx.Stats.Seen != 6 || tx.Stats.Matched != 2 || tx.Stats.Affected != 2 {
		t.Errorf("stats %+v, want seen 6 matched 2 affected 2", *tx.Stats)
	}
}

func TestStageRetryAfterAndClose(t *testing.T) {
	up := startUpstream(t)
	s := startStage(t, up.Listener.Addr().String(), Toxic{Name: "busy", Type: KindError, Attributes: Attributes{Status: 429, RetryAfter: 3}})
	c, r := dial(t, s.Addr())
	io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || !resp.Close {
		t.Errorf("got %d Retry-After %q close %v, want 429, 3, close", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close)
	}
	io.ReadAll(resp.Body)
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("after an HTTP/1.0 answer the stage should close: %v", err)
	}
}

func TestStageLatency(t *testing.T) {
	up := startUpstream(t)
	s := startStage(t, up.Listener.Addr().String(), Toxic{Name: "slow", Type: KindLatency, Attributes: Attributes{Latency: 150, Method: "POST"}})
	client := &http.Client{Timeout: 10 * time.Second}
	for _, tc := range []struct {
		method  string
		min     time.Duration
		slowest time.Duration
	}{{"POST", 150 * time.Millisecond, 5 * time.Second}, {"GET", 0, 100 * time.Millisecond}} {
		t0 := time.Now()
		req, _ := http.NewRequest(tc.method, "http://"+s.Addr()+"/x", strings.NewReader("b"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		if d := time.Since(t0); d < tc.min || d > tc.slowest {
			t.Errorf("%s took %s, want %s..%s", tc.method, d, tc.min, tc.slowest)
		}
	}
}

func TestStageMalformedTunnels(t *testing.T) {
	up := startUpstream(t)
	s := startStage(t, up.Listener.Addr().String(), Toxic{Name: "all", Type: KindError})
	for _, in := range []string{
		"GARBAGE\x00\x01\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
	} {
		c, r := dial(t, s.Addr())
		io.WriteString(c, in)
		c.(*net.TCPConn).CloseWrite()
		b, _ := io.ReadAll(r)
		if got := string(b); !(strings.HasPrefix(got, "HTTP/1.1 400") || strings.HasPrefix(got, "HTTP/1.1 501")) || strings.Contains(got, "X-Chaosrun-Fault") {
			t.Errorf("%q: got %q, want the upstream's own 400 or 501 (passed through)", in, b)
		}
	}
	if _, tun := s.Counts(); tun != 3 {
		t.Errorf("tunnels = %d, want 3", tun)
	}
	tx, _ := s.Get("all")
	if tx.Stats.Seen != 0 {
		t.Errorf("a malformed request must not reach the toxics: %+v", *tx.Stats)
	}
}

// TestStageStaleUpstream: a reused upstream connection that the server
// closed while idle is replaced, and the request is sent again.
func TestStageStaleUpstream(t *testing.T) {
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	up.Config.IdleTimeout = 50 * time.Millisecond
	up.Start()
	defer up.Close()
	s := startStage(t, up.Listener.Addr().String())
	client := &http.Client{Timeout: 5 * time.Second}
	for i := range 3 {
		resp, err := client.Post("http://"+s.Addr()+"/x", "text/plain", strings.NewReader("body"))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		time.Sleep(150 * time.Millisecond) // the upstream closes its idle side
	}
}

func TestStageCloseEndsConnections(t *testing.T) {
	up := startUpstream(t)
	s := startStage(t, up.Listener.Addr().String(), Toxic{Name: "slow", Type: KindLatency, Attributes: Attributes{Latency: 60_000}})
	c, r := dial(t, s.Addr())
	io.WriteString(c, "GET / HTTP/1.1\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a connection held by a 60s delay")
	}
	if _, err := r.ReadByte(); err == nil {
		t.Error("connection still open after Close")
	}
	if _, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond); err == nil {
		t.Error("stage still listens after Close")
	}
}
