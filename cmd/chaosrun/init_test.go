package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestInitCompose: `chaosrun init --compose` writes a scenario on the
// native engine (no script) that `chaosrun validate` accepts, and refuses
// to overwrite it;
// a scenario written where its compose: would lie outside its folder is
// refused before anything is written.
func TestInitCompose(t *testing.T) {
	if code, _, stderr := runCLI(t, "init", "--compose", "testdata/compose/compose.yaml", "--out", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "outside its own folder: write it in the Compose file's folder or one above it") {
		t.Errorf("init --out elsewhere: exit %d, %s", code, stderr)
	}
	dir := t.TempDir()
	compose, err := os.ReadFile("testdata/compose/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), compose, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "init", "--compose", filepath.Join(dir, "compose.yaml"), "--out", dir)
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, stderr)
	}
	file := filepath.Join(dir, "shop-chaos.yaml")
	if !strings.Contains(stdout, file) {
		t.Errorf("init does not say what it wrote: %s", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "shop-chaos.js")); err == nil {
		t.Error("init wrote a k6 script: the starter runs on the native engine")
	}
	if code, _, stderr := runCLI(t, "validate", file); code != exitOK {
		t.Errorf("validate of the starter: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "init", "--compose", filepath.Join(dir, "compose.yaml"), "--out", dir); code != exitUsage || !strings.Contains(stderr, "exists") {
		t.Errorf("init over existing files: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "init"); code != exitUsage || !strings.Contains(stderr, "--compose") {
		t.Errorf("init without --compose: exit %d, %s", code, stderr)
	}
}

// TestValidateComposeErrors: refused Compose keys and bad templates are
// named with their file, line and column.
func TestValidateComposeErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services:\n  app:\n    image: a:1\n    ports: [\"80\"]\n    network_mode: host\n"), 0o644)
	sc := "version: 1\nname: c\ncompose: compose.yaml\nservices:\n  app:\n    env: {X: \"{dep.db}\"}\nworkload: {script: s.js, duration: 5s, targets: [app]}\n"
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(sc), 0o644)
	code, _, stderr := runCLI(t, "validate", filepath.Join(dir, "s.yaml"))
	if code != exitUsage || !strings.Contains(stderr, "compose.yaml:5:5: services.app.network_mode: network_mode \"host\" shares another network stack") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services:\n  app:\n    image: a:1\n    ports: [\"80\"]\n"), 0o644)
	code, _, stderr = runCLI(t, "validate", filepath.Join(dir, "s.yaml"))
	if code != exitUsage || !strings.Contains(stderr, "s.yaml:6:14: services.app.env.X: template {dep.db}: the service does not depend on \"db\"") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// TestInitURLRuns: `chaosrun init --url` of a service that runs already
// (a plain HTTP server here) writes a starter that validates and runs as
// written, shortened the way the README says: load reaches the server
// through the proxy, the fault slows it (its during-fault check sees the
// 300 ms), and the run passes.
func TestInitURLRuns(t *testing.T) {
	skipShort(t)
	t.Parallel() // margins wide enough to share the machine
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/items" && r.URL.RawQuery == "limit=10" {
			hits.Add(1)
		}
		io.WriteString(w, `{"items":[]}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "init", "--url", srv.URL+"/api/items?limit=10", "--out", dir)
	file := filepath.Join(dir, "app-chaos.yaml")
	if code != exitOK || !strings.Contains(stdout, "next: chaosrun validate "+file+", then chaosrun run "+file) {
		t.Fatalf("init --url: exit %d\n%s%s", code, stdout, stderr)
	}
	res := runChaosrun(t, 2*time.Minute, "--quiet", "--set", "workload.duration=12s", "--set", "faults.slow-app.start=4s", "--set", "faults.slow-app.duration=5s", file)
	if res.code != exitOK {
		t.Fatalf("run of the starter: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	r := readRecord(t, filepath.Join(res.outDir, "app-chaos", "run.json"))
	v, ok := findVerdict(r, "p99-during")
	if !ok || v.Observed < 300 || hits.Load() < 100 {
		t.Errorf("the fault did not slow the load's requests (p99 during %+v), or they did not reach the URL (%d hits)", v, hits.Load())
	}
	assertNothingLeft(t, r)
}
