package extension_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/testbed/toxiserver"
)

// proxyServer runs chaosrun's proxy server with its HTTP stage (`chaosrun
// serve toxiproxy --http-stage`, its Main in this process) on 127.0.0.1 and
// returns its API URL.
func proxyServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- toxiserver.Main(ctx, []string{"--listen", "127.0.0.1:0", "--seed", "3", "--http-stage"}, pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("proxy server: %v", err)
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			addr <- strings.TrimSpace(strings.TrimPrefix(sc.Text(), "listening on "))
		}
		io.Copy(io.Discard, pr) //nolint:errcheck // drain until the server ends
	}()
	select {
	case a := <-addr:
		if !strings.HasPrefix(a, "http://") {
			a = "http://" + a
		}
		return a
	case err := <-done:
		t.Fatalf("proxy server ended before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("proxy server did not start within 10s")
	}
	return ""
}

// TestHTTPFaultsFromScript: a k6 script drives http_error and http_latency
// toxics through the extension's Toxiproxy client, and they act on whole
// requests: matched ones answered or held, unmatched ones untouched.
func TestHTTPFaultsFromScript(t *testing.T) {
	k6Binary(t)
	target := server(t)
	env := map[string]string{"TOXIPROXY": proxyServer(t), "UPSTREAM": strings.TrimPrefix(target.URL, "http://")}
	if code, log := runK6(t, env, script("http-faults.js")); code != 0 {
		t.Fatalf("k6 exit %d:\n%s", code, log)
	}
}

// TestGRPCFaultsFromScript: a k6 script that speaks k6/net/grpc drives the
// gRPC toxics through the extension's Toxiproxy client against grpc-go's
// example server: grpc_error on one method, grpc_latency (on the response
// headers) on the other, each acting on its method only, both removed.
func TestGRPCFaultsFromScript(t *testing.T) {
	k6Binary(t)
	env := map[string]string{"TOXIPROXY": proxyServer(t), "UPSTREAM": testenv.GRPCExampleServer(t)}
	if code, log := runK6(t, env, script("grpc-faults.js")); code != 0 {
		t.Fatalf("k6 exit %d:\n%s", code, log)
	}
}
