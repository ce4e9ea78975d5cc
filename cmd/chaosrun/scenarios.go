package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/runner/setup"
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

// scenarioArgs completes arguments with scenario files and folders.
func scenarioArgs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// testbedCompletion completes --testbed.
func testbedCompletion(cmd *cobra.Command) {
	cmd.RegisterFlagCompletionFunc("testbed", cobra.FixedCompletions(setup.Testbeds, cobra.ShellCompDirectiveNoFileComp)) //nolint:errcheck // the flag exists
}

// env is what run and gameday take from the process.
func (st *State) env() setup.Env {
	return setup.Env{Scenarios: st.scenarios(), Executable: st.Executable, Stdout: st.Stdout, Stderr: st.Stderr,
		IsTerminal: st.IsTerminal, Getenv: st.Getenv, NewLoad: st.NewLoad, NewTestbed: st.NewTestbed}
}
