package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// TestK6: with an empty cache k6 is a note with a fix; once the cached k6
// exists and is executable, it is found.
func TestK6(t *testing.T) {
	env := map[string]string{"CHAOSRUN_CACHE": t.TempDir()}
	o := k6build.Options{Getenv: func(k string) string { return env[k] }, Dir: t.TempDir()}
	f := K6(o)
	if f.What != "k6" || f.Fix == "" || !strings.Contains(f.Detail, k6build.K6Version) {
		t.Fatalf("empty cache: %+v, want a finding with a fix naming k6 %s", f, k6build.K6Version)
	}
	path, err := o.CachedK6()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if f := K6(o); f.Fix != "" || f.Detail != path {
		t.Errorf("built k6: %+v, want it found at %s", f, path)
	}
	env["CHAOSRUN_ROOT"] = t.TempDir() // not a repository
	if f := K6(o); f.Fix == "" || !strings.Contains(f.Fix, "CHAOSRUN_ROOT") {
		t.Errorf("CHAOSRUN_ROOT not a repository: %+v, want a fix naming it", f)
	}
}
