package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chaosrun/chaosrun/internal/childproc"
	"github.com/chaosrun/chaosrun/scenario"
)

// startService starts one instance: a built-in target through `chaosrun
// serve`, or the user's own program (command:) on a port picked here.
func (l *Local) startService(ctx context.Context, inst string, svc *scenario.Service, deps map[string][]string) (*process, error) {
	switch {
	case len(svc.Command) > 0:
		return l.startCommand(ctx, inst, svc, deps)
	case svc.Image != "":
		return nil, fmt.Errorf("testbed: local: service %s names only an image (%s): run it with --testbed docker, or give it command: for the local testbed", inst, svc.Image)
	}
	// A built-in target picks its own port: validation refuses {port} in
	// its env.
	env, err := userEnv(svc, scenario.TemplateVars{Instance: inst, Deps: deps})
	if err != nil {
		return nil, fmt.Errorf("testbed: %s: %w", inst, err)
	}
	return l.start(ctx, inst, serveArgs(svc, deps), env)
}

// userEnv expands the service's env: as KEY=VALUE, sorted.
func userEnv(svc *scenario.Service, vars scenario.TemplateVars) ([]string, error) {
	var env []string
	for k, v := range svc.Env {
		val, err := scenario.Expand(v, vars)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		env = append(env, k+"="+val)
	}
	sort.Strings(env)
	return env, nil
}

// commandArgs expands the templates of a command and builds the
// environment that tells the program its port, dependencies and config
// (CHAOSRUN_*), then the service's own env:, which wins.
func commandArgs(inst string, svc *scenario.Service, deps map[string][]string, port int) (args, env []string, err error) {
	vars := scenario.TemplateVars{Port: port, Instance: inst, Deps: deps}
	if args, err = scenario.ExpandAll(svc.Command, vars); err != nil {
		return nil, nil, fmt.Errorf("command: %w", err)
	}
	p := strconv.Itoa(port)
	env = []string{"CHAOSRUN_INSTANCE=" + inst, "CHAOSRUN_PORT=" + p}
	for d, addrs := range deps {
		env = append(env, "CHAOSRUN_DEP_"+envKey(d)+"="+strings.Join(addrs, ","))
	}
	for k, v := range svc.Config {
		env = append(env, "CHAOSRUN_CONFIG_"+envKey(k)+"="+v)
	}
	sort.Strings(env)
	own, err := userEnv(svc, vars)
	if err != nil {
		return nil, nil, err
	}
	return args, append(env, own...), nil
}

func envKey(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}

// startCommand runs the user's program on a free 127.0.0.1 port; it is
// ready when its health answers (waitService), not on a ready line.
func (l *Local) startCommand(ctx context.Context, inst string, svc *scenario.Service, deps map[string][]string) (*process, error) {
	l.mu.Lock()
	down := l.down
	l.mu.Unlock()
	if down {
		return nil, errors.New("testbed: already torn down")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testbed: %s: no free port: %w", inst, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	args, env, err := commandArgs(inst, svc, deps, port)
	if err != nil {
		return nil, fmt.Errorf("testbed: %s: %w", inst, err)
	}
	bin, err := exec.LookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("testbed: %s: command %q: %w", inst, args[0], err)
	}
	logPath := filepath.Join(l.LogDir, logName(inst))
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testbed: log for %s: %w", inst, err)
	}
	cmd := l.supervised(bin, args[1:])
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("testbed: start %s (%s): %w", inst, strings.Join(args, " "), err)
	}
	p := &process{name: inst, cmd: cmd, logPath: logPath, log: logf, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		p.exitErr = cmd.Wait()
		close(p.done)
	}()
	l.mu.Lock()
	l.procs = append(l.procs, p)
	died := l.died
	l.mu.Unlock()
	go func() {
		<-p.done
		if p.exitedUnexpectedly() {
			select {
			case died <- fmt.Errorf("testbed: %s (pid %d) exited during the run: %v%s", p.name, p.cmd.Process.Pid, p.exitErr, p.tail()):
			default:
			}
		}
	}()
	return p, nil
}

// supervised is the command that runs the user's program in a process
// group of its own: through `chaosrun supervise`, which ends the whole
// group — whatever the program started too — when the harness stops it or
// dies. Without a chaosrun binary the program runs directly, and only it
// dies with the harness.
func (l *Local) supervised(bin string, args []string) *exec.Cmd {
	if l.Binary == "" {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = childproc.Attr()
		return cmd
	}
	cmd := exec.Command(l.Binary, append([]string{SuperviseCommand, "--", bin}, args...)...)
	// SIGTERM, not SIGKILL: the supervisor must outlive the harness for a
	// moment to end the group.
	cmd.SysProcAttr = childproc.AttrSignal(true, syscall.SIGTERM)
	return cmd
}

// waitService waits for an instance's health: an HTTP path, or "tcp" (the
// port accepts a connection).
func waitService(ctx context.Context, addr, health string, timeout time.Duration) error {
	if health != scenario.HealthTCP {
		return waitHTTP(ctx, "http://"+addr+health, timeout)
	}
	return waitTCP(ctx, addr, timeout)
}

// waitTCP waits until addr accepts a connection.
func waitTCP(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		d := net.Dialer{Timeout: time.Second}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
