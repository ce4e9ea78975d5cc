package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/compose"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/servers"
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

// loadScenario reads a file, applies --set overrides and validates the result.
func loadScenario(st *State, file string, sets []string) (*scenario.Scenario, error) {
	data, err := st.readFile(file)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
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
	return sc, nil
}

// blastRadius is what a scenario's load may reach beyond loopback and its
// own services; it refuses parameters that point anywhere else.
func blastRadius(sc *scenario.Scenario, allow []string) (*guard.Allowed, error) {
	a, err := guard.Parse(append(append([]string{}, allow...), sc.AllowTargets...))
	if err != nil {
		return nil, err
	}
	for _, name := range sc.ExternalServices() {
		if err := a.CheckExternal(name, sc.Services[name].External); err != nil {
			return nil, err
		}
	}
	return a, a.CheckParams(sc.Workload.Params)
}

// scenarioFiles expands folders into their *.yaml/*.yml files, in name order.
func scenarioFiles(st *State, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
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
