package bankservice

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

type mainFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// runMain starts a target's Main with args, waits for its ready line and returns the
// base URL and a stop func that cancels it and returns Main's result and how long
// it took to return.
func runMain(t *testing.T, main mainFunc, args ...string) (string, func() (error, time.Duration)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := main(ctx, args, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, pr)
	}()
	var base string
	select {
	case line := <-lines:
		var ok bool
		if base, ok = server.ParseReadyLine(line); !ok {
			cancel()
			t.Fatalf("ready line %q, want %q prefix (Main: %v)", line, server.ReadyPrefix, <-done)
		}
	case <-time.After(5 * time.Second):
		cancel()
		t.Fatal("no ready line within 5s")
	}
	stopped := false
	stop := func() (error, time.Duration) {
		if stopped {
			return nil, 0
		}
		stopped = true
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			return err, time.Since(start)
		case <-time.After(10 * time.Second):
			t.Error("Main did not return within 10s of cancel")
			return nil, 0
		}
	}
	t.Cleanup(func() { stop() })
	return base, stop
}

// serve runs a platform server's routes on an httptest server.
func serve(t *testing.T, register func(router), workers int, queueTimeout time.Duration) *httptest.Server {
	t.Helper()
	return serveWith(t, nil, register, workers, queueTimeout)
}

// serveWith is serve with the server's metrics given (nil: fresh ones).
func serveWith(t *testing.T, m *server.Metrics, register func(router), workers int, queueTimeout time.Duration) *httptest.Server {
	t.Helper()
	srv := server.New("test", server.Config{Workers: workers, QueueTimeout: queueTimeout}, m, nil)
	register(srv)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func hostPort(ts *httptest.Server) string { return strings.TrimPrefix(ts.URL, "http://") }

// answer is a decoded response.
type answer struct {
	status int
	reject string // X-Reject-Reason
	body   []byte
	took   time.Duration
}

func (a answer) err() platform.ErrorBody {
	var eb platform.ErrorBody
	_ = json.Unmarshal(a.body, &eb)
	return eb
}

var testClient = &http.Client{
	Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256, MaxIdleConns: 1024},
	Timeout:   15 * time.Second,
}

func post(t *testing.T, url string, body any) answer {
	t.Helper()
	b, _ := json.Marshal(body)
	return do(t, http.MethodPost, url, b)
}

func getURL(t *testing.T, url string) answer {
	t.Helper()
	return do(t, http.MethodGet, url, nil)
}

func do(t *testing.T, method, url string, body []byte) answer {
	t.Helper()
	start := time.Now()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return answer{}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return answer{took: time.Since(start)}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, reject: resp.Header.Get(platform.RejectHeader), body: data, took: time.Since(start)}
}

func decode[T any](t *testing.T, a answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("decode %T from %q: %v", v, a.body, err)
	}
	return v
}
