package scenarioload

import (
	"context"
	"fmt"
	"io"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/scenario"
)

// Failed ends a command whose scenario did not load: exit 130 once ctx
// has ended, else the problems on stderr and exit 2.
func Failed(ctx context.Context, stderr io.Writer, err error) error {
	if ctx.Err() != nil {
		return exitcode.Fail(exitcode.Interrupted, err)
	}
	fmt.Fprintln(stderr, err)
	return exitcode.Exit(exitcode.Usage)
}

// Scenario loads file as Load does; when it does not load, the command
// ends as Failed says.
func (l Loader) Scenario(ctx context.Context, file string, sets []string, stderr io.Writer) (*scenario.Scenario, error) {
	sc, err := l.Load(ctx, file, sets)
	if err != nil {
		return nil, Failed(ctx, stderr, err)
	}
	return sc, nil
}

// Scenarios loads and validates every scenario args name (files, folders,
// catalog:) before anything starts, saying on stderr what is wrong with
// each (see LoadAll); ok, when set, hears of each that is right. A wrong
// one ends the command with exit 2, an interrupt with 130.
func (l Loader) Scenarios(ctx context.Context, sets, allow, args []string, stderr io.Writer, ok func(string, *scenario.Scenario)) ([]*scenario.Scenario, error) {
	files, err := l.Expand(args)
	if err != nil {
		return nil, exitcode.Fail(exitcode.Usage, err)
	}
	scs, stopped, err := l.LoadAll(ctx, files, sets, allow, stderr, ok)
	switch {
	case stopped:
		return nil, Failed(ctx, stderr, err)
	case err != nil:
		return nil, exitcode.Exit(exitcode.Usage)
	}
	return scs, nil
}
