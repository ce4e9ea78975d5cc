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

	done     chan struct{} // closed when the process has exited
	exitErr  error
	stopping sync.Once
	stopped  chan struct{} // closed when Down asked it to stop
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
		p.close()
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
	var err error
	p.stopping.Do(func() {
		close(p.stopped)
		pgid := p.cmd.Process.Pid
		select {
		case <-p.done:
		default:
			syscall.Kill(-pgid, syscall.SIGTERM) //nolint:errcheck // it may be gone already
			select {
			case <-p.done:
			case <-time.After(grace):
				syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck
				select {
				case <-p.done:
				case <-time.After(5 * time.Second):
					err = fmt.Errorf("testbed: %s (pid %d) did not exit after SIGKILL", p.name, pgid)
				}
			}
		}
		// Stragglers of the group (if the child started any) go too.
		syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck
		p.close()
	})
	return err
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
