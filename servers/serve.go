package servers

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/chaosrun/chaosrun/internal/exitcode"
)

// Serve is chaosrun serve: it runs the server args[0] names, the rest of
// args its flags, until ctx ends. No name (usage, the command's usage
// line, is said with the names), an unknown one or bad flags exit 2.
func Serve(ctx context.Context, usage string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "usage: %s  (NAME: %s)\n", usage, strings.Join(Names(), ", "))
		return exitcode.Exit(exitcode.Usage)
	}
	srv, ok := Lookup(args[0])
	if !ok {
		return exitcode.Failf(exitcode.Usage, "unknown server %q (allowed: %s)", args[0], strings.Join(Names(), ", "))
	}
	err := srv(ctx, args[1:], stdout, stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "chaosrun serve %s: %v\n", args[0], err)
		return exitcode.Exit(exitcode.Usage)
	}
	return nil
}
