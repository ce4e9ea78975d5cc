package gameday

import (
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

// TestCommand: gameday's command line, from its flags to its exit code.
// Bad flags, scenarios and guards are refused before anything starts
// (exit 2); an interrupted game day, the ordinary end, exits 130 with its
// record written.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "steady.yaml"), fmt.Appendf(nil, loadtest.ScenarioYAML, "steady", 5), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\nname: bad\n"), 0o644)
	tests := []struct {
		name, args string
		env        map[string]string
		code       int
		msg        string
	}{
		{"interrupted", "steady.yaml --guard some-load", nil, exitcode.Interrupted, "ended by interrupt"},
		{"no such testbed", "--testbed k8s steady.yaml", nil, exitcode.Usage, `--testbed "k8s" is not available`},
		{"window too short", "--window 1s steady.yaml", nil, exitcode.Usage, "--window at least 2s"},
		{"open listen needs a token", "--listen 0.0.0.0:0 steady.yaml", nil, exitcode.Usage, "needs --token"},
		{"token from the environment", "--listen 0.0.0.0:0 --guard nope steady.yaml", map[string]string{"CHAOSRUN_GAMEDAY_TOKEN": "t"}, exitcode.Usage, `--guard "nope"`},
		{"unknown guard", "--guard nope steady.yaml", nil, exitcode.Usage, `--guard "nope" is not an assertion of scenario steady`},
		{"bad results listen", "--results-listen nope steady.yaml", nil, exitcode.Usage, "--results-listen"},
		{"shards out of range", "--load-shards 17 steady.yaml", nil, exitcode.Usage, "--load-shards 17"},
		{"a bad --allow-target", "--allow-target :80 steady.yaml", nil, exitcode.Usage, `--allow-target ":80": want host or host:port`},
		{"a wrong scenario", "bad.yaml", nil, exitcode.Usage, "bad.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Command
			var stdout, stderr loadtest.Buffer
			env := commandEnv(dir, tt.env, &stdout, &stderr)
			fl := pflag.NewFlagSet("gameday", pflag.ContinueOnError)
			c.Register(fl, env.Getenv)
			out := t.TempDir()
			if err := fl.Parse(append(strings.Fields(tt.args), "--out-dir", out)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { // interrupt once the page is up
				for !strings.Contains(stdout.String(), "game day page: ") && ctx.Err() == nil {
					time.Sleep(10 * time.Millisecond)
				}
				cancel()
			}()
			err := c.Run(ctx, env, fl.Arg(0))
			ee, ok := exitcode.As(err)
			if !ok || ee.Code != tt.code || !strings.Contains(errorText(ee.Err)+stderr.String(), tt.msg) {
				t.Fatalf("got %v, want exit %d saying %q; stderr:\n%s", err, tt.code, tt.msg, stderr.String())
			}
			_, statErr := os.Stat(filepath.Join(out, "steady-gameday", "run.json"))
			if wrote := statErr == nil; wrote != (tt.code == exitcode.Interrupted) {
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
