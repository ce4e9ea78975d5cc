package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

const exportedRun = "../../export/metrics/testdata/bank-outlier-host-off.json"

// otlpReceiver answers OTLP metric posts on /v1/metrics, counting them,
// and refuses everything else.
func otlpReceiver(t *testing.T) (*httptest.Server, *atomic.Int32) {
	posts := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/metrics" {
			posts.Add(1)
			return
		}
		http.Error(w, "refused", http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv, posts
}

func TestExportResultsCommand(t *testing.T) {
	srv, posts := otlpReceiver(t)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"otlp", []string{"--export-otlp", srv.URL + "/v1/metrics", "--export-label", "env=ci", exportedRun}, exitOK, "exported bank-outlier-host (run bank-outlier-host@"},
		{"nowhere", []string{exportedRun}, exitUsage, "nowhere to send"},
		{"bad label", []string{"--export-otlp", srv.URL, "--export-label", "job=x", exportedRun}, exitUsage, `export label "job"`},
		{"label without value", []string{"--export-otlp", srv.URL, "--export-label", "env", exportedRun}, exitUsage, "want NAME=VALUE"},
		{"bad url", []string{"--export-prom-rw", "127.0.0.1:9090", exportedRun}, exitUsage, `prometheus remote write URL "127.0.0.1:9090"`},
		{"missing file", []string{"--export-otlp", srv.URL, "nope.json"}, exitUsage, "nope.json"},
		{"receiver refuses", []string{"--export-prom-rw", srv.URL + "/refuse", exportedRun}, exitRunError, "export bank-outlier-host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"export-results"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tc.code, tc.stderr)
			}
		})
	}
	if posts.Load() == 0 {
		t.Fatal("the OTLP receiver got nothing")
	}
}
