// Package nativerun is both sides of a load process, `chaosrun load`: the
// harness runs a shard of a native workload as one (in its own process
// group, its output in a log, stopped gracefully on cancel: SIGINT stops
// the arrivals and the stream ends with its end marker; killed if it does
// not end, and killed with its parent), and Shard is what the process does.
package nativerun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/chaosrun/chaosrun/internal/childproc"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// TokenEnv is the environment variable that carries the results stream's
// token to the load process.
const TokenEnv = "CHAOSRUN_RESULTS_TOKEN"

// DefaultGrace is how long a load process has after SIGINT before its
// process group is killed, when Spec.Grace is zero: the engine's own grace
// for requests in flight (5 s) and time to end the stream.
const DefaultGrace = 8 * time.Second

// exitInterrupted is `chaosrun load`'s exit code after SIGINT or SIGTERM.
const exitInterrupted = 130

// tailLines is how many lines of the log an error quotes, from at most
// its last tailBytes.
const (
	tailLines = 20
	tailBytes = 16 << 10
)

// Spec says how to run one shard.
type Spec struct {
	// Binary is the chaosrun executable.
	Binary string
	// SpecFile is the workload as JSON (native.Spec).
	SpecFile string
	Shard    native.Shard
	// StreamAddr is the receiver's host:port; StreamOptions its TLS
	// options (tls, ca, server_name); StreamToken its token, passed in
	// the environment.
	StreamAddr    string
	StreamOptions url.Values
	StreamToken   string
	// LogPath receives the process's output.
	LogPath string
	// Grace is the time between SIGINT and SIGKILL; default DefaultGrace.
	Grace time.Duration
	// Started, if set, is called with the process's PID once it runs;
	// Exited with its exit code (-1 for a signal) and how long it ran.
	Started func(pid int)
	Exited  func(code int, ran time.Duration)
}

// Args is the command line Run starts (without the binary).
func Args(s Spec) []string {
	dest := "tcp://" + s.StreamAddr
	if len(s.StreamOptions) > 0 {
		dest += "?" + s.StreamOptions.Encode()
	}
	return []string{"load", "--spec", s.SpecFile, "--shard", s.Shard.String(), "--results", dest}
}

// Run runs the shard to its end. Cancelling ctx sends the process SIGINT
// and SIGKILL to its group Grace later. The error is nil when it ended by
// itself with exit 0, or after cancel with its stream ended (exit 0 or
// 130); otherwise it says how it ended, with the end of its log.
func Run(ctx context.Context, s Spec) error {
	if s.Binary == "" || s.SpecFile == "" || s.StreamAddr == "" {
		return errors.New("nativerun: Spec needs Binary, SpecFile and StreamAddr")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("not started: %w", err)
	}
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	cmd := exec.Command(s.Binary, Args(s)...)
	cmd.Env = append(os.Environ(), TokenEnv+"="+s.StreamToken)
	if s.LogPath != "" {
		f, err := os.Create(s.LogPath)
		if err != nil {
			return fmt.Errorf("load log: %w", err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	// Its own process group, so that a stop reaches all of it; on Linux the
	// kernel kills it if the harness dies, even by SIGKILL.
	cmd.SysProcAttr = childproc.Attr()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s load: %w", s.Binary, err)
	}
	pid := cmd.Process.Pid
	if s.Started != nil {
		s.Started(pid)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	cancelled, killed := false, false
	select {
	case <-done:
	case <-ctx.Done():
		cancelled = true
		_ = syscall.Kill(pid, syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(grace):
			killed = true
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-done
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // anything left in its group
	if s.Exited != nil {
		s.Exited(cmd.ProcessState.ExitCode(), time.Since(start))
	}
	return ended(cmd.ProcessState, pid, time.Since(start), cancelled, killed, grace, s.LogPath)
}

// ended says how the process ended: nil for a clean end.
func ended(ps *os.ProcessState, pid int, took time.Duration, cancelled, killed bool, grace time.Duration, logPath string) error {
	took = took.Round(time.Millisecond)
	code := ps.ExitCode()
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case killed:
		return fmt.Errorf("chaosrun load (pid %d) did not stop within %s of SIGINT and was killed%s", pid, grace, tail(logPath))
	case ws.Signaled():
		return fmt.Errorf("chaosrun load (pid %d) was killed by signal %v after %s%s", pid, ws.Signal(), took, tail(logPath))
	case code == 0 || (cancelled && code == exitInterrupted):
		return nil
	}
	return fmt.Errorf("chaosrun load (pid %d) exited with code %d after %s%s", pid, code, took, tail(logPath))
}

// tail quotes the last lines of the log (of its last 16 KiB) for an
// error message.
func tail(logPath string) string {
	f, err := os.Open(logPath)
	if logPath == "" || err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > tailBytes {
		_, _ = f.Seek(-tailBytes, io.SeekEnd)
	}
	b, _ := io.ReadAll(io.LimitReader(f, tailBytes))
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return " (it printed nothing)"
	}
	lines := strings.Split(string(b), "\n")
	lines = lines[max(len(lines)-tailLines, 0):]
	return "; its output ends:\n    " + strings.Join(lines, "\n    ")
}
