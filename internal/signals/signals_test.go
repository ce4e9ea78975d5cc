package signals

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/runner"
)

// syncBuffer is a buffer Watch writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatch: the first signal cancels with a cause that names it;
// a second one exits 130 once teardown had its bound, not before; a
// command that ends in time never exits from here.
func TestWatch(t *testing.T) {
	const bound = 150 * time.Millisecond
	tests := []struct {
		name     string
		signals  []os.Signal
		endAfter time.Duration // the command returns (stop) after this
		wantExit bool
	}{
		{"one signal, teardown ends", []os.Signal{syscall.SIGHUP}, 50 * time.Millisecond, false},
		{"two signals, teardown ends within its bound", []os.Signal{os.Interrupt, os.Interrupt}, 50 * time.Millisecond, false},
		{"two signals, teardown hangs", []os.Signal{os.Interrupt, syscall.SIGTERM}, time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 2)
			exited := make(chan time.Time, 1)
			var stderr syncBuffer
			ctx, stop := Watch(context.Background(), sigs, bound, &stderr, func(code int) {
				if code != exitcode.Interrupted {
					t.Errorf("exit(%d), want %d", code, exitcode.Interrupted)
				}
				exited <- time.Now()
			})
			t0 := time.Now()
			for _, s := range tc.signals {
				sigs <- s
			}
			<-ctx.Done()
			if cause := context.Cause(ctx); !errors.Is(cause, runner.ErrInterrupted) || !strings.Contains(cause.Error(), "SIG") {
				t.Errorf("cause %v: want ErrInterrupted naming the signal", cause)
			}
			select {
			case at := <-exited:
				if !tc.wantExit {
					t.Fatal("exited though the command ended")
				}
				if at.Sub(t0) < bound {
					t.Errorf("exited %s after the second signal, before teardown's bound %s", at.Sub(t0), bound)
				}
				if !strings.Contains(stderr.String(), "did not end within") {
					t.Errorf("no message before exiting: %q", stderr.String())
				}
			case <-time.After(tc.endAfter):
				if tc.wantExit {
					t.Fatal("a hung teardown after a second signal did not exit")
				}
			}
			stop()
			stop() // twice is fine
			select {
			case <-exited:
				t.Error("exited after the command ended")
			case <-time.After(2 * bound):
			}
		})
	}
}
