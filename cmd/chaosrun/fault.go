package main

import (
	"context"

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
// --gameday, --token and --by, and ends as gameday.ClientFlags.Call says.
func gamedayCmd(st *State, cmd *cobra.Command, by *string, call func(ctx context.Context, c *gameday.Client, args []string) error) *cobra.Command {
	var f gameday.ClientFlags
	cmd.Flags().StringVar(&f.URL, "gameday", st.Getenv("CHAOSRUN_GAMEDAY"), "URL of the running game day (as it printed; env CHAOSRUN_GAMEDAY)")
	cmd.Flags().StringVar(&f.Token, "token", st.Getenv("CHAOSRUN_GAMEDAY_TOKEN"), "the game day's token, if it has one (env CHAOSRUN_GAMEDAY_TOKEN)")
	if by != nil {
		cmd.Flags().StringVar(by, "by", gameday.Terminal(), "who acts, for the timeline")
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return f.Call(cmd.Context(), func(ctx context.Context, c *gameday.Client) error { return call(ctx, c, args) })
	}
	return cmd
}

func newFaultListCmd(st *State) *cobra.Command {
	cmd := &cobra.Command{Use: "list --gameday URL [--token T]", Short: "list the faults in force", Args: cobra.NoArgs}
	return gamedayCmd(st, cmd, nil, func(ctx context.Context, c *gameday.Client, _ []string) error {
		return gameday.ListFaults(ctx, c, st.Stdout)
	})
}

func newFaultClearCmd(st *State) *cobra.Command {
	var by string
	cmd := &cobra.Command{Use: "clear --gameday URL [--token T] [--by WHO] NAME", Short: "revert a fault in force", Args: cobra.ExactArgs(1)}
	return gamedayCmd(st, cmd, &by, func(ctx context.Context, c *gameday.Client, args []string) error {
		return gameday.ClearFault(ctx, c, args[0], by, st.Stdout)
	})
}

func newFaultAddCmd(st *State) *cobra.Command {
	var f gameday.AddFlags
	cmd := &cobra.Command{
		Use:   "add --gameday URL [--token T] --kind KIND (--edge FROM->TO | --host SVC) [--attr NAME=VALUE ...] [--name N] [--by WHO]",
		Short: "inject a fault",
		Args:  cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Kind, "kind", "", "fault kind")
	fl.StringVar(&f.Edge, "edge", "", "edge FROM->TO or FROM->TO.N (edge kinds)")
	fl.StringVar(&f.Host, "host", "", "instance SVC or SVC.N (host kinds)")
	fl.StringVar(&f.Name, "name", "", "the fault's name (default KIND@TARGET)")
	fl.StringVar(&f.Direction, "direction", "", "downstream (default) or upstream")
	fl.StringArrayVar(&f.Attrs, "attr", nil, "attribute NAME=VALUE, e.g. latency=2000 (repeatable)")
	return gamedayCmd(st, cmd, &f.By, func(ctx context.Context, c *gameday.Client, _ []string) error {
		return f.Inject(ctx, c, st.Stdout)
	})
}
