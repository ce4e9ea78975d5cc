// Package setup settles what runs need before any load starts (the
// repository, none for an installed binary; k6, built only when a
// scenario's workload runs on it; the chaosrun image for the Docker
// testbed), then makes each scenario's load, testbed and versions.
package setup

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/chaosrun/chaosrun/internal/buildinfo"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/engine"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// Options say how runs are set up.
type Options struct {
	// K6 is k6build's environment, working folder and progress (which
	// the image build reports on too); K6.K6Path is --k6, resolved.
	K6 k6build.Options
	// Testbed is where services run: "local" or "docker".
	Testbed string
	// Executable is the chaosrun binary: it serves the targets and runs
	// native load shards.
	Executable string
	// Shards is how many load processes a workload runs as.
	Shards int
	// Results says where the results streams are received.
	Results engine.Results
	// NewLoad, when set, is every run's load in place of load processes
	// (a test's fake): no k6 is built then.
	NewLoad engine.NewLoad
	// NewTestbed, when set, makes every run's testbed (a test's fake).
	NewTestbed func() testbed.Testbed
}

// Setup is what was settled before any load.
type Setup struct {
	o     Options
	root  string
	k6    k6build.Binary
	image string
	// scripts is the bundled scripts folder for k6 workloads: the
	// checkout's, else the embedded scripts written out (root is "" for an
	// installed binary).
	scripts string
	// Took is how long setting up took (a k6 build, an image build).
	Took time.Duration
}

// NeedsK6 reports whether any of the scenarios runs its workload on an
// engine that runs k6.
func NeedsK6(scs []*scenario.Scenario) bool { return engine.NeedsTool(scs, "k6") }

// Prepare finds the repository (none for an installed binary: what it
// embeds serves), builds or checks k6 when one of the scenarios needs it
// (and o brings no load of its own) and, for Docker, builds the image.
// Native workloads need neither k6 nor the repository.
func Prepare(ctx context.Context, o Options, scs []*scenario.Scenario) (*Setup, error) {
	t0 := time.Now()
	root, err := o.K6.Checkout()
	k6 := o.NewLoad == nil && NeedsK6(scs)
	if err != nil && o.K6.K6Path == "" && k6 {
		return nil, fmt.Errorf("%w (a workload with engine: k6 needs k6, built from the repository or the sources chaosrun embeds, or --k6 PATH)", err)
	}
	s := &Setup{o: o, root: root}
	if k6 {
		if s.scripts, err = scenarioload.BundledScripts(o.K6, root); err != nil {
			return nil, err
		}
		b := o.K6
		b.Root = root
		if s.k6, err = k6build.Ensure(ctx, b); err != nil {
			return nil, fmt.Errorf("k6: %w", err)
		}
	}
	if o.Testbed == "docker" {
		if s.image, err = dockerImage(ctx, ImageOptions(o.K6, o.Executable, root)); err != nil {
			return nil, err
		}
	}
	s.Took = time.Since(t0)
	return s, nil
}

// Load makes the load of sc's run: the options' (a test's fake), else
// the one sc's engine makes (shards of `chaosrun load` processes for a
// native workload, of k6 for one with engine: k6), streaming where the
// results settings say. An engine not registered fails the run's load.
func (s *Setup) Load(sc *scenario.Scenario) engine.NewLoad {
	if s.o.NewLoad != nil {
		return s.o.NewLoad
	}
	e, err := engine.Of(sc)
	if err != nil {
		return func(engine.LoadSpec) (engine.Load, error) { return nil, err }
	}
	o := engine.Options{Executable: s.o.Executable, ScriptDir: s.scripts, Shards: s.o.Shards, Results: s.o.Results}
	if e.Tool == "k6" {
		o.Tool = s.k6.Path
	}
	return e.New(o)
}

// Testbed is the testbed the options name for sc, its logs in logDir, or
// the options' own (a test's fake).
func (s *Setup) Testbed(sc *scenario.Scenario, logDir string) testbed.Testbed {
	if s.o.NewTestbed != nil {
		return s.o.NewTestbed()
	}
	if s.o.Testbed == "docker" {
		return &docker.Testbed{Image: s.image, LogDir: logDir, Seed: sc.Seed, Progress: s.o.K6.Progress}
	}
	return &testbed.Local{Binary: s.o.Executable, LogDir: logDir, Seed: sc.Seed}
}

// Versions are the record's versions of what ran sc's load: the engine
// by name and what its registration names (k6's version when it ran).
func (s *Setup) Versions(sc *scenario.Scenario) map[string]string {
	v := map[string]string{"chaosrun": buildinfo.Version(), "engine": sc.Workload.EngineName()}
	if e, err := engine.Of(sc); err == nil && e.Version != nil {
		tool := ""
		if e.Tool == "k6" {
			tool = s.k6.Version
		}
		maps.Copy(v, e.Version(tool))
	}
	return v
}

// ImageOptions say where the chaosrun image's binary comes from: the
// executable, else a build from root, in the cache's docker folder.
func ImageOptions(o k6build.Options, executable, root string) docker.BuildOptions {
	cache := filepath.Join(os.TempDir(), "chaosrun-docker")
	if c, err := o.Cache(); err == nil {
		cache = filepath.Join(c, "docker")
	}
	return docker.BuildOptions{Executable: executable, Root: root, CacheDir: cache, Progress: o.Progress}
}

// dockerImage returns the chaosrun image of this build, building it when
// it is missing.
func dockerImage(ctx context.Context, o docker.BuildOptions) (string, error) {
	cli, err := docker.NewClient(ctx)
	if err != nil {
		return "", fmt.Errorf("%w (is Docker running? `chaosrun doctor` says more)", err)
	}
	defer cli.Close()
	img, err := docker.EnsureChaosrunImage(ctx, cli, o)
	return img.Ref, err
}
