package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func newVersionCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print versions",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintf(st.Stdout, "chaosrun %s (k6 v1.8.1 with xk6-resilience, Toxiproxy v2.12.0)\n", version())
		},
	}
}
