package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// scenarios reads scenarios as the command sees them (see scenarioload).
func (st *State) scenarios() scenarioload.Loader {
	return scenarioload.Loader{FS: st.files(), K6: k6Options(st)}
}

// k6Options are k6build's options in the command's environment.
func k6Options(st *State) k6build.Options {
	return k6build.Options{Progress: st.Stderr, Getenv: st.Getenv, Dir: st.Dir}
}

// loadScenario reads a file or catalog:NAME, applies --set overrides and
// validates the result. It gives up when ctx ends.
func loadScenario(ctx context.Context, st *State, file string, sets []string) (*scenario.Scenario, error) {
	return st.scenarios().Load(ctx, file, sets)
}

// scenarioFailed ends a command whose scenario did not load: exit 130
// once interrupted, else the problems on stderr and exit 2.
func scenarioFailed(ctx context.Context, st *State, err error) error {
	if ctx.Err() != nil {
		return exitcode.Fail(exitInterrupted, err)
	}
	fmt.Fprintln(st.Stderr, err)
	return exitcode.Exit(exitUsage)
}

// scenarioArgs completes arguments with scenario files and folders.
func scenarioArgs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// setupFlags adds --testbed, with its completion, and --load-shards.
func setupFlags(cmd *cobra.Command, f *setup.Flags) {
	f.Register(cmd.Flags())
	cmd.RegisterFlagCompletionFunc("testbed", cobra.FixedCompletions(setup.Testbeds, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
}

// prepare settles what the scenarios' runs need before any load (see
// setup.Prepare); its errors end the command.
func prepare(ctx context.Context, st *State, k6path string, f setup.Flags, results runner.Results, scs []*scenario.Scenario) (*setup.Setup, error) {
	o := setup.Options{K6: k6Options(st), Testbed: f.Testbed, Executable: st.Executable, Shards: f.Shards, Results: results,
		NewLoad: st.NewLoad, NewTestbed: st.NewTestbed}
	o.K6.K6Path = st.path(k6path)
	s, err := setup.Prepare(ctx, o, scs)
	if err != nil {
		return nil, exitcode.Fail(exitcode.Harness(ctx), err)
	}
	return s, nil
}
