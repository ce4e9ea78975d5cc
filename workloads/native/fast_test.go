package native

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
)

func TestRequestLinePieces(t *testing.T) {
	targets := []struct{ in, want string }{
		{"/kv/p1/r00042?v=1", "/kv/p1/r00042?v=1"},
		{"/a b", "/a%20b"},
		{"/caf\xc3\xa9", "/caf%C3%A9"},
		{"/x\r\nX-Injected: 1", "/x%0D%0AX-Injected:%201"},
		{"/tab\there\x7f", "/tab%09here%7F"},
	}
	for _, tc := range targets {
		if got := string(appendTarget(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("target %q: %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := string(appendHeader(nil, "X-Key", []byte("a\r\nX-Injected: 1"))); got != "X-Key: a  X-Injected: 1\r\n" {
		t.Errorf("a header value with a line end: %q", got)
	}
	ports := []struct{ scheme, host, want string }{
		{"http", "127.0.0.1:8080", "127.0.0.1:8080"},
		{"http", "bank", "bank:80"},
		{"https", "bank", "bank:443"},
		{"http", "[::1]", "[::1]:80"},
		{"http", "[::1]:9000", "[::1]:9000"},
	}
	for _, tc := range ports {
		if got := hostPort(target{scheme: tc.scheme, host: tc.host}); got != tc.want {
			t.Errorf("%s://%s: dials %q, want %q", tc.scheme, tc.host, got, tc.want)
		}
	}
}

// TestHostHeaderAndHead: a stream that sets Host sends its own and no
// other; a HEAD whose answer announces a body does not wait for one.
func TestHostHeaderAndHead(t *testing.T) {
	var mu sync.Mutex
	hosts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts[r.Method+" "+r.Host]++
		mu.Unlock()
		w.Header().Set("Content-Length", "1000")
		if r.Method == http.MethodGet {
			_, _ = w.Write(make([]byte, 1000))
		}
	}))
	defer srv.Close()
	mk := func(method string, headers map[string]string) Stream {
		return Stream{Name: method, Targets: []string{srv.URL}, Method: method, Path: "/", Headers: headers,
			Timeout: 2 * time.Second, Arrival: arrival.Constant(50, 0, time.Second)}
	}
	spec := Spec{Streams: []Stream{mk("GET", map[string]string{"Host": "bank.internal"}), mk("HEAD", nil)}}
	sum := runToStream(t, spec, Shard{})
	for _, name := range []string{"GET", "HEAD"} {
		_, ok := total(sum, "http_reqs", map[string]string{"scenario": name})
		_, failed := total(sum, "http_req_failed", map[string]string{"scenario": name})
		if ok != 50 || failed != 0 {
			t.Errorf("%s: %v requests, %v failed; want 50 and 0", name, ok, failed)
		}
	}
	want := map[string]int{"GET bank.internal": 50, "HEAD " + srv.Listener.Addr().String(): 50}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != 2 || hosts["GET bank.internal"] != 50 || hosts["HEAD "+srv.Listener.Addr().String()] != 50 {
		t.Fatalf("the server saw %v, want %v", hosts, want)
	}
}
