package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

func TestParseReadyLine(t *testing.T) {
	tests := []struct {
		line, want string
		ok         bool
	}{
		{"listening on http://127.0.0.1:4000\n", "http://127.0.0.1:4000", true},
		{"listening on http://[::]:4000", "http://[::]:4000", true},
		{"listening on ", "", false},
		{"serving on http://127.0.0.1:1", "", false},
	}
	for _, tt := range tests {
		got, ok := ParseReadyLine(tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseReadyLine(%q) = %q, %v; want %q, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestServerLifecycleAndWorkerLimit(t *testing.T) {
	s := New("test", Config{Listen: "127.0.0.1:0", Workers: 1, QueueTimeout: 100 * time.Millisecond}, nil, nil)
	hold := make(chan struct{})
	entered := make(chan struct{}, 1)
	s.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-hold:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, "done")
	})
	s.HandleFunc("GET /fast", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "fast") })
	base, stop := startServer(t, s)

	if code, _, body := get(t, base+"/healthz"); code != 200 || body != "ok" {
		t.Fatalf("/healthz = %d %q, want 200 ok", code, body)
	}

	var wg sync.WaitGroup
	var slowCode int
	wg.Go(func() { slowCode, _, _ = get(t, base+"/slow") })
	<-entered // the only worker is now busy

	start := time.Now()
	code, hdr, body := get(t, base+"/fast")
	if code != http.StatusServiceUnavailable || hdr.Get(platform.RejectHeader) != platform.ReasonQueueTimeout {
		t.Fatalf("/fast while the only worker is busy = %d %s=%q, want 503 queue-timeout", code, platform.RejectHeader, hdr.Get(platform.RejectHeader))
	}
	if d := time.Since(start); d < 80*time.Millisecond || d > 3*time.Second {
		t.Errorf("queue-timeout answer after %s, want about 100ms", d)
	}
	var eb platform.ErrorBody
	if err := json.Unmarshal([]byte(body), &eb); err != nil || eb.Reason != platform.ReasonQueueTimeout {
		t.Errorf("body %q: want JSON with reason queue-timeout (err %v)", body, err)
	}
	// healthz and metrics bypass the worker limit.
	if code, _, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz while workers busy = %d, want 200", code)
	}
	code, _, metrics := get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{`platform_rejected_total{reason="queue-timeout"} 1`, "platform_inflight 1", "platform_queue_wait_seconds_bucket"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	close(hold)
	wg.Wait()
	if slowCode != 200 {
		t.Errorf("/slow = %d, want 200", slowCode)
	}
	if code, _, body := get(t, base+"/fast"); code != 200 || body != "fast" {
		t.Errorf("/fast after release = %d %q", code, body)
	}
	err, took := stop()
	if err != nil {
		t.Errorf("Run returned %v, want nil", err)
	}
	if took > 2500*time.Millisecond {
		t.Errorf("shutdown took %s, want within 2s", took)
	}
}

func TestServerShutdownCutsLongRequests(t *testing.T) {
	s := New("test", Config{Listen: "127.0.0.1:0", Workers: 4, QueueTimeout: time.Second}, nil, nil)
	entered := make(chan struct{}, 1)
	s.HandleFunc("GET /hang", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	})
	base, stop := startServer(t, s)
	go func() {
		resp, err := http.Get(base + "/hang")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	err, took := stop()
	if err != nil {
		t.Errorf("Run returned %v, want nil", err)
	}
	if took > 2500*time.Millisecond {
		t.Errorf("shutdown with a hanging request took %s, want within 2s", took)
	}
}

func TestServerListenError(t *testing.T) {
	s := New("test", Config{Listen: "127.0.0.1:notaport", Workers: 1}, nil, nil)
	err := s.Run(t.Context(), io.Discard)
	if err == nil || !strings.Contains(err.Error(), `listen on "127.0.0.1:notaport"`) {
		t.Fatalf("err = %v, want listen error naming the address", err)
	}
}
