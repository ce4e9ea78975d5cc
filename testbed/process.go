package testbed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chaosrun/chaosrun/internal/childproc"
)

// readyPrefix is what every `chaosrun serve` prints once it listens.
const readyPrefix = "listening on http://"

// process is one child started by the local testbed, in its own process
// group so that stopping it stops everything it started.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	addr    string

	done      chan struct{} // closed when the process has exited
	exitErr   error
	stopping  sync.Once
	stopped   chan struct{} // closed when Down asked it to stop
	closeOnce sync.Once
}

// startProcess runs bin with args, waits for its ready line and returns it
// with the address it listens on.
func startProcess(ctx context.Context, name, bin string, args, env []string, logPath string, readyTimeout time.Duration) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testbed: log for %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logf
	// If the harness itself dies (even by SIGKILL), the kernel kills the
	// child (on Linux): nothing outlives the run.
	cmd.SysProcAttr = childproc.Attr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("testbed: %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("testbed: start %s (%s %s): %w", name, bin, strings.Join(args, " "), err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, log: logf, done: make(chan struct{}), stopped: make(chan struct{})}

	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent && strings.HasPrefix(line, readyPrefix) {
				ready <- strings.TrimPrefix(line, readyPrefix)
				sent = true
				continue
			}
			fmt.Fprintln(logf, line)
		}
		io.Copy(logf, stdout) //nolint:errcheck // best effort after a scan error
	}()
	go func() {
		p.exitErr = cmd.Wait()
		close(p.done)
	}()

	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case addr := <-ready:
		p.addr = addr
		return p, nil
	case <-p.done:
		err := fmt.Errorf("testbed: %s exited before it was ready (%v)%s", name, p.exitErr, p.tail())
		p.closeOnce.Do(p.close)
		return nil, err
	case <-timer.C:
		p.stop(2 * time.Second)
		return nil, fmt.Errorf("testbed: %s printed no %q line within %s%s", name, readyPrefix, readyTimeout, p.tail())
	case <-ctx.Done():
		p.stop(2 * time.Second)
		return nil, fmt.Errorf("testbed: starting %s: %w", name, ctx.Err())
	}
}

// stop asks the process group to terminate and kills it after grace.
func (p *process) stop(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace+killWait)
	defer cancel()
	return stopAll(ctx, []*process{p}, grace)
}

// killWait is how long a process may take to go after SIGKILL.
const killWait = 5 * time.Second

// terminate marks the process as asked to stop and sends its group
// SIGTERM; kill sends SIGKILL. Both are harmless once it has gone.
func (p *process) terminate() {
	p.stopping.Do(func() { close(p.stopped) })
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM) //nolint:errcheck // it may be gone already
}

func (p *process) kill() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) } //nolint:errcheck // idem

// exited waits until the process has exited (true) or until t (false).
func (p *process) exited(t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-timer.C:
		return false
	}
}

// hasExited says whether the process has exited, without waiting.
func (p *process) hasExited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stopAll stops processes in the given order: each gets SIGTERM and up to
// grace to exit, in turn; whatever still runs when the graces or ctx's
// deadline (less a moment for the kill) run out gets SIGKILL, all at once.
// It returns by ctx's deadline, naming what did not exit.
func stopAll(ctx context.Context, procs []*process, grace time.Duration) error {
	end, ok := ctx.Deadline()
	if !ok {
		end = time.Now().Add(time.Duration(len(procs))*grace + killWait)
	}
	killAt := end.Add(-min(killWait, time.Until(end)/4))
	for _, p := range procs {
		p.terminate()
		p.exited(minTime(time.Now().Add(grace), killAt))
	}
	for _, p := range procs {
		p.kill() // stragglers of the group (whatever the process started) go too
	}
	var errs []error
	for _, p := range procs {
		if !p.exited(end) {
			errs = append(errs, fmt.Errorf("testbed: %s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid))
		}
		p.closeOnce.Do(p.close)
	}
	return errors.Join(errs...)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (p *process) close() { p.log.Close() }

// exitedUnexpectedly reports whether the process ended before stop was called.
func (p *process) exitedUnexpectedly() bool {
	select {
	case <-p.stopped:
		return false
	default:
		return true
	}
}

// tail returns the last lines of the process's log, for error messages.
func (p *process) tail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return "\n  last log lines of " + p.name + ":\n    " + strings.Join(lines, "\n    ")
}

var errNotReady = errors.New("not ready")
