package gameday

import (
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
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// commandEnv is gameday's environment in dir, on a fake load that runs
// until stopped and a fake testbed.
func commandEnv(dir string, env map[string]string, stdout, stderr *loadtest.Buffer) setup.Env {
	getenv := func(k string) string { return env[k] }
	load := &loadtest.Load{Windows: [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10}}}, RunFor: time.Hour}
	return setup.Env{
		Scenarios: scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: getenv, Dir: dir, Progress: stderr}},
		Stdout:    stdout, Stderr: stderr, Getenv: getenv,
		NewLoad: load.Factory(), NewTestbed: func() testbed.Testbed { return &loadtest.Testbed{} },
	}
}

// TestCommand: gameday's command, from its options to its exit code.
// Bad flags, scenarios and guards are refused before anything starts
// (exit 2); an interrupted game day, the ordinary end, exits 130 with its
// record written.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "steady.yaml"), fmt.Appendf(nil, loadtest.ScenarioYAML, "steady", 5), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\nname: bad\n"), 0o644)
	tests := []struct {
		name, file string
		set        func(*Command)
		env        map[string]string
		code       int
		msg        string
	}{
		// Ctrl-C once the page is up ends the day as Stop does: judged (pass).
		{"interrupted", "steady.yaml", func(c *Command) { c.Guards = []string{"some-load"} }, nil, exitcode.OK, "Ctrl-C           game day stopped"},
		{"no such testbed", "steady.yaml", func(c *Command) { c.Setup.Testbed = "k8s" }, nil, exitcode.Usage, `--testbed "k8s" is not available`},
		{"window too short", "steady.yaml", func(c *Command) { c.Slide = time.Second }, nil, exitcode.Usage, "--window at least 2s"},
		{"open listen needs a token", "steady.yaml", func(c *Command) { c.Listen = "0.0.0.0:0" }, nil, exitcode.Usage, "needs --token"},
		{"token from the environment", "steady.yaml", func(c *Command) { c.Listen, c.Guards = "0.0.0.0:0", []string{"nope"} }, map[string]string{"CHAOSRUN_GAMEDAY_TOKEN": "t"}, exitcode.Usage, `--guard "nope"`},
		{"unknown guard", "steady.yaml", func(c *Command) { c.Guards = []string{"nope"} }, nil, exitcode.Usage, `--guard "nope" is not an assertion of scenario steady`},
		{"bad results listen", "steady.yaml", func(c *Command) { c.Results.Listen = "nope" }, nil, exitcode.Usage, "--results-listen"},
		{"shards out of range", "steady.yaml", func(c *Command) { c.Setup.Shards = 17 }, nil, exitcode.Usage, "--load-shards 17"},
		{"a bad --allow-target", "steady.yaml", func(c *Command) { c.Allow = []string{":80"} }, nil, exitcode.Usage, `--allow-target ":80": want host or host:port`},
		{"a wrong scenario", "bad.yaml", func(*Command) {}, nil, exitcode.Usage, "bad.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCommand()
			var stdout, stderr loadtest.Buffer
			env := commandEnv(dir, tt.env, &stdout, &stderr)
			out := t.TempDir()
			c.OutDir = out
			tt.set(&c)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { // interrupt once the page is up
				for !strings.Contains(stdout.String(), "game day page: ") && ctx.Err() == nil {
					time.Sleep(10 * time.Millisecond)
				}
				cancel()
			}()
			err := c.Run(ctx, env, tt.file)
			code, text := exitcode.OK, stderr.String()
			if ee, ok := exitcode.As(err); ok {
				code, text = ee.Code, errorText(ee.Err)+text
			} else if err != nil {
				t.Fatalf("error %v carries no exit code", err)
			}
			if code != tt.code || !strings.Contains(text, tt.msg) {
				t.Fatalf("got %v, want exit %d saying %q; stderr:\n%s", err, tt.code, tt.msg, stderr.String())
			}
			_, statErr := os.Stat(filepath.Join(out, "steady-gameday", "run.json"))
			if wrote := statErr == nil; wrote != (tt.code == exitcode.OK) {
				t.Errorf("record written: %v", wrote)
			}
		})
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
