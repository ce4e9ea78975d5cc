package k6build

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSourceHash(t *testing.T) {
	base := map[string]string{
		"xk6-resilience/go.mod": "module x\n", "xk6-resilience/go.sum": "", "xk6-resilience/a.go": "package a\n",
		"xk6-resilience/sub/b.go": "package sub\n",
		"models/go.mod":           "module m\n", "models/keys/keys.go": "package keys\n",
	}
	hashOf := func(t *testing.T, extra map[string]string) string {
		dir := t.TempDir()
		writeFiles(t, dir, base)
		writeFiles(t, dir, extra)
		h, err := SourceHash(filepath.Join(dir, "xk6-resilience"))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ref := hashOf(t, nil)
	if len(ref) != 12 {
		t.Fatalf("hash %q: want 12 hex digits", ref)
	}
	tests := []struct {
		name   string
		extra  map[string]string
		change bool
	}{
		{"same sources", nil, false},
		{"test file ignored", map[string]string{"xk6-resilience/a_test.go": "package a\n"}, false},
		{"testdata ignored", map[string]string{"xk6-resilience/testdata/x.go": "x"}, false},
		{"readme ignored", map[string]string{"xk6-resilience/README.md": "hi"}, false},
		{"other folder ignored", map[string]string{"cmd/x.go": "package main\n"}, false},
		{"models test ignored", map[string]string{"models/keys/keys_test.go": "package keys\n"}, false},
		{"source edit", map[string]string{"xk6-resilience/a.go": "package a // edit\n"}, true},
		{"subpackage edit", map[string]string{"xk6-resilience/sub/b.go": "package sub // edit\n"}, true},
		{"go.sum edit", map[string]string{"xk6-resilience/go.sum": "x v1 h1:\n"}, true},
		{"new file", map[string]string{"xk6-resilience/c.go": "package a\n"}, true},
		{"models edit", map[string]string{"models/keys/keys.go": "package keys // edit\n"}, true},
		{"models new file", map[string]string{"models/arrival/a.go": "package arrival\n"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hashOf(t, tt.extra); (got != ref) != tt.change {
				t.Fatalf("hash %s vs %s: want changed=%v", got, ref, tt.change)
			}
		})
	}
	if _, err := SourceHash(t.TempDir()); err == nil {
		t.Fatal("empty folder: want an error")
	}
}

func TestFindRoot(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":                  "// the root\nmodule github.com/chaosrun/chaosrun\n\ngo 1.26\n",
		"xk6-resilience/go.mod":   "module github.com/chaosrun/chaosrun/xk6-resilience\n",
		"xk6-resilience/sub/x.go": "package sub\n",
		"other/go.mod":            "module github.com/chaosrun/chaosrun-other\n",
	})
	for _, start := range []string{".", "xk6-resilience", "xk6-resilience/sub", "other"} {
		got, err := FindRoot(filepath.Join(dir, start))
		if err != nil || got != dir {
			t.Errorf("FindRoot(%s) = %q, %v; want %q", start, got, err, dir)
		}
	}
	lone := t.TempDir()
	if _, err := FindRoot(lone); err == nil || !strings.Contains(err.Error(), "CHAOSRUN_ROOT") {
		t.Errorf("FindRoot outside a repo: err = %v, want a hint at CHAOSRUN_ROOT", err)
	}
}

func TestOptionsReadTheirEnvironment(t *testing.T) {
	repo, lone, cache := t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, repo, map[string]string{
		"go.mod":                "module github.com/chaosrun/chaosrun\n",
		"xk6-resilience/go.mod": "module github.com/chaosrun/chaosrun/xk6-resilience\n",
		"xk6-resilience/x.go":   "package x\n",
		"sub/README":            "",
	})
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	roots := []struct {
		name    string
		o       Options
		want    string // "" for an error
		wantErr string
	}{
		{"found above Dir", Options{Dir: filepath.Join(repo, "sub")}, repo, ""},
		{"not found above Dir", Options{Dir: lone}, "", "CHAOSRUN_ROOT"},
		{"CHAOSRUN_ROOT", Options{Dir: lone, Getenv: env(map[string]string{"CHAOSRUN_ROOT": repo})}, repo, ""},
		{"CHAOSRUN_ROOT relative to Dir", Options{Dir: filepath.Dir(repo), Getenv: env(map[string]string{"CHAOSRUN_ROOT": filepath.Base(repo)})}, repo, ""},
		{"CHAOSRUN_ROOT without the root go.mod", Options{Getenv: env(map[string]string{"CHAOSRUN_ROOT": lone})}, "", "want a go.mod with module"},
		{"Root beats CHAOSRUN_ROOT", Options{Root: repo, Getenv: env(map[string]string{"CHAOSRUN_ROOT": lone})}, repo, ""},
	}
	for _, tt := range roots {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.o.RepoRoot()
			if got != tt.want || (tt.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("RepoRoot() = %q, %v; want %q, error %q", got, err, tt.want, tt.wantErr)
			}
		})
	}
	o := Options{Dir: repo, Getenv: env(map[string]string{"CHAOSRUN_CACHE": "cache"})}
	if got, err := o.Cache(); err != nil || got != filepath.Join(repo, "cache") {
		t.Errorf("Cache() with a relative CHAOSRUN_CACHE = %q, %v; want it below Dir", got, err)
	}
	o = Options{Dir: repo, CacheDir: cache}
	hash, _ := SourceHash(filepath.Join(repo, ExtensionDir))
	if got, err := o.CachedK6(); err != nil || got != filepath.Join(cache, "k6-"+K6Version+"-"+hash) {
		t.Errorf("CachedK6() = %q, %v", got, err)
	}
}

func TestVerifyRejectsPlainBinary(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "k6")
	writeFiles(t, filepath.Dir(fake), map[string]string{"k6": "#!/bin/sh\necho 'k6 v1.8.1 (go1.26)'\n"})
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Ensure(context.Background(), Options{K6Path: fake})
	if err == nil || !strings.Contains(err.Error(), ExtensionModule) {
		t.Fatalf("Ensure with a k6 lacking the extension: err = %v", err)
	}
	if _, err := Ensure(context.Background(), Options{K6Path: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Fatal("Ensure with a missing k6: want an error")
	}
}

func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var msg bytes.Buffer
	if _, err := lock(ctx, path, &msg); err == nil {
		t.Fatal("second lock taken while the first is held")
	}
	if !strings.Contains(msg.String(), "waiting") {
		t.Errorf("no waiting message: %q", msg.String())
	}
	unlock()
	unlock2, err := lock(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

// TestEnsureRealBuild builds (or finds cached) the real k6 with the
// extension, from the sources embedded in the binary, unpacked: the
// checkout holds the same files (TestEmbeddedSources), so the suite's k6,
// cached under the same hash, is what an installed chaosrun builds.
func TestEnsureRealBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds k6 (minutes when cold)")
	}
	if src, err := (Options{Getenv: os.Getenv}).Sources(); err != nil || !strings.HasPrefix(filepath.Base(src), "src-") {
		t.Errorf("the build takes its sources from %s (%v), want the embedded ones unpacked into the cache (is source.zip stale? TestEmbeddedSources)", src, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	bin, err := Ensure(ctx, Options{Progress: &progress, Getenv: os.Getenv})
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filepath.Base(bin.Path), "k6-"+K6Version+"-") || !strings.Contains(bin.Version, "1.8.1") {
		t.Fatalf("binary %+v: want the cached k6 %s", bin, K6Version)
	}
	out, err := exec.Command(bin.Path, "version").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ExtensionModule, "k6/x/resilience", "resilience"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("k6 version does not list %q:\n%s", want, out)
		}
	}
	// A second call is a cache hit.
	again, err := Ensure(ctx, Options{Getenv: os.Getenv})
	if err != nil || again.Path != bin.Path {
		t.Fatalf("second Ensure = %+v, %v; want the same cached binary", again, err)
	}
}
