package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// installed is a chaosrun binary alone in a folder with no checkout above
// it, run with an environment that names no repository.
type installed struct {
	dir string
	env []string
}

// installBinary builds chaosrun as a release does (CGO_ENABLED=0,
// -trimpath) and copies it alone into an empty folder.
func installBinary(t *testing.T) installed {
	t.Helper()
	built := filepath.Join(t.TempDir(), "chaosrun")
	cmd := exec.Command("go", "build", "-trimpath", "-o", built, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	if root, err := k6build.FindRoot(dir); err == nil {
		t.Fatalf("%s lies inside the checkout %s: the test needs a folder outside any", dir, root)
	}
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chaosrun"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	// The user's cache stays (k6 built once serves every binary of the
	// same extension source); nothing may point at the repository.
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "CHAOSRUN_ROOT" && k != "GOWORK" {
			env = append(env, kv)
		}
	}
	return installed{dir: dir, env: env}
}

// run runs ./chaosrun args in the folder and returns its exit code and output.
func (in installed) run(t *testing.T, timeout time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./chaosrun", args...)
	cmd.Dir, cmd.Env = in.dir, in.env
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	t0 := time.Now()
	err := cmd.Run()
	t.Logf("./chaosrun %s: %s", strings.Join(args, " "), time.Since(t0).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("./chaosrun %v did not finish within %s\nstderr:\n%s", args, timeout, se.String())
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("./chaosrun %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), so.String(), se.String()
}

// TestInstalledBinaryFromAnEmptyFolder: chaosrun built from the module and
// copied alone into an empty folder — what `go install` or a release
// download gives a user — runs a catalog scenario to a pass, builds the
// Docker testbed's images and passes `chaosrun doctor`: the scenarios, the
// k6 scripts and the extension's source come from the binary itself. A
// heavy test: run it under the heavy-test lock.
func TestInstalledBinaryFromAnEmptyFolder(t *testing.T) {
	skipShort(t)
	in := installBinary(t)
	if code, so, se := in.run(t, time.Minute, "version"); code != exitOK || !strings.HasPrefix(so, "chaosrun ") {
		t.Fatalf("version: exit %d\n%s%s", code, so, se)
	}
	if code, so, se := in.run(t, time.Minute, "catalog", "list"); code != exitOK || !strings.Contains(so, "bank-slow-vault") {
		t.Fatalf("catalog list: exit %d\n%s%s", code, so, se)
	}

	// A catalog scenario, shortened, passes; its record names it.
	args := append([]string{"run", "--quiet", "--out-dir", "out"}, shortRun...)
	code, so, se := in.run(t, 25*time.Minute, append(args, "catalog:bank-slow-vault")...)
	t.Logf("stdout:\n%s", so)
	if code != exitOK {
		t.Fatalf("run catalog:bank-slow-vault: exit %d, want 0\nstderr:\n%s", code, se)
	}
	r := readRecord(t, filepath.Join(in.dir, "out", "bank-slow-vault", "run.json"))
	if r.File != "catalog:bank-slow-vault" || r.Incomplete || len(r.Verdicts) == 0 {
		t.Errorf("record: file %q, incomplete %v, %d verdicts; want catalog:bank-slow-vault, complete, verdicts", r.File, r.Incomplete, len(r.Verdicts))
	}
	assertNothingLeft(t, r)

	// The Docker testbed's images build from the binary itself; then the
	// check-up is green.
	requireDockerEngine(t)
	code, so, se = in.run(t, 10*time.Minute, "images")
	if code != exitOK {
		t.Fatalf("images: exit %d\n%s%s", code, so, se)
	}
	t.Logf("images:\n%s", se)
	code, so, se = in.run(t, 2*time.Minute, "doctor", "--testbed", "docker")
	if code != exitOK || !strings.Contains(so, "all good") {
		t.Fatalf("doctor: exit %d, want 0 and all good\n%s%s", code, so, se)
	}
	t.Logf("doctor:\n%s", so)

	// The run wrote its results and nothing else into the folder.
	ents, err := os.ReadDir(in.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"chaosrun", "out"}) {
		t.Errorf("the folder holds %v, want only chaosrun and out", names)
	}
}
