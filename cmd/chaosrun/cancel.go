package main

import (
	"context"

	"github.com/chaosrun/chaosrun/internal/exitcode"
)

// untilDone runs f, the work of a command that holds nothing to tear
// down, and returns as soon as ctx ends (exit 130) even if f does not: a
// read that blocks — a FIFO nobody writes to, a hung network filesystem —
// cannot hold the command past Ctrl-C.
func untilDone(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return exitcode.Failf(exitInterrupted, "interrupted: %v", context.Cause(ctx))
	}
}
