package nativerun

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/workloads/k6build"
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
		name, args string
		code       int
		msg        string
	}{
		{"runs", "one.yaml --target api=" + srv.URL + " --results out.jsonl", exitcode.OK, ""},
		{"a bad shard", "one.yaml --shard 1/1 --results out.jsonl", exitcode.Usage, "--shard: "},
		{"no workload", "--results out.jsonl", exitcode.Usage, "no workload"},
		{"a bad spec", "--spec spec.json --results out.jsonl", exitcode.Usage, "spec.json"},
		{"a missing spec", "--spec missing.json --results out.jsonl", exitcode.Usage, "missing.json"},
		{"a wrong scenario", "bad.yaml --results out.jsonl", exitcode.Usage, "bad.yaml"},
		{"no target", "one.yaml --results out.jsonl", exitcode.Usage, "api"},
		{"no results", "one.yaml --target api=" + srv.URL, exitcode.Usage, "--results is required"},
	}
	getenv := func(string) string { return "" }
	l := scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: getenv, Dir: dir}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(dir, "out.jsonl"))
			var o Options
			fl := pflag.NewFlagSet("load", pflag.ContinueOnError)
			o.Register(fl)
			if err := fl.Parse(strings.Fields(tt.args)); err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			err := o.RunShard(context.Background(), l, &stderr, "", fl.Args())
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
