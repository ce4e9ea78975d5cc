package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/testbed/docker"
)

// shopImage builds the Compose test's application statically into a FROM
// scratch image, chaosrun-test-shop:local, through the Docker API.
func shopImage(t *testing.T) {
	t.Helper()
	cli := requireDockerEngine(t)
	bin := filepath.Join(t.TempDir(), "app")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/compose/app")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the shop app: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	df := "FROM scratch\nCOPY app /app\nEXPOSE 8080/tcp\nENTRYPOINT [\"/app\"]\n"
	if _, err := docker.LocalImage(ctx, cli, "chaosrun-test-shop:local", map[string]string{"app": bin}, df, nil); err != nil {
		t.Fatal(err)
	}
}

// TestDockerComposeAB: a Compose project — Debian's redis-server and a
// small application of this test, neither configured for chaosrun — runs
// under chaosrun with a slow app->redis edge. The application's own cache
// timeout keeps it fast; set to 0 from the command line it waits for
// Redis and the run breaches, naming the assertion.
func TestDockerComposeAB(t *testing.T) {
	skipShort(t)
	cli := requireDockerEngine(t)
	shopImage(t)
	file := "cmd/chaosrun/testdata/compose/shop.yaml"
	cases := []struct {
		name string
		sets []string
		code int
	}{
		{"cache-timeout-holds", nil, exitOK},
		{"no-cache-timeout-breaches", []string{"--set", "app.env.CACHE_TIMEOUT=0s"}, exitBreach},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outDir := t.TempDir()
			bg := startChaosrun(t, append(append([]string{"run", "--testbed", "docker", "--out-dir", outDir}, tc.sets...), file)...)
			bg.wait(t, 5*time.Minute)
			if code := bg.cmd.ProcessState.ExitCode(); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, bg.stderr.String())
			}
			if tc.code == exitBreach && !strings.Contains(bg.stderr.String(), "get-p99-bounded") {
				t.Errorf("the breach does not name get-p99-bounded:\n%s", bg.stderr.String())
			}
			if left := ownedBy(t, cli, bg.cmd.Process.Pid); len(left) > 0 {
				t.Errorf("left on the engine after the run: %v", left)
			}
			r := readRecord(t, filepath.Join(outDir, "shop-slow-redis", "run.json"))
			if r.Incomplete {
				t.Fatalf("record incomplete: %v", r.Problems)
			}
			md, _ := os.ReadFile(filepath.Join(outDir, "shop-slow-redis", "summary.md"))
			t.Logf("%s: exit %d, start-up %s\n%s", tc.name, tc.code, r.Timings.Startup, md)
		})
	}
}
