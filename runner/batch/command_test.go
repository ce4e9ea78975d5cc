package batch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// fakeEnv is run's environment in dir, with a fake load (ten requests)
// and testbed for every run.
func fakeEnv(dir string, stdout, stderr *bytes.Buffer) setup.Env {
	getenv := func(string) string { return "" }
	return setup.Env{
		Scenarios: scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: getenv, Dir: dir, Progress: stderr}},
		Stdout:    stdout, Stderr: stderr, Getenv: getenv,
		NewLoad: func(runner.LoadSpec) (runner.Load, error) {
			return &loadtest.Load{Windows: [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10}}}, RunFor: 10 * time.Millisecond}, nil
		},
		NewTestbed: func() testbed.Testbed { return &loadtest.Testbed{} },
	}
}

// TestCommand: run's command line, from its flags to its exit code: bad
// flags and scenarios are refused before anything runs (exit 2); the
// scenarios run in turn into --out-dir, the worst outcome is the code.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	for name, bound := range map[string]int{"holds": 5, "breaches": 50} {
		os.WriteFile(filepath.Join(dir, name+".yaml"), fmt.Appendf(nil, loadtest.ScenarioYAML, name, bound), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\nname: bad\n"), 0o644)
	tests := []struct {
		name, args             string
		code                   int
		stderr, output, record string
	}{
		{"holds", "holds.yaml --seed 7", exitcode.OK, "▶ holds", "holds/run.json", `"seed":7,`},
		{"worst of two", "holds.yaml breaches.yaml", exitcode.Breach, "breaches breached: some-load", "breaches/run.json", ""},
		{"shards out of range", "--load-shards 0 holds.yaml", exitcode.Usage, "", "", ""},
		{"no such testbed", "--testbed k8s holds.yaml", exitcode.Usage, "", "", ""},
		{"results listen not HOST:PORT", "--results-listen nope holds.yaml", exitcode.Usage, "", "", ""},
		{"export label", "--export-label env holds.yaml", exitcode.Usage, "", "", ""},
		{"a wrong scenario", "holds.yaml bad.yaml", exitcode.Usage, "bad.yaml", "", ""},
		{"a missing file", "missing.yaml", exitcode.Usage, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Command
			var stdout, stderr bytes.Buffer
			env := fakeEnv(dir, &stdout, &stderr)
			fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
			c.Register(fl, env.Getenv)
			out := t.TempDir()
			if err := fl.Parse(append(strings.Fields(tt.args), "--quiet", "--out-dir", out)); err != nil {
				t.Fatal(err)
			}
			err := c.Run(context.Background(), env, fl.Args())
			code := exitcode.OK
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
			}
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("exit %d (%v), want %d; stderr %q, want it to say %q", code, err, tt.code, stderr.String(), tt.stderr)
			}
			if tt.output == "" {
				if ents, _ := os.ReadDir(out); len(ents) > 0 {
					t.Errorf("a refused run wrote %v", ents)
				}
			} else if b, err := os.ReadFile(filepath.Join(out, tt.output)); err != nil || !strings.Contains(string(b), tt.record) {
				t.Errorf("%s lacks %q (%v)", tt.output, tt.record, err)
			}
		})
	}
}
