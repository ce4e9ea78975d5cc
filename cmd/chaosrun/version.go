package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func cmdVersion(_ context.Context, st *State, _ []string) int {
	fmt.Fprintf(st.Stdout, "chaosrun %s (k6 v1.8.1 with xk6-resilience, Toxiproxy v2.12.0)\n", version())
	return exitOK
}
