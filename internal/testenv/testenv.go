// Package testenv decides what a test does when something it needs from the
// machine is missing: in CI (env CI=true) the test fails, because CI's own
// install step provides it; elsewhere it is skipped with the reason.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
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
