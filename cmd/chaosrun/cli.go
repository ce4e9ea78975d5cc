package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes.
const (
	exitOK          = 0
	exitBreach      = 1
	exitUsage       = 2
	exitRunError    = 3
	exitInterrupted = 130
)

// State is everything a command touches outside itself, so that tests run
// real command lines against buffers.
type State struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Executable is the chaosrun binary that serves the targets.
	Executable string
	// IsTerminal reports whether Stderr is a terminal (live progress line).
	IsTerminal bool
}

// NewState is the state of the real process.
func NewState() *State {
	exe, _ := os.Executable()
	fi, err := os.Stderr.Stat()
	tty := err == nil && fi.Mode()&os.ModeCharDevice != 0
	return &State{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Executable: exe, IsTerminal: tty}
}

type command struct {
	summary string
	run     func(ctx context.Context, st *State, args []string) int
}

func commands() map[string]command {
	return map[string]command{
		"run":            {"run scenarios (files or folders) and judge them", cmdRun},
		"validate":       {"check scenario files and report every problem", cmdValidate},
		"schema":         {"print the JSON Schema of the scenario format", cmdSchema},
		"serve":          {"serve a reference target or Toxiproxy (used by testbeds)", cmdServe},
		"version":        {"print versions", cmdVersion},
		"images":         {"build and list the Docker testbed's images (never pulled)", cmdImages},
		"clean":          {"remove containers and networks that killed Docker runs left", cmdClean},
		"doctor":         {"check Docker, the images and the k6 build; say what to fix", cmdDoctor},
		"diff":           {"compare run records: what got worse beyond the noise", cmdDiff},
		"gameday":        {"steady load, a live page to inject faults and watch SLOs, stop conditions", cmdGameday},
		"export":         {"write a scenario as Kubernetes manifests (export k8s)", cmdExport},
		"export-results": {"send finished runs (run.json) to Prometheus remote write, OTLP and Grafana", cmdExportResults},
		"fault":          {"add, clear or list faults of a running game day; apply a scenario's schedule to a Toxiproxy", cmdFault},
	}
}

// Execute runs one command line and returns the process exit code.
func Execute(ctx context.Context, st *State, args []string) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(st.Stderr, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(st.Stderr, "chaosrun: unknown command %q (allowed: %s)\n", args[0], strings.Join(names(cmds), ", "))
		return exitUsage
	}
	return c.run(ctx, st, args[1:])
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: chaosrun COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range names(cmds) {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\n`chaosrun COMMAND -h` lists a command's flags.")
}

func names(cmds map[string]command) []string {
	out := make([]string, 0, len(cmds))
	for n := range cmds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// parseFlags parses fs and maps its errors to an exit code; ok is false
// when the command should return code.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK, false
	case err != nil:
		return exitUsage, false
	}
	return 0, true
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
