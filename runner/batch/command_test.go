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

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner/loadtest"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads/engine"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// fakeEnv is run's environment in dir, with a fake load (ten requests)
// and testbed for every run.
func fakeEnv(dir string, stdout, stderr *bytes.Buffer) setup.Env {
	getenv := func(string) string { return "" }
	return setup.Env{
		Scenarios: scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: getenv, Dir: dir, Progress: stderr}},
		Stdout:    stdout, Stderr: stderr, Getenv: getenv,
		NewLoad: func(engine.LoadSpec) (engine.Load, error) {
			return &loadtest.Load{Windows: [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10}}}, RunFor: 10 * time.Millisecond}, nil
		},
		NewTestbed: func() testbed.Testbed { return &loadtest.Testbed{} },
	}
}

// TestCommand: run's command, from its options to its exit code: bad
// flags and scenarios are refused before anything runs (exit 2); the
// scenarios run in turn into --out-dir, the worst outcome is the code.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	for name, bound := range map[string]int{"holds": 5, "breaches": 50} {
		os.WriteFile(filepath.Join(dir, name+".yaml"), fmt.Appendf(nil, loadtest.ScenarioYAML, name, bound), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\nname: bad\n"), 0o644)
	tests := []struct {
		name                   string
		files                  []string
		set                    func(*Command)
		code                   int
		stderr, output, record string
	}{
		{"holds", []string{"holds.yaml"}, func(c *Command) { c.Seed = 7 }, exitcode.OK, "▶ holds", "holds/run.json", `"seed":7,`},
		{"worst of two", []string{"holds.yaml", "breaches.yaml"}, nil, exitcode.Breach, "breaches breached: some-load", "breaches/run.json", ""},
		{"shards out of range", []string{"holds.yaml"}, func(c *Command) { c.Setup.Shards = 0 }, exitcode.Usage, "", "", ""},
		{"no such testbed", []string{"holds.yaml"}, func(c *Command) { c.Setup.Testbed = "k8s" }, exitcode.Usage, "", "", ""},
		{"results listen not HOST:PORT", []string{"holds.yaml"}, func(c *Command) { c.Results.Listen = "nope" }, exitcode.Usage, "", "", ""},
		{"export label", []string{"holds.yaml"}, func(c *Command) { c.Export.Labels = []string{"env"} }, exitcode.Usage, "", "", ""},
		{"a wrong scenario", []string{"holds.yaml", "bad.yaml"}, nil, exitcode.Usage, "bad.yaml", "", ""},
		{"a missing file", []string{"missing.yaml"}, nil, exitcode.Usage, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCommand()
			var stdout, stderr bytes.Buffer
			env := fakeEnv(dir, &stdout, &stderr)
			out := t.TempDir()
			c.Quiet, c.OutDir = true, out
			if tt.set != nil {
				tt.set(&c)
			}
			err := c.Run(context.Background(), env, tt.files)
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

// TestStaleFilesCleared: a run into an out dir an earlier run used leaves
// none of that run's files: when the new one dies at start, CI finds no
// earlier PASS beside its logs.
func TestStaleFilesCleared(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "holds.yaml"), fmt.Appendf(nil, loadtest.ScenarioYAML, "holds", 5), 0o644)
	out := t.TempDir()
	stale := []string{"run.json", "junit.xml", "summary.md", "report.html", "run.json.tmp", "logs/old-service.log"}
	for _, f := range stale {
		p := filepath.Join(out, "holds", f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("an earlier run's PASS"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCommand()
	c.Quiet, c.OutDir = true, out
	var stdout, stderr bytes.Buffer
	env := fakeEnv(dir, &stdout, &stderr)
	env.NewTestbed = func() testbed.Testbed { return &loadtest.Testbed{UpErr: fmt.Errorf("the engine is gone")} }
	c.Run(context.Background(), env, []string{"holds.yaml"}) //nolint:errcheck // the files say
	for _, f := range stale {
		b, err := os.ReadFile(filepath.Join(out, "holds", f))
		if err == nil && strings.Contains(string(b), "earlier run") {
			t.Errorf("%s of the earlier run is still there", f)
		}
	}
}
