// Package signals ties the signals that end a chaosrun command (Ctrl-C,
// SIGTERM, SIGHUP, SIGQUIT) to its context: the first cancels it, a second
// bounds the teardown, after which the process exits 130.
package signals

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/runner"
)

// endSignals end a command as Ctrl-C does: a closed terminal or SSH
// session (SIGHUP) and SIGQUIT too, so that every way a run is ended
// tears down and records.
var endSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// teardownBound is how long a run's teardown may take once told to stop:
// load stopping, its results, the testbed going down, with a margin.
var teardownBound = runner.DefaultWaits.Stop + runner.DefaultWaits.Collect + runner.DefaultWaits.Down + 5*time.Second

// Hook hooks the process's signals: endSignals end the command's
// context; SIGPIPE is taken so that a closed stdout or stderr (`chaosrun
// run … | head`) makes writes fail instead of killing the harness.
func Hook(stderr io.Writer) func(context.Context) (context.Context, context.CancelFunc) {
	return func(ctx context.Context) (context.Context, context.CancelFunc) {
		// A handled (not ignored) SIGPIPE: children still get the default.
		pipe := make(chan os.Signal, 1)
		signal.Notify(pipe, syscall.SIGPIPE)
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, endSignals...)
		ctx, stop := Watch(ctx, sigs, teardownBound, stderr, os.Exit)
		return ctx, func() {
			signal.Stop(sigs)
			stop()
		}
	}
}

// Watch cancels ctx at the first signal on sigs, with a cause
// naming it. A second one gives teardown bound more, then calls exit(130):
// the harness never hangs on a teardown that does not end.
func Watch(ctx context.Context, sigs <-chan os.Signal, bound time.Duration, stderr io.Writer, exit func(int)) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var once sync.Once
	go func() {
		var first os.Signal
		select {
		case first = <-sigs:
		case <-done:
			return
		}
		cancel(fmt.Errorf("%w by %s", runner.ErrInterrupted, signalName(first)))
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "chaosrun: %s again: teardown has at most %s more, then chaosrun exits\n", signalName(sig), bound)
		case <-done:
			return
		}
		select {
		case <-time.After(bound):
			fmt.Fprintf(stderr, "chaosrun: teardown did not end within %s; exiting (`chaosrun clean` removes Docker leftovers)\n", bound)
			exit(exitcode.Interrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		once.Do(func() { close(done) })
		cancel(nil)
	}
}

// signalName names a signal as users know it: "SIGINT", "SIGHUP".
func signalName(s os.Signal) string {
	if n, ok := s.(syscall.Signal); ok {
		switch n {
		case syscall.SIGINT:
			return "SIGINT (Ctrl-C)"
		case syscall.SIGHUP:
			return "SIGHUP (terminal closed)"
		case syscall.SIGTERM:
			return "SIGTERM"
		case syscall.SIGQUIT:
			return "SIGQUIT"
		}
	}
	return s.String()
}

// UntilDone runs f, the work of a command that holds nothing to tear
// down, and returns as soon as ctx ends (exit 130) even if f does not: a
// read that blocks — a FIFO nobody writes to, a hung network filesystem —
// cannot hold the command past Ctrl-C.
func UntilDone(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return exitcode.Failf(exitcode.Interrupted, "interrupted: %v", context.Cause(ctx))
	}
}
