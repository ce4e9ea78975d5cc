package scenarioload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarios"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// loader reads from dir, with an empty cache and no repository.
func loader(t *testing.T, dir string) Loader {
	t.Helper()
	env := map[string]string{"CHAOSRUN_CACHE": t.TempDir(), "CHAOSRUN_ROOT": t.TempDir()}
	return Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: func(k string) string { return env[k] }, Dir: dir}}
}

// TestExpand: a folder is its scenario files in name order, catalog: every
// catalog scenario; a folder without any, or a missing file, is an error.
func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yml", "a.yaml", "notes.txt", "empty/x.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	l := loader(t, dir)
	got, err := l.Expand([]string{".", "catalog:"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2+len(scenarios.All()) || got[0] != "a.yaml" || got[1] != "b.yml" || got[2] != scenarios.All()[0].Ref() {
		t.Errorf("Expand = %v", got)
	}
	if _, err := l.Expand([]string{"empty"}); err == nil || !strings.Contains(err.Error(), "empty: no scenario files (*.yaml, *.yml)") {
		t.Errorf("a folder without scenarios: %v", err)
	}
	if _, err := l.Expand([]string{"missing.yaml"}); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: %v", err)
	}
	if l.Path("catalog:bank-slow-vault") != "catalog:bank-slow-vault" || l.Path("a.yaml") != filepath.Join(dir, "a.yaml") {
		t.Error("Path resolves a catalog reference, or not a relative file")
	}
}

// TestLoad: a catalog scenario loads with an override applied; a bad
// override is an error naming it; a k6 workload's script is found among
// the bundled scripts.
func TestLoad(t *testing.T) {
	l := loader(t, t.TempDir())
	sc, err := l.Load(context.Background(), "catalog:bank-slow-vault", []string{"bank.bulkheads=off"})
	if err != nil {
		t.Fatal(err)
	}
	if sc.File != "catalog:bank-slow-vault" || sc.Services["bank"].Config["bulkheads"] != "off" {
		t.Errorf("loaded %s with bank's config %v, want the override applied", sc.File, sc.Services["bank"].Config)
	}
	if _, err := l.Load(context.Background(), "catalog:bank-slow-vault", []string{"nosuch.key=1"}); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("a bad override: %v", err)
	}
	here, _ := os.Getwd()
	l.FS.Dir = here
	if _, err := l.Load(context.Background(), "../scenarios/k6/bank-slow-vault.yaml", nil); err != nil {
		t.Errorf("a k6 scenario whose script is bundled: %v", err)
	}
}

// TestReadGivesUpOnCancel: a FIFO nobody writes to blocks the read; the
// read returns once ctx ends, saying why.
func TestReadGivesUpOnCancel(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := loader(t, dir).Read(ctx, "fifo.yaml")
	if err == nil || !strings.Contains(err.Error(), "reading fifo.yaml") || time.Since(t0) > 5*time.Second {
		t.Errorf("Read of a blocked FIFO: %v after %s", err, time.Since(t0))
	}
	// Unblock the reader so that its goroutine ends.
	if f, err := os.OpenFile(filepath.Join(dir, "fifo.yaml"), os.O_WRONLY, 0); err == nil {
		f.Close()
	}
}

// TestBlastRadius: a parameter, a k6 output or flag, or an external
// service pointing outside loopback is refused at its place in the
// scenario (file:line:col, the field, what is allowed) unless allowed;
// k6's --blacklist-ip would not stop an output.
func TestBlastRadius(t *testing.T) {
	const base = `version: 1
name: s
services:
  api: {external: "%s"}
workload:
  script: hello.js
  duration: 5s
  targets: [api]
  params: {UPSTREAM: "%s"}
  k6:
    outputs: [csv=results.csv, "%s"]
    flags: ["--tag=team=x", "%s"]
`
	ok := []string{"127.0.0.1:8080", "http://localhost:80", "experimental-prometheus-rw", "--summary-trend-stats=avg,p(99)"}
	for _, tc := range []struct {
		name  string
		field int // which of ok's values is replaced by bad
		bad   string
		allow []string
		want  string
	}{
		{"all inside", 0, ok[0], nil, ""},
		{"external", 0, "10.9.8.7:80", nil, "s.yaml:4:19: services.api.external: 10.9.8.7:80 is outside this run's blast radius: add 10.9.8.7:80 to allow_targets (allowed: loopback, and --allow-target/allow_targets entries)"},
		{"external allowed", 0, "10.9.8.7:80", []string{"10.9.8.7"}, ""},
		{"param", 1, "http://10.9.8.7:80", nil, "s.yaml:9:22: workload.params.UPSTREAM: points at 10.9.8.7, outside this run's blast radius (allowed: " + guard.ParamsAllowed + ")"},
		{"param allowed", 1, "http://10.9.8.7:80", []string{"10.9.8.7"}, ""},
		{"output", 2, "influxdb=http://10.0.0.5:8086", nil, `s.yaml:11:32: workload.k6.outputs[1]: k6 output "influxdb=http://10.0.0.5:8086" sends to 10.0.0.5, outside this run's blast radius (k6's --blacklist-ip does not cover outputs) (allowed: ` + guard.ParamsAllowed + ")"},
		{"output allowed", 2, "influxdb=http://10.0.0.5:8086", []string{"10.0.0.5:8086"}, ""},
		{"flag", 3, "--local-ips=192.168.7.1", nil, `s.yaml:12:29: workload.k6.flags[1]: k6 flag "--local-ips=192.168.7.1" points at 192.168.7.1, outside this run's blast radius`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := append([]any{}, ok[0], ok[1], ok[2], ok[3])
			vals[tc.field] = tc.bad
			sc, err := scenario.Parse("s.yaml", fmt.Appendf(nil, base, vals...), Checkers())
			if err != nil {
				t.Fatal(err)
			}
			_, err = BlastRadius(sc, tc.allow)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	sc := &scenario.Scenario{File: "s.yaml"}
	if _, err := BlastRadius(sc, []string{":80"}); err == nil || !strings.HasPrefix(err.Error(), "s.yaml: --allow-target \":80\": want host or host:port") {
		t.Errorf("a bad --allow-target: %v", err)
	}
}
