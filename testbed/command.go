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

// startService starts one instance of a built-in target through
// `chaosrun serve`, which picks its own port and says it on its ready line.
// A command: service starts through commandInstance.
func (l *Local) startService(ctx context.Context, inst string, svc *scenario.Service, deps map[string][]string) (*process, error) {
	switch {
	case len(svc.Command) > 0:
		return nil, fmt.Errorf("testbed: %s: a command: service starts through commandInstance", inst)
	case svc.Image != "":
		return nil, fmt.Errorf("testbed: local: service %s names only an image (%s): run it with --testbed docker, or give it command: for the local testbed", inst, svc.Image)
	}
	// A built-in target picks its own port: validation refuses {port} in
	// its env.
	env, err := userEnv(svc, scenario.TemplateVars{Instance: inst, Deps: deps})
	if err != nil {
		return nil, fmt.Errorf("testbed: %s: %w", inst, err)
	}
	return l.start(ctx, inst, ServeArgs(svc, "127.0.0.1:0", deps), env)
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

// portAttempts is how many ports a command: service's program is started
// on before its start fails: another is tried when someone else listens on
// the one it was given.
const portAttempts = 3

// commandInstance starts the user's program (command:) on a port picked
// for it and waits until it is healthy there; the process is watched from
// then on. The port is held for the program until it listens (pickPort);
// when the listener that answered is not the program's, or the program
// ended because someone else took the port, it starts again on another.
// A program that ends before it is healthy while its port was held may
// not allow address reuse: it starts again on a port that is not held.
func (l *Local) commandInstance(ctx context.Context, inst string, svc *scenario.Service, deps map[string][]string) (*process, error) {
	hold := true
	var errs []error
	for range portAttempts {
		p, err := l.tryCommand(ctx, inst, svc, deps, hold)
		var retry *retryPortError
		if !errors.As(err, &retry) {
			return p, err
		}
		hold = hold && !retry.unheld
		errs = append(errs, retry.err)
	}
	return nil, fmt.Errorf("testbed: %s: no port of its own in %d tries: %w", inst, portAttempts, errors.Join(errs...))
}

// retryPortError is a start that failed for its port: try another
// (unheld: one that is not held).
type retryPortError struct {
	err    error
	unheld bool
}

func (e *retryPortError) Error() string { return e.err.Error() }

// tryCommand is one start of commandInstance, on a port held for the
// program when hold. A failed start is stopped and forgotten.
func (l *Local) tryCommand(ctx context.Context, inst string, svc *scenario.Service, deps map[string][]string, hold bool) (*process, error) {
	res, err := pickPort(hold)
	if err != nil {
		return nil, fmt.Errorf("testbed: %s: no free port: %w", inst, err)
	}
	defer res.release()
	if afterPortPicked != nil {
		afterPortPicked(res.port)
	}
	p, err := l.startCommand(ctx, inst, svc, deps, res.port)
	if err != nil {
		return nil, err
	}
	if err = l.commandHealthy(ctx, p, inst, svc, deps, res); err != nil {
		p.stop(stopGrace) //nolint:errcheck // the start's error matters more
		l.forget(p)
		return nil, err
	}
	l.watch(p)
	return p, nil
}

// afterPortPicked, when set (by tests), is called with each port picked
// for a program before the program starts.
var afterPortPicked func(port int)

// commandHealthy waits until p, started on res's port, is healthy there
// and is what listens on it. The error is a *retryPortError when the port
// is the cause: someone else listens on it, or p ended while it was held.
func (l *Local) commandHealthy(ctx context.Context, p *process, inst string, svc *scenario.Service, deps map[string][]string, res reservation) error {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done: // a program that ended is not waited for
			cancel()
		case <-hctx.Done():
		}
	}()
	vars := scenario.TemplateVars{Port: res.port, Instance: inst, Deps: deps}
	err := waitHealth(hctx, p.addr, svc.Health, vars, l.ReadyTimeout)
	if ctx.Err() != nil {
		return fmt.Errorf("testbed: starting %s: %w", inst, ctx.Err())
	}
	owned, known := portOwned(res.port, p.cmd.Process.Pid)
	switch {
	case known && !owned:
		return &retryPortError{err: fmt.Errorf("testbed: %s: another process listens on %s, the port picked for it", inst, p.addr)}
	case err == nil:
		return nil
	case p.hasExited() && res.held:
		return &retryPortError{err: fmt.Errorf("testbed: %s exited before it was healthy (%v), perhaps refusing port %d, held for it with address reuse%s", inst, p.exitErr, res.port, p.tail()), unheld: true}
	case p.hasExited():
		return fmt.Errorf("testbed: %s exited before it was healthy (%v)%s", inst, p.exitErr, p.tail())
	}
	return fmt.Errorf("testbed: %s not healthy (%s): %w%s", inst, healthName(svc.Health), err, p.tail())
}

// startCommand runs the user's program, told to listen on port; it is
// ready when its health answers (commandHealthy), not on a ready line.
// Down stops it; nothing reports its death until watch.
func (l *Local) startCommand(ctx context.Context, inst string, svc *scenario.Service, deps map[string][]string, port int) (*process, error) {
	l.mu.Lock()
	down := l.down
	l.mu.Unlock()
	if down {
		return nil, errors.New("testbed: already torn down")
	}
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
	l.track(p)
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
