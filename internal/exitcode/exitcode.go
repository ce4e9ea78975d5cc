// Package exitcode names chaosrun's process exit codes: the contract a CI
// gate reads.
package exitcode

// The exit codes of every chaosrun command.
const (
	OK          = 0   // everything held
	Breach      = 1   // an assertion breached (or a diff regressed)
	Usage       = 2   // bad usage, flags or scenario
	RunError    = 3   // a harness error
	Interrupted = 130 // ended by a signal
)
