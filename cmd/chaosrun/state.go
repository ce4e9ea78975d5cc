package main

import (
	"context"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/chaosrun/chaosrun/internal/signals"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// State is everything a command touches outside itself (modelled on k6's
// GlobalState), so that tests run whole command lines in-process against
// buffers, an environment of their own, a working directory and a
// filesystem. The exit code is what Execute returns.
type State struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is the environment commands read (CHAOSRUN_*); nil is empty.
	Env map[string]string
	// Dir is the working directory: every relative path a command takes
	// resolves against it. Scenario files keep the name they were given
	// (in messages and records).
	Dir string
	// FS is what commands read themselves (scenario files and folders,
	// certificates, CA files), rooted at "/". The packages they call read
	// the real filesystem (run records, scripts beside a scenario).
	FS fs.FS
	// Executable is the chaosrun binary that serves the targets.
	Executable string
	// IsTerminal reports whether Stderr is a terminal (live progress line).
	IsTerminal bool
	// Signals hooks the signals that end a command (Ctrl-C, SIGTERM,
	// SIGHUP, SIGQUIT) to its context; nil hooks none.
	Signals func(context.Context) (context.Context, context.CancelFunc)
	// NewLoad, when set, makes run's and gameday's load in place of load
	// processes (tests inject a fake); no k6 is built then.
	NewLoad engine.NewLoad
	// NewTestbed, when set, makes run's and gameday's testbed in place of
	// the one --testbed names (tests inject a fake).
	NewTestbed func() testbed.Testbed
}

// NewState is the state of the real process.
func NewState() *State {
	exe, _ := os.Executable()
	wd, _ := os.Getwd()
	fi, err := os.Stderr.Stat()
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return &State{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Env: env, Dir: wd, FS: os.DirFS("/"),
		Executable: exe, IsTerminal: err == nil && fi.Mode()&os.ModeCharDevice != 0,
		Signals: signals.Hook(os.Stderr),
	}
}

// Getenv is the value of an environment variable, "" when unset.
func (st *State) Getenv(key string) string { return st.Env[key] }

// files is the working directory and filesystem commands read.
func (st *State) files() workdir.FS { return workdir.FS{FS: st.FS, Dir: st.Dir} }

// path resolves p against the working directory.
func (st *State) path(p string) string { return st.files().Path(p) }
