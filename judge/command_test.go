package judge

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

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
	tests := []struct{ name, args, msg string }{
		{"export label", "--export-label env catalog:bank-slow-vault r.jsonl", "--export-label"},
		{"a wrong scenario", "bad.yaml r.jsonl", "bad.yaml"},
		{"files and --listen", "--listen 127.0.0.1:0 catalog:bank-slow-vault r.jsonl", "give results files or --listen, not both"},
		{"no results file", "catalog:bank-slow-vault", "no results file"},
		{"listen not HOST:PORT", "--listen 127.0.0.1 catalog:bank-slow-vault", "is not HOST:PORT"},
		{"a malformed results file", "catalog:bank-slow-vault cut.jsonl", "cut.jsonl"},
	}
	getenv := func(string) string { return "" }
	l := scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: getenv, Dir: dir}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Command
			fl := pflag.NewFlagSet("judge", pflag.ContinueOnError)
			c.Register(fl, getenv)
			out := t.TempDir()
			if err := fl.Parse(append(strings.Fields(tt.args), "--out-dir", out)); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			err := c.Run(context.Background(), l, &stdout, &stderr, fl.Args())
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
