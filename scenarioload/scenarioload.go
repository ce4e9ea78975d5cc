// Package scenarioload reads the scenarios a command line names (files,
// folders of them, catalog:NAME), applies --set overrides and validates
// them with every checker of the harness wired in: fault kinds, checks,
// targets, Compose files, the k6 script, the blast radius.
package scenarioload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/compose"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarios"
	"github.com/chaosrun/chaosrun/servers/names"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/engine"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// Checkers wires the fault and assertion checkers into the scenario model's
// loader.
func Checkers() scenario.Options {
	return checkers(context.Background(), compose.Options{}, func(f string) string { return f })
}

// checkers is Checkers with the Compose files read as co says until ctx
// ends, the scenario's file resolved by path.
func checkers(ctx context.Context, co compose.Options, path func(string) string) scenario.Options {
	return scenario.Options{
		FaultKind:   faults.Check,
		Check:       assertions.ValidateCheck,
		Metric:      assertions.ValidateMetric,
		LiveMetric:  assertions.ValidateLiveMetric,
		Targets:     names.Targets(),
		TargetFlags: names.Flags,
		Emits:       emits,
		HostKind:    faults.IsHostKind,
		FaultStage:  faults.StageOf,
		Compose: func(file string, names []string) ([]scenario.Named, error) {
			return compose.ImportFor(ctx, path(file), names, co)
		},
	}
}

// Loader reads scenarios as a command sees them.
type Loader struct {
	// FS is the command's working directory and filesystem.
	FS workdir.FS
	// K6 says where the bundled k6 scripts are (the checkout's, else the
	// cache's), for workloads with engine: k6.
	K6 k6build.Options
	// Compose says how a scenario's Compose project is loaded (its
	// profiles, the environment ${VAR} reads).
	Compose compose.Options
}

// Load reads a scenario file or catalog:NAME, applies --set overrides and
// validates the result. It gives up when ctx ends.
func (l Loader) Load(ctx context.Context, file string, sets []string) (*scenario.Scenario, error) {
	data, err := l.Read(ctx, file)
	if err != nil {
		return nil, err
	}
	sc, err := l.check(ctx, file, data, sets)
	if err != nil {
		return nil, err
	}
	e, err := engine.Of(sc)
	if err != nil {
		return nil, err
	}
	if e.Check == nil {
		return sc, nil // the engine checks nothing beyond the model
	}
	scripts := func() (string, error) {
		root, _ := l.K6.Checkout()
		return BundledScripts(l.K6, root)
	}
	if err := e.Check(sc, l.Path(file), scripts); err != nil {
		return nil, err
	}
	return sc, nil
}

// check parses, overrides and validates a scenario; it returns when ctx
// ends, whatever the input (the work left is abandoned).
func (l Loader) check(ctx context.Context, file string, data []byte, sets []string) (*scenario.Scenario, error) {
	type result struct {
		sc  *scenario.Scenario
		err error
	}
	done := make(chan result, 1)
	go func() {
		opts := checkers(ctx, l.Compose, l.Path)
		sc, err := scenario.Parse(file, data, opts)
		if err == nil {
			err = scenario.Apply(sc, sets)
		}
		if err == nil {
			err = scenario.Validate(sc, opts)
		}
		done <- result{sc, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		return r.sc, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", file, ctx.Err())
	}
}

// Read reads a scenario file, at most scenario.MaxFileSize bytes of it
// (a longer one is refused at the line and column where the cap falls),
// or a catalog scenario. It returns when ctx ends even if the read does
// not (see workdir.Read).
func (l Loader) Read(ctx context.Context, file string) ([]byte, error) {
	if scenarios.IsRef(file) {
		return scenarios.ReadRef(file)
	}
	open := func() (io.ReadCloser, error) {
		f, err := l.FS.Open(file)
		if err != nil {
			return nil, fmt.Errorf("scenario: %w", err)
		}
		return f, nil
	}
	return workdir.Read(ctx, file, 0, open, func(r io.Reader) ([]byte, error) { return scenario.ReadAll(file, r) })
}

// Path is file resolved against the working directory; a catalog
// reference stays as it is.
func (l Loader) Path(file string) string {
	if scenarios.IsRef(file) {
		return file
	}
	return l.FS.Path(file)
}

// Expand expands folders into their *.yaml/*.yml files, in name order,
// and catalog: into every catalog scenario.
func (l Loader) Expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if scenarios.IsRef(a) {
			refs, err := scenarios.Expand(a)
			if err != nil {
				return nil, err
			}
			out = append(out, refs...)
			continue
		}
		fi, err := l.FS.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := l.FS.ReadDir(a)
		if err != nil {
			return nil, err
		}
		n := len(out)
		for _, e := range ents {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				out = append(out, filepath.Join(a, e.Name()))
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s: no scenario files (*.yaml, *.yml)", a)
		}
	}
	return out, nil
}

// BundledScripts is the folder a scenario's script is looked up in after
// the scenario's own: the checkout's workloads/ (root), else the scripts
// embedded in this binary, written once into the cache o names.
func BundledScripts(o k6build.Options, root string) (string, error) {
	cache := ""
	if root == "" {
		c, err := o.Cache()
		if err != nil {
			return "", err
		}
		cache = c
	}
	return workloads.BundledDir(root, cache)
}

// BlastRadius is what a scenario's load may reach beyond loopback and its
// own services (allow, and the scenario's allow_targets); it refuses, at
// their place in the scenario, parameters, k6 outputs and flags that point
// anywhere else (k6's --blacklist-ip does not cover where outputs send),
// and external services not allowed.
func BlastRadius(sc *scenario.Scenario, allow []string) (*guard.Allowed, error) {
	a, err := guard.Parse(append(append([]string{}, allow...), sc.AllowTargets...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.File, err)
	}
	var errs scenario.Errors
	if err := a.CheckParams(sc.Workload.Params); err != nil {
		pe := (*guard.ParamError)(nil)
		if !errors.As(err, &pe) {
			return nil, err
		}
		errs = append(errs, sc.Problem("workload.params."+pe.Key, guard.ParamsAllowed, "points at %s, outside this run's blast radius", pe.Host))
	}
	if k := sc.Workload.K6; k != nil {
		for i, out := range k.Outputs {
			if host, ok := a.Refused(guard.ArgHosts(out)); ok {
				errs = append(errs, sc.Problem(fmt.Sprintf("workload.k6.outputs[%d]", i), guard.ParamsAllowed,
					"k6 output %q sends to %s, outside this run's blast radius (k6's --blacklist-ip does not cover outputs)", out, host))
			}
		}
		for i, f := range k.Flags {
			if host, ok := a.Refused(guard.ArgHosts(f)); ok {
				errs = append(errs, sc.Problem(fmt.Sprintf("workload.k6.flags[%d]", i), guard.ParamsAllowed, "k6 flag %q points at %s, outside this run's blast radius", f, host))
			}
		}
	}
	for _, name := range sc.ExternalServices() {
		if err := a.CheckExternal(sc.Services[name].External); err != nil {
			errs = append(errs, sc.Problem("services."+name+".external", guard.ExternalAllowed, "%v", err))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return a, nil
}
