package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/logs"
	"github.com/chaosrun/chaosrun/internal/suggest"
)

// Execute runs one command line and returns the process exit code.
func Execute(ctx context.Context, st *State, args []string) int {
	if st.Signals != nil {
		var stop context.CancelFunc
		ctx, stop = st.Signals(ctx)
		defer stop()
	}
	root := newRoot(st)
	root.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	cmd, err := root.ExecuteContextC(ctx)
	if ee, ok := exitcode.As(err); ok {
		if ee.Err != nil {
			fmt.Fprintf(st.Stderr, "%s: %v\n", cmd.CommandPath(), ee.Err)
		}
		return ee.Code
	} else if err == nil {
		return exitcode.OK
	}
	// cobra's own: an unknown command or flag, wrong arguments.
	fmt.Fprintf(st.Stderr, "%s: %v\n", cmd.CommandPath(), err)
	if !cmd.HasAvailableSubCommands() {
		fmt.Fprintf(st.Stderr, "usage: %s\n", cmd.UseLine())
	}
	fmt.Fprintf(st.Stderr, "Run '%s --help' for more.\n", cmd.CommandPath())
	return exitcode.Usage
}

func newRoot(st *State) *cobra.Command {
	root := &cobra.Command{
		Use:   "chaosrun",
		Short: "A chaos and load-testing harness",
		Long: `chaosrun stands up services behind Toxiproxy, drives open-model load (its native
engine, or k6 for workloads with engine: k6), injects faults on a schedule and
checks that SLOs, bulkhead isolation and outlier ejection hold. Exit codes:
0 ok, 1 a breach, 2 bad usage or scenario, 3 a harness error, 130 interrupted.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(st.Stdin)
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	group(st, root, newRunCmd(st), newValidateCmd(st), newSchemaCmd(st), newServeCmd(st), newVersionCmd(st),
		newImagesCmd(st), newCleanCmd(st), newDoctorCmd(st), newDiffCmd(st), newGamedayCmd(st),
		newExportCmd(st), newFaultCmd(st), newInitCmd(st), newExportResultsCmd(st), newCatalogCmd(st), newSuperviseCmd(st), newLoadCmd(st), newJudgeCmd(st))
	level := root.PersistentFlags().String("log-level", logs.DefaultLevel, "the harness's own diagnostics on stderr: "+strings.Join(logs.Levels, ", "))
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		ctx, err := logs.Into(c.Context(), st.Stderr, *level)
		c.SetContext(ctx)
		return err
	}
	harnessErrors(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		var names []string
		c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		return suggest.UnknownFlag(err, names)
	})
	return root
}

// group makes cmd a command of subcommands: without one it prints its
// usage and exits 2; an unknown one is a usage error.
func group(st *State, cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.AddCommand(subs...)
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		var names []string
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		msg := fmt.Sprintf("unknown command %q (allowed: %s)", args[0], strings.Join(names, ", "))
		if near := suggest.Nearest(args[0], names); near != "" {
			msg += "; did you mean " + near + "?"
		}
		return errors.New(msg)
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		fmt.Fprint(st.Stderr, c.UsageString())
		return exitcode.Exit(exitcode.Usage)
	}
	return cmd
}

// harnessErrors makes an error a command returns without an exit code a
// harness error (3): only cobra's own, about the command line, exit 2. A
// command that fails once interrupted (a read given up on a signal) exits
// 130, whatever it failed with, unless its code is a verdict's (Judged).
func harnessErrors(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			ee, ok := exitcode.As(err)
			switch {
			case err == nil, ok && ee.Judged:
			case cmd.Context().Err() != nil && ok:
				ee.Code = exitcode.Interrupted
			case cmd.Context().Err() != nil:
				return exitcode.Fail(exitcode.Interrupted, err)
			case !ok:
				return exitcode.Fail(exitcode.RunError, err)
			}
			return err
		}
	}
	for _, s := range c.Commands() {
		harnessErrors(s)
	}
}
