package toxiserver

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// start runs Main and returns the API's base URL.
func start(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Main(ctx, args, pw, io.Discard); pw.Close() }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("toxiproxy did not stop within 5s")
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
}

func status(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestTokenGuardsTheAPI(t *testing.T) {
	base := start(t, "--listen", "127.0.0.1:0", "--token", "s3cret")
	get := func(url string, hdr ...string) int {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if len(hdr) == 2 {
			req.Header.Set(hdr[0], hdr[1])
		}
		return status(t, req)
	}
	if c := get(base + "/version"); c != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", c)
	}
	if c := get(base+"/version", "Authorization", "Bearer nope"); c != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", c)
	}
	if c := get(base+"/version", "Authorization", "Bearer s3cret"); c != http.StatusOK {
		t.Errorf("bearer token: %d, want 200", c)
	}
	withUser := strings.Replace(base, "http://", "http://:s3cret@", 1)
	if c := get(withUser + "/proxies"); c != http.StatusOK {
		t.Errorf("basic-auth token in the URL: %d, want 200", c)
	}
}

func TestOpenAPIOnlyOnLoopback(t *testing.T) {
	base := start(t, "--listen", "127.0.0.1:0")
	req, _ := http.NewRequest(http.MethodGet, base+"/version", nil)
	if c := status(t, req); c != http.StatusOK {
		t.Errorf("loopback without token: %d, want 200", c)
	}
	err := Main(context.Background(), []string{"--listen", "0.0.0.0:0"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--token") {
		t.Errorf("non-loopback listen without a token: %v, want a refusal naming --token", err)
	}
}
