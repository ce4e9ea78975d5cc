package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// externalServer is a small HTTP service the test runs itself, outside
// chaosrun: /hello counts into demo_hello_total, served at
// /internal/metrics (not the default path).
func externalServer(t *testing.T) (addr string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	reg := prometheus.NewRegistry()
	counter := prometheus.NewCounter(prometheus.CounterOpts{Name: "demo_hello_total", Help: "GET /hello served."})
	reg.MustRegister(counter)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) {
		counter.Inc()
		hits.Add(1)
		fmt.Fprintln(w, "hello")
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("GET /internal/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), hits
}

// externalScenario writes the external scenario, pointed at addr, with its
// script into a folder of its own.
func externalScenario(t *testing.T, addr string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/external/external.yaml")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/external/hello.js")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "external-api.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(string(src), "ADDR", addr, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.js"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestExternalServiceAB: a service started by the test, not by chaosrun,
// is loaded through the proxy in front of it; a latency fault on
// workload->api reaches what the load sees (with the fault at 1 ms the
// assertion that sees it breaches), and the service's own counter is read
// from /internal/metrics.
func TestExternalServiceAB(t *testing.T) {
	skipShort(t)
	addr, hits := externalServer(t)
	file := externalScenario(t, addr)
	cases := []struct {
		name string
		sets []string
		code int
	}{
		{"fault-seen", nil, exitOK},
		{"no-fault-breaches", []string{"--set", "faults.slow-api.attributes.latency=1"}, exitBreach},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := hits.Load()
			res := runChaosrun(t, 3*time.Minute, append(append([]string{"--quiet"}, tc.sets...), file)...)
			t.Logf("stdout:\n%s", res.stdout)
			if res.code != tc.code {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", res.code, tc.code, res.stderr)
			}
			if tc.code == exitBreach && !strings.Contains(res.stderr+res.stdout, "fault-reaches-api") {
				t.Errorf("the breach does not name fault-reaches-api:\n%s", res.stderr)
			}
			if n := hits.Load() - before; n < 600 {
				t.Errorf("the external server saw %d requests of a 15 s run at 50/s", n)
			}
			r := readRecord(t, filepath.Join(res.outDir, "external-api", "run.json"))
			if r.Incomplete {
				t.Fatalf("record incomplete: %v", r.Problems)
			}
			scraped := false
			for _, s := range r.Scrapes {
				_, scraped = s.Values["demo_hello_total"]
				if scraped {
					break
				}
			}
			if !scraped {
				t.Errorf("no scrape of demo_hello_total from /internal/metrics in the record (%d scrapes)", len(r.Scrapes))
			}
			if _, err := net.DialTimeout("tcp", addr, time.Second); err != nil {
				t.Errorf("the external server is gone after the run: %v", err)
			}
		})
	}
}
