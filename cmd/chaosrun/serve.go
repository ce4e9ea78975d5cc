package main

import (
	"strings"

	"github.com/spf13/cobra"

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
			if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
				return cmd.Help()
			}
			return servers.Serve(cmd.Context(), cmd.UseLine(), args, st.Stdout, st.Stderr)
		},
	}
}
