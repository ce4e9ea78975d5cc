package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/compose"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarios"
	"github.com/chaosrun/chaosrun/servers"
	"github.com/chaosrun/chaosrun/workloads"
)

// scenarioOptions wires the fault and assertion checkers into the loader.
func scenarioOptions() scenario.Options {
	return scenario.Options{
		FaultKind:  faults.Check,
		Check:      assertions.ValidateCheck,
		Metric:     assertions.ValidateMetric,
		LiveMetric: assertions.ValidateLiveMetric,
		Targets:    servers.Targets(),
		HostKind:   faults.IsHostKind,
		Compose:    compose.Import,
	}
}

// loadScenario reads a file, applies --set overrides and validates the
// result. It gives up when ctx ends.
func loadScenario(ctx context.Context, st *State, file string, sets []string) (*scenario.Scenario, error) {
	data, err := readScenario(ctx, st, file)
	if err != nil {
		return nil, err
	}
	sc, err := scenario.Parse(file, data, scenarioOptions())
	if err != nil {
		return nil, err
	}
	if err := scenario.Apply(sc, sets); err != nil {
		return nil, err
	}
	if err := scenario.Validate(sc, scenarioOptions()); err != nil {
		return nil, err
	}
	if sc.Workload.EngineName() != scenario.EngineK6 {
		return sc, nil // a native workload names no script
	}
	root, _ := k6Options(st).Checkout()
	dir, rootErr := bundledScripts(st, root)
	if err := workloads.CheckScript(sc, scenarioPath(st, file), dir); err != nil {
		if rootErr != nil {
			return nil, fmt.Errorf("%w\n  (no bundled scripts to look in: %v)", err, rootErr)
		}
		return nil, err
	}
	return sc, nil
}

// readScenario reads a scenario file, at most scenario.MaxFileSize bytes
// of it. It returns when ctx ends even if the read does not: opening or
// reading a FIFO nobody writes to blocks, and no read can be cancelled.
func readScenario(ctx context.Context, st *State, file string) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	if scenarios.IsRef(file) {
		return scenarios.ReadRef(file)
	}
	done := make(chan result, 1)
	go func() {
		f, err := st.FS.Open(st.fsName(file))
		if err != nil {
			done <- result{err: fmt.Errorf("scenario: %w", named(err, file))}
			return
		}
		defer f.Close()
		data, err := scenario.ReadAll(file, f)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("reading %s: %w", file, context.Cause(ctx))
	}
}

// scenarioFailed ends a command whose scenario did not load: exit 130
// once interrupted, else the problems on stderr and exit 2.
func scenarioFailed(ctx context.Context, st *State, err error) error {
	if ctx.Err() != nil {
		return fail(exitInterrupted, err)
	}
	fmt.Fprintln(st.Stderr, err)
	return exit(exitUsage)
}

// blastRadius is what a scenario's load may reach beyond loopback and its
// own services; it refuses parameters that point anywhere else, at their
// place in the scenario.
func blastRadius(sc *scenario.Scenario, allow []string) (*guard.Allowed, error) {
	a, err := guard.Parse(append(append([]string{}, allow...), sc.AllowTargets...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.File, err)
	}
	if err := a.CheckParams(sc.Workload.Params); err != nil {
		if pe := (*guard.ParamError)(nil); errors.As(err, &pe) {
			return nil, scenario.Errors{sc.Problem("workload.params."+pe.Key, guard.ParamsAllowed, "points at %s, outside this run's blast radius", pe.Host)}
		}
		return nil, err
	}
	for _, name := range sc.ExternalServices() {
		if err := a.CheckExternal(name, sc.Services[name].External); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// scenarioFiles expands folders into their *.yaml/*.yml files, in name
// order, and catalog: into every catalog scenario.
func scenarioFiles(st *State, args []string) ([]string, error) {
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
		fi, err := st.stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := st.readDir(a)
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

// scenarioArgs completes arguments with scenario files and folders.
func scenarioArgs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// testbedFlag adds --testbed, which names where services run.
func testbedFlag(cmd *cobra.Command, bed *string) {
	cmd.Flags().StringVar(bed, "testbed", "local", "where services run: local (child processes) or docker (containers)")
	cmd.RegisterFlagCompletionFunc("testbed", cobra.FixedCompletions([]cobra.Completion{"local", "docker"}, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
}

// checkTestbed refuses a --testbed that is not there.
func checkTestbed(bed string) error {
	if bed != "local" && bed != "docker" {
		return failf(exitUsage, "--testbed %q is not available (allowed: local, docker)", bed)
	}
	return nil
}
