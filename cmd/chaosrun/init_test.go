package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitCompose: `chaosrun init --compose` writes a scenario and its
// script that `chaosrun validate` accepts, and refuses to overwrite them;
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
	if _, err := os.Stat(filepath.Join(dir, "shop-chaos.js")); err != nil {
		t.Error(err)
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

// TestValidateComposeErrors: unsupported Compose keys and bad templates
// are named with their file, line and column.
func TestValidateComposeErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services:\n  app:\n    image: a:1\n    ports: [\"80\"]\n    volumes: [x:/x]\n"), 0o644)
	sc := "version: 1\nname: c\ncompose: compose.yaml\nservices:\n  app:\n    env: {X: \"{dep.db}\"}\nworkload: {script: s.js, duration: 5s, targets: [app]}\n"
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(sc), 0o644)
	code, _, stderr := runCLI(t, "validate", filepath.Join(dir, "s.yaml"))
	if code != exitUsage || !strings.Contains(stderr, "compose.yaml:5:5: services.app.volumes: Compose key \"volumes\" is not supported") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services:\n  app:\n    image: a:1\n    ports: [\"80\"]\n"), 0o644)
	code, _, stderr = runCLI(t, "validate", filepath.Join(dir, "s.yaml"))
	if code != exitUsage || !strings.Contains(stderr, "s.yaml:6:14: services.app.env.X: template {dep.db}: the service does not depend on \"db\"") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}
