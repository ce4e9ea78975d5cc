// Package k6run runs k6 as a child process: in its own process group,
// streaming to the harness, stopped gracefully on cancel and never left
// running.
package k6run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chaosrun/chaosrun/internal/childproc"
)

// Grace is how long k6 has after SIGINT before its process group is killed.
const Grace = 5 * time.Second

// ExitThresholdsFailed is k6's exit code when thresholds were crossed.
const ExitThresholdsFailed = 99

// Limits on the kept output tail.
const (
	tailBytes = 64 << 10
	tailLines = 30
)

// Spec says how to run k6.
type Spec struct {
	// Binary is the k6 executable (see k6build.Ensure).
	Binary string
	// Script is the JavaScript file to run.
	Script string
	// Env is passed to the script as -e K=V (__ENV).
	Env map[string]string
	// StreamAddr, if set, adds --out resilience=tcp://StreamAddr.
	StreamAddr string
	// StreamOptions are the output's options, added to the --out URL as
	// its query (tls, ca, server_name).
	StreamOptions url.Values
	// StreamToken, if set, is given to the output as K6_RESILIENCE_TOKEN,
	// in k6's environment rather than on its command line.
	StreamToken string
	// LogPath, if set, receives k6's stdout and stderr.
	LogPath string
	// Dir is k6's working folder; default the current one.
	Dir string
	// Duration, when set, runs the script for this long (--duration): for
	// a script without a schedule of its own.
	Duration time.Duration
	// Outputs are more k6 outputs (--out each) beside the results stream.
	Outputs []string
	// SummaryPath, if set, receives k6's stdout: its end-of-test summary
	// (or what the script's handleSummary prints).
	SummaryPath string
	// SummaryExport, if set, is where k6 writes its summary as JSON.
	SummaryExport string
	// Extra are more arguments for `k6 run`, before the script.
	Extra []string
	// Started, if set, is called with k6's PID once it runs.
	Started func(pid int)
}

// Result is how a k6 run ended.
type Result struct {
	ExitCode int
	// ThresholdsFailed is true when k6 exited 99: the run completed but a
	// threshold was crossed.
	ThresholdsFailed bool
	// Tail is the last lines of k6's output.
	Tail     string
	Duration time.Duration
	// PID is k6's process id.
	PID int
}

// Args returns the command line Run passes to k6 (without the binary).
func Args(s Spec) []string {
	args := []string{"run", "--quiet", "--no-usage-report", "--no-color", "--address", ""}
	for _, k := range sortedKeys(s.Env) {
		args = append(args, "-e", k+"="+s.Env[k])
	}
	if s.Duration > 0 {
		args = append(args, "--duration", s.Duration.String())
	}
	if s.StreamAddr != "" {
		out := "resilience=tcp://" + s.StreamAddr
		if len(s.StreamOptions) > 0 {
			out += "?" + s.StreamOptions.Encode()
		}
		args = append(args, "--out", out)
	}
	for _, o := range s.Outputs {
		args = append(args, "--out", o)
	}
	if s.SummaryExport != "" {
		args = append(args, "--summary-export", s.SummaryExport)
	}
	args = append(args, s.Extra...)
	return append(args, s.Script)
}

// Run runs k6 to its end. Cancelling ctx sends k6 SIGINT (its graceful
// stop) and SIGKILL to its process group Grace later. The error is nil for
// exit 0 and 99 (see Result.ThresholdsFailed); otherwise it says how k6
// ended (exit code, signal, or ctx's error) with the output's tail.
// Started is called, if non-nil, with k6's PID once it runs.
func Run(ctx context.Context, s Spec) (Result, error) {
	return run(ctx, s, nil)
}

// RunNotify is Run with a callback that receives k6's PID once it started.
func RunNotify(ctx context.Context, s Spec, started func(pid int)) (Result, error) {
	return run(ctx, s, started)
}

func run(ctx context.Context, s Spec, started func(pid int)) (Result, error) {
	if s.Binary == "" || s.Script == "" {
		return Result{}, errors.New("k6run: Spec needs Binary and Script")
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("k6run: not started: %w", err)
	}
	tail := &ring{max: tailBytes}
	stdout, stderr, closeOut, err := outputs(s, tail)
	if err != nil {
		return Result{}, err
	}
	defer closeOut()
	cmd := exec.Command(s.Binary, Args(s)...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	if s.StreamToken != "" {
		cmd.Env = append(cmd.Env, "K6_RESILIENCE_TOKEN="+s.StreamToken)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// If the harness is killed, k6 dies with it (on Linux).
	cmd.SysProcAttr = childproc.Attr()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("k6run: start %s: %w", s.Binary, err)
	}
	pid := cmd.Process.Pid
	if s.Started != nil {
		s.Started(pid)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var werr error
	cancelled := false
	select {
	case werr = <-done:
	case <-ctx.Done():
		cancelled = true
		_ = syscall.Kill(pid, syscall.SIGINT)
		select {
		case werr = <-done:
		case <-time.After(Grace):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			werr = <-done
		}
	}
	// Anything k6 left in its group goes with it.
	_ = syscall.Kill(-pid, syscall.SIGKILL)

	res := Result{Duration: time.Since(start), Tail: tail.lastLines(tailLines), PID: pid}
	state := cmd.ProcessState
	res.ExitCode = state.ExitCode()
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = -1
		if !cancelled {
			return res, fmt.Errorf("k6 (pid %d) was killed by signal %v after %s%s",
				pid, ws.Signal(), res.Duration.Round(time.Millisecond), outputEnds(res.Tail))
		}
	}
	if cancelled {
		return res, fmt.Errorf("k6 (pid %d) stopped early: %w", pid, ctx.Err())
	}
	switch {
	case werr == nil:
		return res, nil
	case res.ExitCode == ExitThresholdsFailed:
		res.ThresholdsFailed = true
		return res, nil
	default:
		return res, fmt.Errorf("k6 (pid %d) exited with code %d after %s%s",
			pid, res.ExitCode, res.Duration.Round(time.Millisecond), outputEnds(res.Tail))
	}
}

// outputs are where k6's stdout and stderr go: both to the tail and the
// log, stdout (the summary) also to the summary file.
func outputs(s Spec, tail *ring) (stdout, stderr io.Writer, closeAll func(), err error) {
	var files []*os.File
	closeAll = func() {
		for _, f := range files {
			f.Close()
		}
	}
	create := func(path, what string) (*os.File, error) {
		f, err := os.Create(path)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("k6run: k6 %s: %w", what, err)
		}
		files = append(files, f)
		return f, nil
	}
	stdout, stderr = tail, tail
	if s.LogPath != "" {
		f, err := create(s.LogPath, "log")
		if err != nil {
			return nil, nil, nil, err
		}
		stdout, stderr = io.MultiWriter(f, tail), io.MultiWriter(f, tail)
	}
	if s.SummaryPath != "" {
		f, err := create(s.SummaryPath, "summary")
		if err != nil {
			return nil, nil, nil, err
		}
		stdout = io.MultiWriter(f, stdout)
	}
	return stdout, stderr, closeAll, nil
}

// outputEnds quotes the end of k6's output for an error message.
func outputEnds(tail string) string {
	if strings.TrimSpace(tail) == "" {
		return " (it printed nothing)"
	}
	return "; output ends:\n" + tail
}

// ring keeps the last max bytes written to it.
type ring struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	if over := len(r.buf) - r.max; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	return len(p), nil
}

// lastLines returns up to n last lines.
func (r *ring) lastLines(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(r.buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
