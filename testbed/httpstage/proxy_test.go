package httpstage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/testbed/toxiserver"
)

// lineWriter hands over the first "listening on" line written to it.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if s := w.buf.String(); strings.Contains(s, "\n") && w.addr != nil {
		w.addr <- strings.TrimSpace(strings.TrimPrefix(strings.SplitN(s, "\n", 2)[0], "listening on "))
		w.addr = nil
	}
	return len(b), nil
}

// startProxyServer runs `chaosrun serve toxiproxy --http-stage` (its Main,
// in this process) and returns its API URL.
func startProxyServer(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	out := &lineWriter{addr: ready}
	stderr := &lineWriter{} // zerolog writes from many goroutines
	done := make(chan error, 1)
	go func() {
		done <- toxiserver.Main(ctx, []string{"--listen", "127.0.0.1:0", "--seed", "7", "--http-stage"}, out, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("proxy server: %v", err)
		}
	})
	select {
	case a := <-ready:
		return a
	case err := <-done:
		t.Fatalf("proxy server ended: %v: %s", err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("proxy server did not start")
	}
	return ""
}

// api sends one JSON request to the proxy server and decodes the answer.
func api(t testing.TB, method, u string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, u, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, u, err, b)
		}
	}
	return resp.StatusCode
}

// createProxy creates a proxy as the testbeds do and returns its address.
func createProxy(t testing.TB, apiURL, name, upstream string) string {
	t.Helper()
	var p struct{ Listen, Upstream string }
	if st := api(t, "POST", apiURL+"/proxies", map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}, &p); st != http.StatusCreated {
		t.Fatalf("create proxy: HTTP %d", st)
	}
	if p.Upstream != upstream {
		t.Errorf("proxy answer shows upstream %q, want %q", p.Upstream, upstream)
	}
	return p.Listen
}

// TestHTTPErrorRate is the acceptance test: a 20% http_error on
// /transact/cash, added through the Toxiproxy API of the real proxy server,
// answers 503 to 20% ± 2% of 5,000 requests on that path and to none of
// the others, over keep-alive connections through the Toxiproxy proxy.
func TestHTTPErrorRate(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	defer up.Close()
	apiURL := startProxyServer(t)
	name := "bank->vault"
	listen := createProxy(t, apiURL, name, up.Listener.Addr().String())
	toxics := apiURL + "/proxies/" + url.PathEscape(name) + "/toxics"
	tox := map[string]any{"name": "chaosrun-cash-503", "type": "http_error", "stream": "downstream", "toxicity": 0.2,
		"attributes": map[string]any{"status": 503, "path": "/transact/cash", "method": "POST"}}
	if st := api(t, "POST", toxics, tox, nil); st != http.StatusOK {
		t.Fatalf("add http_error: HTTP %d", st)
	}
	// A TCP toxic on the same proxy still works beside it.
	if st := api(t, "POST", toxics, map[string]any{"name": "lat", "type": "latency", "attributes": map[string]any{"latency": 0}}, nil); st != http.StatusOK {
		t.Fatalf("add latency toxic: HTTP %d", st)
	}

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	count := func(path string, n int) (errs int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range 4 { // 4 keep-alive connections
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					resp, err := client.Post("http://"+listen+path, "application/json", strings.NewReader(`{"amount":1}`))
					if err != nil {
						t.Errorf("%s: %v", path, err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					mu.Lock()
					switch resp.StatusCode {
					case 503:
						errs++
					case 200:
					default:
						t.Errorf("%s: status %d", path, resp.StatusCode)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return errs
	}
	const n = 5000
	cash := count("/transact/cash", n)
	other := count("/transact/check", 1000)
	frac := float64(cash) / n
	t.Logf("503s: %d of %d on /transact/cash (%.2f%%), %d of 1000 on /transact/check", cash, n, 100*frac, other)
	if frac < 0.18 || frac > 0.22 {
		t.Errorf("503 fraction %.4f, want 0.20 ± 0.02", frac)
	}
	if other != 0 {
		t.Errorf("%d 503s on /transact/check, want 0", other)
	}

	// The toxic shows with its counters beside Toxiproxy's, and removing
	// it returns the final counts.
	var list []map[string]any
	api(t, "GET", toxics, nil, &list)
	if len(list) != 2 {
		t.Errorf("toxic list has %d entries, want 2 (latency + http_error): %v", len(list), list)
	}
	var final struct {
		Stats struct{ Seen, Matched, Affected int64 }
		Seed  int64
	}
	if st := api(t, "DELETE", toxics+"/chaosrun-cash-503", nil, &final); st != http.StatusOK {
		t.Fatalf("remove: HTTP %d", st)
	}
	if final.Stats.Seen != n+1000 || final.Stats.Matched != n || final.Stats.Affected != int64(cash) || final.Seed == 0 {
		t.Errorf("final stats %+v seed %d, want seen %d matched %d affected %d", final.Stats, final.Seed, n+1000, n, cash)
	}
	if got := count("/transact/cash", 200); got != 0 {
		t.Errorf("%d 503s after the toxic was removed", got)
	}
	// Errors name what is wrong.
	for _, tc := range []struct {
		body map[string]any
		want int
	}{
		{map[string]any{"name": "x", "type": "http_error", "attributes": map[string]any{"status": 99}}, 400},
		{map[string]any{"name": "lat", "type": "http_error"}, 409},
		{map[string]any{"name": "y", "type": "http_latency", "attributes": map[string]any{"bogus": 1}}, 400},
	} {
		if st := api(t, "POST", toxics, tc.body, nil); st != tc.want {
			t.Errorf("add %v: HTTP %d, want %d", tc.body, st, tc.want)
		}
	}
	if st := api(t, "POST", apiURL+"/proxies/nope/toxics", map[string]any{"name": "z", "type": "http_error"}, nil); st != 404 {
		t.Errorf("toxic on a missing proxy: HTTP %d, want 404", st)
	}
	// Deleting the proxy closes its stage.
	var stage struct{ Listen string }
	api(t, "GET", apiURL+"/proxies/"+url.PathEscape(name)+"/http", nil, &stage)
	if st := api(t, "DELETE", apiURL+"/proxies/"+url.PathEscape(name), nil, nil); st != http.StatusNoContent {
		t.Fatalf("delete proxy: HTTP %d", st)
	}
	if _, err := http.Get("http://" + stage.Listen + "/"); err == nil {
		t.Errorf("stage %s still serves after its proxy was deleted", stage.Listen)
	}
}
