package main

import (
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/workloads/nativerun"
)

// The exit codes, as the tests name them.
const (
	exitOK          = exitcode.OK
	exitBreach      = exitcode.Breach
	exitUsage       = exitcode.Usage
	exitRunError    = exitcode.RunError
	exitInterrupted = exitcode.Interrupted
)

// resultsTokenEnv holds the results stream's token for `chaosrun load`,
// off its command line.
const resultsTokenEnv = nativerun.TokenEnv
