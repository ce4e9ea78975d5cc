package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/gameday"
)

// newFaultCmd adds, clears and lists faults of a running game day, and
// applies a scenario's schedule to a Toxiproxy.
func newFaultCmd(st *State) *cobra.Command {
	return group(st, &cobra.Command{
		Use:   "fault",
		Short: "add, clear or list faults of a running game day; apply a scenario's schedule to a Toxiproxy",
	}, newFaultAddCmd(st), newFaultClearCmd(st), newFaultListCmd(st), newFaultApplyCmd(st))
}

// gamedayCmd is a command that calls a running game day: it takes
// --gameday, --token and --by, and a refused request (4xx) exits 2.
func gamedayCmd(st *State, cmd *cobra.Command, by *string, call func(ctx context.Context, c *gameday.Client, args []string) error) *cobra.Command {
	var url, token string
	cmd.Flags().StringVar(&url, "gameday", st.Getenv("CHAOSRUN_GAMEDAY"), "URL of the running game day (as it printed; env CHAOSRUN_GAMEDAY)")
	cmd.Flags().StringVar(&token, "token", st.Getenv("CHAOSRUN_GAMEDAY_TOKEN"), "the game day's token, if it has one (env CHAOSRUN_GAMEDAY_TOKEN)")
	if by != nil {
		cmd.Flags().StringVar(by, "by", gameday.Terminal(), "who acts, for the timeline")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if url == "" {
			return failf(exitUsage, "--gameday URL is required (the URL `chaosrun gameday` printed)")
		}
		c, err := gameday.NewClient(url, token)
		if err != nil {
			return failf(exitUsage, "--gameday %w", err)
		}
		err = call(cmd.Context(), c, args)
		switch ee := (*exitError)(nil); {
		case err == nil || errors.As(err, &ee):
			return err
		case gameday.Refused(err):
			return fail(exitUsage, err)
		}
		return fail(harnessCode(cmd.Context()), err)
	}
	return cmd
}

func newFaultListCmd(st *State) *cobra.Command {
	cmd := &cobra.Command{Use: "list --gameday URL [--token T]", Short: "list the faults in force", Args: cobra.NoArgs}
	return gamedayCmd(st, cmd, nil, func(ctx context.Context, c *gameday.Client, _ []string) error {
		list, err := c.List(ctx)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			fmt.Fprintln(st.Stdout, "no faults in force")
		}
		for _, f := range list {
			fmt.Fprintf(st.Stdout, "%s\t%s\tby %s since %s\n", f.Name, f.Describe, f.By, f.Since.Format(time.TimeOnly))
		}
		return nil
	})
}

func newFaultClearCmd(st *State) *cobra.Command {
	var by string
	cmd := &cobra.Command{Use: "clear --gameday URL [--token T] [--by WHO] NAME", Short: "revert a fault in force", Args: cobra.ExactArgs(1)}
	return gamedayCmd(st, cmd, &by, func(ctx context.Context, c *gameday.Client, args []string) error {
		if err := c.Clear(ctx, args[0], by); err != nil {
			return err
		}
		fmt.Fprintf(st.Stdout, "cleared %s\n", args[0])
		return nil
	})
}

func newFaultAddCmd(st *State) *cobra.Command {
	var req gameday.FaultRequest
	var attrs []string
	cmd := &cobra.Command{
		Use:   "add --gameday URL [--token T] --kind KIND (--edge FROM->TO | --host SVC) [--attr NAME=VALUE ...] [--name N] [--by WHO]",
		Short: "inject a fault",
		Args:  cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&req.Kind, "kind", "", "fault kind")
	fl.StringVar(&req.Edge, "edge", "", "edge FROM->TO or FROM->TO.N (edge kinds)")
	fl.StringVar(&req.Host, "host", "", "instance SVC or SVC.N (host kinds)")
	fl.StringVar(&req.Name, "name", "", "the fault's name (default KIND@TARGET)")
	fl.StringVar(&req.Direction, "direction", "", "downstream (default) or upstream")
	fl.StringArrayVar(&attrs, "attr", nil, "attribute NAME=VALUE, e.g. latency=2000 (repeatable)")
	return gamedayCmd(st, cmd, &req.By, func(ctx context.Context, c *gameday.Client, _ []string) error {
		if req.Kind == "" || (req.Edge == "") == (req.Host == "") {
			return failf(exitUsage, "needs --kind and exactly one of --edge or --host")
		}
		var err error
		if req.Attributes, err = gameday.ParseAttrs(attrs); err != nil {
			return fail(exitUsage, err)
		}
		af, err := c.Add(ctx, req)
		if err != nil {
			return err
		}
		fmt.Fprintf(st.Stdout, "injected %s: %s\n", af.Name, af.Describe)
		return nil
	})
}
