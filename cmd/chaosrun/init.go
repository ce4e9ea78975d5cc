package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/chaosrun/chaosrun/compose"
)

// cmdInit writes a starter scenario for a Compose project.
func cmdInit(_ context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	file := fs.String("compose", "", "the Compose file to start from (required)")
	out := fs.String("out", ".", "folder to write the scenario and its k6 script into")
	force := fs.Bool("force", false, "overwrite files that exist")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun init --compose FILE [--out DIR] [--force]")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *file == "" || fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	absFile, err1 := filepath.Abs(*file)
	absOut, err2 := filepath.Abs(*out)
	rel, err3 := filepath.Rel(absOut, absFile)
	if err := errors.Join(err1, err2, err3); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun init: %v\n", err)
		return exitUsage
	}
	s, err := compose.NewStarter(*file, filepath.ToSlash(rel))
	if err != nil {
		fmt.Fprintln(st.Stderr, err)
		return exitUsage
	}
	scenarioPath := filepath.Join(*out, s.Name+".yaml")
	scriptPath := filepath.Join(*out, s.ScriptName)
	for _, p := range []string{scenarioPath, scriptPath} {
		if _, err := os.Stat(p); err == nil && !*force {
			fmt.Fprintf(st.Stderr, "chaosrun init: %s exists (--force overwrites it)\n", p)
			return exitUsage
		}
	}
	if err := errors.Join(os.MkdirAll(*out, 0o755), os.WriteFile(scenarioPath, []byte(s.Scenario), 0o644),
		os.WriteFile(scriptPath, []byte(s.Script), 0o644)); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun init: %v\n", err)
		return exitRunError
	}
	fmt.Fprintf(st.Stdout, "wrote %s and %s\nnext: chaosrun validate %s, then chaosrun run --testbed docker %s\n", scenarioPath, scriptPath, scenarioPath, scenarioPath)
	return exitOK
}
