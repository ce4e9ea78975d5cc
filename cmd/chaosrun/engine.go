package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/k6build"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// engine is what run and gameday settle before any load: the repository
// root, the k6 binary when a scenario to run needs k6 and, for the Docker
// testbed, the chaosrun image.
type engine struct {
	root  string
	k6    k6build.Binary
	image string
	took  time.Duration

	// scripts is the bundled scripts folder for k6 workloads: the
	// checkout's, else the embedded scripts written out (root is "" for an
	// installed binary).
	scripts string
}

// k6Options are k6build's options in the command's environment.
func k6Options(st *State) k6build.Options {
	return k6build.Options{Progress: st.Stderr, Getenv: st.Getenv, Dir: st.Dir}
}

// needsK6 reports whether any of the scenarios runs its workload on k6.
func needsK6(scs []*scenario.Scenario) bool {
	return slices.ContainsFunc(scs, func(sc *scenario.Scenario) bool { return sc.Workload.EngineName() == scenario.EngineK6 })
}

// prepare finds the repository (none for an installed binary: what it
// embeds serves), builds or checks k6 when one of the scenarios needs it
// (and the state brings no load of its own) and, for Docker, builds the
// image. Native workloads need neither k6 nor the repository.
func prepare(ctx context.Context, st *State, k6path, bed string, scs []*scenario.Scenario) (engine, error) {
	t0 := time.Now()
	o := k6Options(st)
	o.K6Path = st.path(k6path)
	root, err := o.Checkout()
	k6 := st.NewLoad == nil && needsK6(scs)
	if err != nil && k6path == "" && k6 {
		return engine{}, fail(exitRunError, fmt.Errorf("%w (a workload with engine: k6 needs k6, built from the repository or the sources chaosrun embeds, or --k6 PATH)", err))
	}
	e := engine{root: root}
	if k6 {
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

// load makes the load of sc's run: the state's (a test's fake), else
// shards of `chaosrun load` processes for a native workload, or of k6
// for one with engine: k6, streaming where results says.
func (e engine) load(st *State, sc *scenario.Scenario, shards int, results runner.Results) runner.NewLoad {
	switch {
	case st.NewLoad != nil:
		return st.NewLoad
	case sc.Workload.EngineName() == scenario.EngineK6:
		return runner.K6(runner.K6Config{Binary: e.k6.Path, ScriptDir: e.scripts, Shards: shards, Results: results})
	}
	return runner.Native(runner.NativeConfig{Executable: st.Executable, Shards: shards, Results: results})
}

// shardsFlag adds --load-shards.
func shardsFlag(cmd *cobra.Command, n *int) {
	cmd.Flags().IntVar(n, "load-shards", 1, "run the workload as N load processes (each every Nth arrival; k6: execution segments) and merge their results")
}

// checkShards refuses a shard count out of range.
func checkShards(n int) error {
	if n < 1 || n > 16 {
		return failf(exitUsage, "--load-shards %d out of range (allowed: 1 to 16)", n)
	}
	return nil
}

// versions are the record's versions of what ran sc's load: the engine
// by name, and k6's version when it ran.
func (e engine) versions(sc *scenario.Scenario) map[string]string {
	v := map[string]string{"chaosrun": version(), "engine": sc.Workload.EngineName()}
	if v["engine"] == scenario.EngineK6 {
		v["k6"] = e.k6.Version
	} else {
		v["native"] = native.Version
	}
	return v
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
