package server

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"
)

// startServer runs s.Run in the background and returns its base URL and a stop
// func that cancels it and returns Run's result and how long shutdown took.
func startServer(t *testing.T, s *Server) (string, func() (error, time.Duration)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := s.Run(ctx, pw)
		pw.Close()
		done <- err
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, pr)
	}()
	var base string
	select {
	case line, ok := <-lines:
		var good bool
		if ok {
			base, good = ParseReadyLine(line)
		}
		if !good {
			cancel()
			t.Fatalf("ready line %q does not start with %q (run err: %v)", line, ReadyPrefix, <-done)
		}
	case <-time.After(5 * time.Second):
		cancel()
		t.Fatal("no ready line within 5s")
	}
	stopped := false
	stop := func() (error, time.Duration) {
		if stopped {
			return nil, 0
		}
		stopped = true
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			return err, time.Since(start)
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10s of cancel")
			return nil, 0
		}
	}
	t.Cleanup(func() { stop() })
	return base, stop
}
