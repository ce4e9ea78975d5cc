package judge

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// TestCommandRefuses: judge's command line refuses bad flags, scenarios
// and results files with exit 2 before judging anything.
func TestCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.yaml"), []byte("version: 1\nname: bad\n"))
	writeFile(t, filepath.Join(dir, "cut.jsonl"), []byte("{not json\n"))
	tests := []struct {
		name string
		args []string
		set  func(*Command)
		msg  string
	}{
		{"export label", []string{"catalog:bank-slow-vault", "r.jsonl"}, func(c *Command) { c.Export.Labels = []string{"env"} }, "--export-label"},
		{"a wrong scenario", []string{"bad.yaml", "r.jsonl"}, nil, "bad.yaml"},
		{"files and --listen", []string{"catalog:bank-slow-vault", "r.jsonl"}, func(c *Command) { c.Listen = "127.0.0.1:0" }, "give results files or --listen, not both"},
		{"no results file", []string{"catalog:bank-slow-vault"}, nil, "no results file"},
		{"listen not HOST:PORT", []string{"catalog:bank-slow-vault"}, func(c *Command) { c.Listen = "127.0.0.1" }, "is not HOST:PORT"},
		{"a malformed results file", []string{"catalog:bank-slow-vault", "cut.jsonl"}, nil, "cut.jsonl"},
	}
	getenv := func(string) string { return "" }
	l := scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: getenv, Dir: dir}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Command{Options: DefaultOptions()}
			out := t.TempDir()
			c.OutDir = out
			if tt.set != nil {
				tt.set(&c)
			}
			var stdout, stderr bytes.Buffer
			err := c.Run(context.Background(), l, &stdout, &stderr, tt.args)
			ee, ok := exitcode.As(err)
			if !ok || ee.Code != exitcode.Usage {
				t.Fatalf("got %v, want exit %d", err, exitcode.Usage)
			}
			if said := stderr.String() + errText(ee.Err); !strings.Contains(said, tt.msg) {
				t.Errorf("said %q, want %q", said, tt.msg)
			}
			if ents, _ := os.ReadDir(out); len(ents) > 0 {
				t.Errorf("a refused judge wrote %v", ents)
			}
		})
	}
}

// TestOutcome: the judged run's record is written, and its verdict is
// the exit code: 0 every check holds, 1 a breach, 3 incomplete or not
// written, 130 interrupted.
func TestOutcome(t *testing.T) {
	sc := testScenario()
	dir := t.TempDir()
	files := []string{writeResults(t, dir, "0/1", shardWindows(t, 0, 1), true)}
	breached := func() *record.Run {
		rec, err := FromFiles(context.Background(), sc, FileOptions{Files: files})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	passed := func() *record.Run {
		rec := breached()
		var ok []record.Verdict
		for _, v := range rec.Verdicts {
			if v.Pass {
				ok = append(ok, v)
			}
		}
		rec.Verdicts = ok
		return rec
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	notADir := writeFile(t, filepath.Join(dir, "file"), nil)
	tests := []struct {
		name string
		ctx  context.Context
		rec  func() *record.Run
		dir  string
		code int
		msg  string
	}{
		{"holds", context.Background(), passed, "", exitcode.OK, ""},
		{"breached", context.Background(), breached, "", exitcode.Breach, "judge-test breached: no-errors, fast"},
		{"incomplete", context.Background(), func() *record.Run {
			rec := passed()
			rec.Incomplete, rec.Problems = true, []string{"shard 1 never connected"}
			return rec
		}, "", exitcode.RunError, "judge-test incomplete: shard 1 never connected"},
		{"interrupted", ended, passed, "", exitcode.Interrupted, "judge-test interrupted; the record is marked incomplete"},
		{"not written", context.Background(), passed, filepath.Join(notADir, "judge-test"), exitcode.RunError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := tt.dir
			if out == "" {
				out = filepath.Join(t.TempDir(), sc.Name)
			}
			rec := tt.rec()
			defer rec.Close()
			var stdout, stderr bytes.Buffer
			err := outcome(tt.ctx, out, sc, rec, &stdout, &stderr)
			code, msg := exitcode.OK, ""
			if ee, ok := exitcode.As(err); ok {
				code, msg = ee.Code, errText(ee.Err)
			}
			if code != tt.code || !strings.HasPrefix(msg, tt.msg) {
				t.Fatalf("exit %d %q, want %d %q", code, msg, tt.code, tt.msg)
			}
			if _, err := os.Stat(filepath.Join(out, "run.json")); (err == nil) != (tt.dir == "") {
				t.Errorf("record written: %v", err)
			}
			if !strings.Contains(stderr.String(), "run record: "+filepath.Join(out, "run.json")) {
				t.Errorf("stderr does not say where the record is:\n%s", stderr.String())
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
