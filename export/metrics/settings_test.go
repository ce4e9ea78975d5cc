package metrics

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

// TestExportResults: export-results, from its settings to its
// exit code: each run is sent and said; nowhere to send, bad flags and a
// missing record exit 2; a sink that refuses 3.
func TestExportResults(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/metrics" {
			posts.Add(1)
			return
		}
		http.Error(w, "refused", http.StatusBadRequest)
	}))
	defer srv.Close()
	const run = "testdata/bank-outlier-host-off.json"
	tests := []struct {
		name   string
		f      Settings
		args   []string
		code   int
		stderr string
	}{
		{"otlp", Settings{OTLP: srv.URL + "/v1/metrics"}, []string{run}, exitcode.OK, "exported bank-outlier-host (run bank-outlier-host@"},
		{"nowhere", Settings{}, []string{run}, exitcode.Usage, "nowhere to send"},
		{"label without value", Settings{OTLP: srv.URL, Labels: []string{"env"}}, []string{run}, exitcode.Usage, "want NAME=VALUE"},
		{"a missing record", Settings{OTLP: srv.URL}, []string{"nope.json"}, exitcode.Usage, "nope.json"},
		{"the sink refuses", Settings{PromRW: srv.URL + "/refuse"}, []string{run}, exitcode.RunError, "chaosrun export-results: export bank-outlier-host"},
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := tt.f.ExportResults(context.Background(), workdir.FS{FS: os.DirFS("/"), Dir: here}, &stderr, tt.args)
			code, said := exitcode.OK, stderr.String()
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
				if ee.Err != nil {
					said += ee.Err.Error()
				}
			}
			if code != tt.code || !strings.Contains(said, tt.stderr) {
				t.Fatalf("exit %d saying %q, want %d saying %q", code, said, tt.code, tt.stderr)
			}
		})
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("the OTLP receiver got %d posts, want 1", n)
	}
}
