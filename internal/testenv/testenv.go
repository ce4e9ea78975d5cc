// Package testenv decides what a test does when something it needs from the
// machine is missing: in CI (env CI=true) the test fails, because CI's own
// install step provides it; elsewhere it is skipped with the reason.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run in CI, where nothing may be skipped.
func InCI() bool { return os.Getenv("CI") == "true" }

// Unavailable fails the test in CI and skips it elsewhere, saying why.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI must provide it)", msg)
	}
	t.Skipf("skipped: %s (CI=true makes this a failure)", msg)
}

// Tool finds an external program installed from Debian package pkg
// (scripts/install-deps.sh installs it), or calls Unavailable.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Unavailable(t, "%s not found on PATH (Debian package %s; scripts/install-deps.sh installs it)", name, pkg)
	}
	return p
}

// RepoTool finds a program that `make TARGET` builds into the
// repository's bin/ (from a pinned tools module), or calls Unavailable.
func RepoTool(t testing.TB, name, target string) string {
	t.Helper()
	dir, err := os.Getwd()
	for err == nil {
		if _, e := os.Stat(filepath.Join(dir, "go.work")); e == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			err = os.ErrNotExist
		}
		dir = parent
	}
	p := filepath.Join(dir, "bin", name)
	if _, e := os.Stat(p); err != nil || e != nil {
		Unavailable(t, "bin/%s not built (make %s builds it)", name, target)
	}
	return p
}
