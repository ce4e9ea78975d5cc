package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
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

// TestRunSplitsTestbeds: with no Docker engine, the local testbed is
// ready (exit 0, Docker's findings are notes), --testbed docker is not
// (exit 1, a FIX line), and an unknown testbed is a usage error.
func TestRunSplitsTestbeds(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no-engine.sock"))
	o := k6build.Options{Getenv: func(string) string { return "" }, Dir: t.TempDir()}
	for _, tc := range []struct {
		testbed string
		code    int
		want    []string
	}{
		{"local", exitcode.OK, []string{"  ok   loopback", "  note docker", "needed only for --testbed docker", "all good"}},
		{"docker", exitcode.Breach, []string{"  ok   loopback", "  FIX  docker", "1 problem(s)"}},
		{"moon", exitcode.Usage, nil},
	} {
		t.Run(tc.testbed, func(t *testing.T) {
			var out strings.Builder
			err := Run(context.Background(), &out, o, tc.testbed)
			code := exitcode.OK
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
			}
			if code != tc.code {
				t.Errorf("exit %d (%v), want %d\n%s", code, err, tc.code, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
