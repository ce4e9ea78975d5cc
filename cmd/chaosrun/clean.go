package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/chaosrun/chaosrun/testbed/docker"
)

// cmdClean removes the containers and networks Docker runs left behind
// (a harness killed by SIGKILL cannot tear down), found by their labels.
func cmdClean(ctx context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("clean", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	run := fs.String("run", "", "only this run ID (label "+docker.LabelRun+")")
	all := fs.Bool("all", false, "also remove what runs whose harness still runs have made")
	dry := fs.Bool("dry-run", false, "list what would go; remove nothing")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun clean [--run ID] [--all] [--dry-run]   (removes what Docker runs left behind)")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	cli, err := docker.NewClient(ctx)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun clean: %v\n", err)
		return exitRunError
	}
	defer cli.Close()
	rm, err := docker.Clean(ctx, cli, docker.CleanOptions{Run: *run, All: *all, DryRun: *dry})
	verb := "removed"
	if *dry {
		verb = "would remove"
	}
	for _, c := range rm.Containers {
		fmt.Fprintf(st.Stdout, "%s container %s\n", verb, c)
	}
	for _, n := range rm.Networks {
		fmt.Fprintf(st.Stdout, "%s network %s\n", verb, n)
	}
	for _, r := range rm.Skipped {
		fmt.Fprintf(st.Stdout, "left run %s alone: its harness still runs (--all removes it too)\n", r)
	}
	if len(rm.Containers)+len(rm.Networks) == 0 {
		fmt.Fprintln(st.Stdout, "nothing left behind by chaosrun runs")
	}
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun clean: %v\n", err)
		return exitRunError
	}
	return exitOK
}
