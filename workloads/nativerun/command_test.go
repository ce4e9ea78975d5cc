package nativerun_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/workloads/k6build"
	"github.com/chaosrun/chaosrun/workloads/nativerun"
)

// oneStream is a native workload of one stream to one service.
const oneStream = `version: 1
name: one-stream
services:
  api: {run: ledger}
workload:
  duration: 1s
  streams:
    get:
      target: api
      path: /item
      arrival: {rate: 20}
`

// TestRunShard: load's command line, from its flags to its exit code:
// bad flags, specs and scenarios exit 2 before any request; a scenario's
// workload aimed at --target runs its shard into a results file.
func TestRunShard(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "one.yaml"), []byte(oneStream), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\nname: bad\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "spec.json"), []byte("{not json"), 0o644)
	tests := []struct {
		name string
		o    nativerun.Options
		args []string
		code int
		msg  string
	}{
		{"runs", nativerun.Options{Targets: []string{"api=" + srv.URL}, Results: "out.jsonl"}, []string{"one.yaml"}, exitcode.OK, ""},
		{"a bad shard", nativerun.Options{Shard: "1/1", Results: "out.jsonl"}, []string{"one.yaml"}, exitcode.Usage, "--shard: "},
		{"no workload", nativerun.Options{Results: "out.jsonl"}, nil, exitcode.Usage, "no workload"},
		{"a bad spec", nativerun.Options{Spec: "spec.json", Results: "out.jsonl"}, nil, exitcode.Usage, "spec.json"},
		{"a missing spec", nativerun.Options{Spec: "missing.json", Results: "out.jsonl"}, nil, exitcode.Usage, "missing.json"},
		{"a wrong scenario", nativerun.Options{Results: "out.jsonl"}, []string{"bad.yaml"}, exitcode.Usage, "bad.yaml"},
		{"no target", nativerun.Options{Results: "out.jsonl"}, []string{"one.yaml"}, exitcode.Usage, "api"},
		{"no results", nativerun.Options{Targets: []string{"api=" + srv.URL}}, []string{"one.yaml"}, exitcode.Usage, "--results is required"},
	}
	getenv := func(string) string { return "" }
	l := scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: getenv, Dir: dir}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(dir, "out.jsonl"))
			o := tt.o
			if o.Shard == "" {
				o.Shard = nativerun.DefaultShard
			}
			var stderr bytes.Buffer
			err := o.RunShard(context.Background(), l.FS, l, &stderr, "", tt.args)
			code, said := exitcode.OK, stderr.String()
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
				if ee.Err != nil {
					said += ee.Err.Error()
				}
			}
			if code != tt.code || !strings.Contains(said, tt.msg) {
				t.Fatalf("exit %d saying %q, want %d saying %q (%v)", code, said, tt.code, tt.msg, err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "out.jsonl"))
			if ran := len(b) > 0; ran != (tt.code == exitcode.OK) {
				t.Errorf("results written: %v", ran)
			}
		})
	}
}
