package docker

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// requireDocker returns a client of the Docker engine. In CI (CI=true) an
// unreachable engine fails the test; elsewhere the test is skipped, saying
// why. -short (make test-fast) skips it.
func requireDocker(t *testing.T) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("real containers; not run with -short (make test-fast)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli, err := NewClient(ctx)
	if err != nil {
		testenv.Unavailable(t, "no reachable Docker engine for the Docker testbed tests: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

var (
	imgOnce sync.Once
	imgRef  string
	imgErr  error
)

// testImage builds (once per test binary) the chaosrun image from this
// source tree.
func testImage(t *testing.T, cli *client.Client) string {
	t.Helper()
	imgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		root, err := k6build.FindRoot(".")
		if err != nil {
			imgErr = err
			return
		}
		bin, err := StaticBinary(ctx, "", root, filepath.Join(os.TempDir(), "chaosrun-docker-test"), nil)
		if err != nil {
			imgErr = err
			return
		}
		img, err := ChaosrunImage(ctx, cli, bin, nil)
		imgRef, imgErr = img.Ref, err
	})
	if imgErr != nil {
		t.Fatalf("chaosrun image: %v", imgErr)
	}
	return imgRef
}
