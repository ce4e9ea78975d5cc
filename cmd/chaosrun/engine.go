package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// engine is what run and gameday settle before any load: the repository
// root, the k6 binary and, for the Docker testbed, the chaosrun image.
type engine struct {
	root  string
	k6    k6build.Binary
	image string
	took  time.Duration

	// scripts is the bundled scripts folder: the checkout's, else the
	// embedded scripts written out (root is "" for an installed binary).
	scripts string
}

// k6Options are k6build's options in the command's environment.
func k6Options(st *State) k6build.Options {
	return k6build.Options{Progress: st.Stderr, Getenv: st.Getenv, Dir: st.Dir}
}

// prepare finds the repository (none for an installed binary: what it
// embeds serves), builds or checks k6 (unless the state brings its own
// load) and, for Docker, builds the image.
func prepare(ctx context.Context, st *State, k6path, bed string) (engine, error) {
	t0 := time.Now()
	o := k6Options(st)
	o.K6Path = st.path(k6path)
	root, err := o.Checkout()
	if err != nil && k6path == "" && st.NewLoad == nil {
		return engine{}, fail(exitRunError, err)
	}
	e := engine{root: root}
	if st.NewLoad == nil {
		if e.scripts, err = bundledScripts(st, root); err != nil {
			return e, fail(exitRunError, err)
		}
		o.Root = root
		if e.k6, err = k6build.Ensure(ctx, o); err != nil {
			return e, failf(harnessCode(ctx), "k6: %w", err)
		}
	}
	if bed == "docker" {
		if e.image, err = dockerImage(ctx, st, root); err != nil {
			return e, fail(harnessCode(ctx), err)
		}
	}
	e.took = time.Since(t0)
	return e, nil
}

// load makes a run's load: the state's (a test's fake), else k6
// processes, shards of them, streaming where results says.
func (e engine) load(st *State, shards int, results runner.Results) runner.NewLoad {
	if st.NewLoad != nil {
		return st.NewLoad
	}
	return runner.K6(runner.K6Config{Binary: e.k6.Path, ScriptDir: e.scripts, Shards: shards, Results: results})
}

// shardsFlag adds --load-shards.
func shardsFlag(cmd *cobra.Command, n *int) {
	cmd.Flags().IntVar(n, "load-shards", 1, "run the workload as N load processes (k6 execution segments) and merge their results")
}

// checkShards refuses a shard count out of range.
func checkShards(n int) error {
	if n < 1 || n > 16 {
		return failf(exitUsage, "--load-shards %d out of range (allowed: 1 to 16)", n)
	}
	return nil
}

// versions are the record's versions of what ran.
func (e engine) versions() map[string]string {
	return map[string]string{"chaosrun": version(), "k6": e.k6.Version}
}

// dockerCacheDir is where the static chaosrun binary for the images is
// built: the cache folder's docker (see k6build.Options.Cache).
func dockerCacheDir(st *State) string {
	if c, err := k6Options(st).Cache(); err == nil {
		return filepath.Join(c, "docker")
	}
	return filepath.Join(os.TempDir(), "chaosrun-docker")
}

// buildOptions say where the chaosrun image's binary comes from.
func buildOptions(st *State, root string) docker.BuildOptions {
	return docker.BuildOptions{Executable: st.Executable, Root: root, CacheDir: dockerCacheDir(st), Progress: st.Stderr}
}

// dockerImage returns the chaosrun image of this build, building it when
// it is missing.
func dockerImage(ctx context.Context, st *State, root string) (string, error) {
	cli, err := docker.NewClient(ctx)
	if err != nil {
		return "", fmt.Errorf("%w (is Docker running? `chaosrun doctor` says more)", err)
	}
	defer cli.Close()
	img, err := docker.EnsureChaosrunImage(ctx, cli, buildOptions(st, root))
	return img.Ref, err
}

// newTestbed is the testbed --testbed names, or the state's (a test's fake).
func newTestbed(st *State, bed, image string, sc *scenario.Scenario, logDir string) testbed.Testbed {
	if st.NewTestbed != nil {
		return st.NewTestbed()
	}
	if bed == "docker" {
		return &docker.Testbed{Image: image, LogDir: logDir, Seed: sc.Seed, Progress: st.Stderr}
	}
	return &testbed.Local{Binary: st.Executable, LogDir: logDir, Seed: sc.Seed}
}
