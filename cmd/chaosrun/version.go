package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/workloads/k6build"
	"github.com/chaosrun/chaosrun/workloads/native"
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
			fmt.Fprintf(st.Stdout, "chaosrun %s (load: %s; k6 %s with xk6-resilience for engine: k6; Toxiproxy v2.12.0)\n", version(), native.Version, k6build.K6Version)
		},
	}
}
