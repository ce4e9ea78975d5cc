// Package exitcode names chaosrun's process exit codes: the contract a CI
// gate reads.
package exitcode

import (
	"context"
	"errors"
	"fmt"
)

// The exit codes of every chaosrun command.
const (
	OK          = 0   // everything held
	Breach      = 1   // an assertion breached (or a diff regressed)
	Usage       = 2   // bad usage, flags or scenario
	RunError    = 3   // a harness error
	Interrupted = 130 // ended by a signal
)

// Error ends a command with an exit code; the command line prints Err,
// when set, after the command's name.
type Error struct {
	Code int
	Err  error
	// Judged marks a verdict's code that stands even when the command was
	// interrupted (a game day ended by Ctrl-C is judged, not cut short).
	Judged bool
}

// Error says the exit code and what went wrong.
func (e *Error) Error() string { return fmt.Sprintf("exit %d: %v", e.Code, e.Err) }

// Unwrap is what went wrong.
func (e *Error) Unwrap() error { return e.Err }

// Exit ends a command that has said what went wrong itself: nil for OK.
func Exit(code int) error {
	if code == OK {
		return nil
	}
	return &Error{Code: code}
}

// Fail ends a command with code and err.
func Fail(code int, err error) error { return &Error{Code: code, Err: err} }

// Failf ends a command with code and a message.
func Failf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Verdictf ends a command with a verdict's code, which an interrupt does
// not turn into Interrupted.
func Verdictf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...), Judged: true}
}

// Harness is a harness error's exit code: Interrupted once ctx has ended,
// else RunError.
func Harness(ctx context.Context) int {
	if ctx.Err() != nil {
		return Interrupted
	}
	return RunError
}

// As is the Error in err's chain, if there is one.
func As(err error) (*Error, bool) {
	ee := (*Error)(nil)
	ok := errors.As(err, &ee)
	return ee, ok
}
