package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// readyPrefix is what the bench's server and every `chaosrun serve` print
// once they listen.
const readyPrefix = "listening on http://"

// Bounds on child processes.
const (
	readyTimeout = 15 * time.Second
	stopGrace    = 3 * time.Second
)

// proc is a long-running child (a server) in its own process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	// Addr is the host:port from its ready line.
	Addr string
	log  *tailBuf
	done chan struct{}
	once sync.Once
}

// startServer runs bin with args and waits for its "listening on http://"
// line. The child dies with the bench (Pdeathsig) and Stop ends it by PID.
func startServer(ctx context.Context, name, bin string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &proc{name: name, cmd: cmd, log: &tailBuf{max: 8 << 10}, done: make(chan struct{})}
	cmd.Stderr = p.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), readyPrefix); ok {
				select {
				case ready <- a:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case p.Addr = <-ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before listening: %s", name, p.log.String())
	case <-t.C:
		p.Stop()
		return nil, fmt.Errorf("%s: no ready line within %s: %s", name, readyTimeout, p.log.String())
	case <-ctx.Done():
		p.Stop()
		return nil, ctx.Err()
	}
}

// URL is the child's base URL.
func (p *proc) URL() string { return "http://" + p.Addr }

// Stop sends SIGTERM to the child's process group, SIGKILL after stopGrace,
// and waits for it.
func (p *proc) Stop() {
	p.once.Do(func() {
		pid := p.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-p.done
		}
	})
}

// runResult is how a bounded command ended.
type runResult struct {
	Out    []byte
	Code   int
	CPU    time.Duration
	Wall   time.Duration
	MaxRSS int64 // KiB
}

// runCmd runs a command to its end within limit, in its own process group
// (killed as a group on timeout), and returns its stdout and stderr
// together. A non-zero exit is not an error; failing to start or the
// timeout is.
func runCmd(ctx context.Context, limit time.Duration, dir string, env []string, name string, args ...string) (runResult, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	res := runResult{Out: out.Bytes(), Wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		res.CPU = ps.UserTime() + ps.SystemTime()
		res.Code = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSS = ru.Maxrss
		}
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%s %s: stopped after %s: %w; output ends: %s", name, strings.Join(args, " "), limit, ctx.Err(), lastLines(out.String(), 10))
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// lastLines returns up to n last lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// tailBuf keeps the last max bytes written to it.
type tailBuf struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuf) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuf) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// goBuild builds a Go package of the module in modDir into out. A pinned
// tools module (under tools/) builds with GOWORK=off: the repository's
// go.work is the harness's.
func goBuild(ctx context.Context, modDir, out, pkg string) error {
	var env []string
	if filepath.Base(filepath.Dir(modDir)) == "tools" {
		env = []string{"GOWORK=off"}
	}
	res, err := runCmd(ctx, 10*time.Minute, modDir, env, "go", "build", "-o", out, pkg)
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return fmt.Errorf("go build %s (in %s) failed:\n%s", pkg, filepath.Base(modDir), lastLines(string(res.Out), 20))
	}
	return nil
}

// lookWrk finds wrk on PATH, with install advice when it is missing.
func lookWrk() (string, error) {
	p, err := exec.LookPath("wrk")
	if err != nil {
		return "", errors.New("wrk not found on PATH: install it with `scripts/install-deps.sh --bench` (Debian package wrk)")
	}
	return p, nil
}
