package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/servers"
)

func newServeCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "serve NAME [flags]",
		Short: "serve a reference target or Toxiproxy (used by testbeds)",
		Long: "Serve a reference target or the embedded Toxiproxy, as testbeds start them. NAME is one of " +
			strings.Join(servers.Names(), ", ") + "; `chaosrun serve NAME --help` lists its flags.",
		DisableFlagParsing: true, // the flags are the server's
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return servers.Names(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) > 0 && (args[0] == "-h" || args[0] == "--help"):
				return cmd.Help()
			case len(args) == 0 || strings.HasPrefix(args[0], "-"):
				fmt.Fprintf(st.Stderr, "usage: %s  (NAME: %s)\n", cmd.UseLine(), strings.Join(servers.Names(), ", "))
				return exitcode.Exit(exitUsage)
			}
			srv, ok := servers.Lookup(args[0])
			if !ok {
				return exitcode.Failf(exitUsage, "unknown server %q (allowed: %s)", args[0], strings.Join(servers.Names(), ", "))
			}
			err := srv(cmd.Context(), args[1:], st.Stdout, st.Stderr)
			if err != nil && !errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(st.Stderr, "chaosrun serve %s: %v\n", args[0], err)
				return exitcode.Exit(exitUsage)
			}
			return nil
		},
	}
}
