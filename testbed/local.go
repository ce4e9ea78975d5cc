package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/internal/logs"
	"github.com/chaosrun/chaosrun/scenario"
)

// Local runs every service as a child process on 127.0.0.1, with ports the
// kernel picks, behind an embedded Toxiproxy (`chaosrun serve toxiproxy`).
type Local struct {
	// Binary is the chaosrun executable whose `serve` runs the targets.
	Binary string
	// LogDir receives one log file per process.
	LogDir string
	// Seed seeds Toxiproxy's random choices.
	Seed int64
	// ReadyTimeout bounds each service's start-up; default 15s.
	ReadyTimeout time.Duration

	mu    sync.Mutex
	procs []*process
	died  chan error
	down  bool
}

// Name returns "local".
func (l *Local) Name() string { return "local" }

// Up starts Toxiproxy, then each service after its dependencies, each
// dependency edge through its own proxy.
func (l *Local) Up(ctx context.Context, sc *scenario.Scenario) (topo *Topology, err error) {
	if l.Binary == "" {
		return nil, errors.New("testbed: local: no chaosrun binary to run the services with")
	}
	if l.ReadyTimeout == 0 {
		l.ReadyTimeout = 15 * time.Second
	}
	if err := os.MkdirAll(l.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("testbed: log dir: %w", err)
	}
	l.mu.Lock()
	l.died = make(chan error, 16)
	l.mu.Unlock()
	defer func() {
		if err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), downAfterFailedUp)
			defer cancel()
			l.Down(dctx) //nolint:errcheck // the start-up error matters more
		}
	}()

	toxiArgs := []string{"serve", "toxiproxy", "--listen", "127.0.0.1:0", "--seed", strconv.FormatInt(l.Seed, 10)}
	if sc.NeedsStage(scenario.StageHTTP) {
		toxiArgs = append(toxiArgs, "--http-stage") // an HTTP stage behind every proxy
	}
	// The API wants the run's token even on loopback, so that no other
	// process of this machine changes the faults behind the run's back; the
	// harness sends it as the URL's password.
	token := guard.NewToken()
	toxi, err := l.start(ctx, "toxiproxy", toxiArgs, []string{"GODEBUG=randseednop=0", guard.AdminTokenEnv + "=" + token})
	if err != nil {
		return nil, err
	}
	topo = &Topology{Proxies: map[string]string{}, ToxiproxyURL: "http://:" + token + "@" + toxi.addr, ToxiproxyPID: toxi.cmd.Process.Pid, Died: l.died}
	if err := waitHTTP(ctx, topo.ToxiproxyURL+"/version", l.ReadyTimeout); err != nil {
		return nil, fmt.Errorf("testbed: toxiproxy not ready: %w", err)
	}

	addrs := map[string][]string{} // service → instance addresses
	edges := sc.Edges()
	for _, name := range sc.StartOrder() {
		svc := sc.Services[name]
		if svc.ByName() {
			return nil, fmt.Errorf("testbed: local: service %s comes from a Compose file: run it with --testbed docker", name)
		}
		if svc.External != "" {
			in, err := l.external(ctx, topo, name, svc)
			if err != nil {
				return nil, err
			}
			addrs[name] = []string{svc.External}
			topo.Instances = append(topo.Instances, in)
			continue
		}
		deps := map[string][]string{}
		for _, e := range edges {
			if e.From != name {
				continue
			}
			upstream := addrs[e.To][e.Replica]
			listen, err := createProxy(ctx, topo.ToxiproxyURL, e.Proxy, upstream)
			if err != nil {
				return nil, err
			}
			topo.Proxies[e.Proxy] = listen
			deps[e.To] = append(deps[e.To], listen)
		}
		for i := range max(svc.Replicas, 1) {
			in, err := l.instance(ctx, sc, name, i, deps)
			if err != nil {
				return nil, err
			}
			addrs[name] = append(addrs[name], in.Address)
			topo.Instances = append(topo.Instances, in)
		}
	}
	return topo, nil
}

// instance starts replica i of a service and waits until it is healthy.
func (l *Local) instance(ctx context.Context, sc *scenario.Scenario, name string, i int, deps map[string][]string) (Instance, error) {
	svc := sc.Services[name]
	inst := sc.InstanceName(name, i)
	if len(svc.Command) > 0 {
		p, err := l.commandInstance(ctx, inst, svc, deps)
		if err != nil {
			return Instance{}, err
		}
		host, port := splitAddr(p.addr)
		return Instance{Service: name, Index: i, Name: inst, Address: p.addr, PID: p.cmd.Process.Pid, Metrics: MetricsURL(svc, host, port)}, nil
	}
	p, err := l.startService(ctx, inst, svc, deps)
	if err != nil {
		return Instance{}, err
	}
	host, port := splitAddr(p.addr)
	vars := scenario.TemplateVars{Port: port, Instance: inst, Deps: deps}
	if err := waitHealth(ctx, p.addr, svc.Health, vars, l.ReadyTimeout); err != nil {
		return Instance{}, fmt.Errorf("testbed: %s not healthy (%s): %w%s", inst, healthName(svc.Health), err, p.tail())
	}
	return Instance{Service: name, Index: i, Name: inst, Address: p.addr, PID: p.cmd.Process.Pid, Metrics: MetricsURL(svc, host, port)}, nil
}

// external waits until an already-running service is healthy and puts a
// proxy (workload->NAME) in front of it: load reaches it through that.
func (l *Local) external(ctx context.Context, topo *Topology, name string, svc *scenario.Service) (Instance, error) {
	host, port := splitAddr(svc.External)
	vars := scenario.TemplateVars{Port: port, Instance: name}
	if err := waitHealth(ctx, svc.External, svc.Health, vars, l.ReadyTimeout); err != nil {
		return Instance{}, fmt.Errorf("testbed: external service %s at %s not healthy (%s): %w", name, svc.External, healthName(svc.Health), err)
	}
	proxy := scenario.LoadName + "->" + name
	listen, err := createProxy(ctx, topo.ToxiproxyURL, proxy, svc.External)
	if err != nil {
		return Instance{}, err
	}
	topo.Proxies[proxy] = listen
	return Instance{Service: name, Name: name, Address: listen, Metrics: MetricsURL(svc, host, port)}, nil
}

// ServeArgs builds `serve RUN --listen LISTEN --dep … --key=value` for a
// service of a reference target: its dependencies and its configuration
// in name order. Every testbed starts targets with these arguments.
func ServeArgs(svc *scenario.Service, listen string, deps map[string][]string) []string {
	args := []string{"serve", svc.Run, "--listen", listen}
	depNames := make([]string, 0, len(deps))
	for d := range deps {
		depNames = append(depNames, d)
	}
	sort.Strings(depNames)
	for _, d := range depNames {
		args = append(args, "--dep", d+"="+strings.Join(deps[d], ","))
	}
	keys := make([]string, 0, len(svc.Config))
	for k := range svc.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--"+k+"="+svc.Config[k])
	}
	return args
}

func (l *Local) start(ctx context.Context, name string, args, env []string) (*process, error) {
	l.mu.Lock()
	if l.down {
		l.mu.Unlock()
		return nil, errors.New("testbed: already torn down")
	}
	l.mu.Unlock()
	p, err := startProcess(ctx, name, l.Binary, args, env, filepath.Join(l.LogDir, logName(name)), l.ReadyTimeout)
	if err != nil {
		return nil, err
	}
	l.watch(p)
	logs.From(ctx).Debug("process started", "name", name, "pid", p.cmd.Process.Pid, "log", p.logPath)
	return p, nil
}

// track keeps p for Down.
func (l *Local) track(p *process) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.procs, p) {
		l.procs = append(l.procs, p)
	}
}

// forget lets go of p, stopped already: Down neither stops it nor checks
// its port (which another process may hold now).
func (l *Local) forget(p *process) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.procs = slices.DeleteFunc(l.procs, func(q *process) bool { return q == p })
}

// watch keeps p for Down and reports on Died when it exits before Down
// stopped it: the one crashed-process watcher of the local testbed.
func (l *Local) watch(p *process) {
	l.track(p)
	l.mu.Lock()
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
}

func logName(name string) string {
	return strings.NewReplacer("/", "_", ">", "", " ", "_").Replace(name) + ".log"
}

// Down stops every process in reverse start order, each with a grace after
// SIGTERM, killing whatever is left by ctx's deadline (which it holds), and
// checks that none of their ports still listens.
func (l *Local) Down(ctx context.Context) error {
	l.mu.Lock()
	l.down = true
	procs := l.procs
	l.procs = nil
	l.mu.Unlock()
	// Dependents first: the reverse of start order.
	slices.Reverse(procs)
	errs := []error{stopAll(ctx, procs, stopGrace)}
	for _, p := range procs {
		if p.addr == "" {
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		var d net.Dialer
		if c, err := d.DialContext(dctx, "tcp", p.addr); err == nil {
			c.Close()
			errs = append(errs, fmt.Errorf("testbed: %s: %s still listens after teardown", p.name, p.addr))
		}
		cancel()
	}
	return errors.Join(errs...)
}

// stopGrace is how long each process has to exit after SIGTERM.
const stopGrace = 3 * time.Second

// downAfterFailedUp bounds the teardown Up does itself when it fails.
const downAfterFailedUp = 30 * time.Second

// createProxy asks Toxiproxy for a proxy on a kernel-picked port and returns
// the address it listens on.
func createProxy(ctx context.Context, apiURL, name, upstream string) (string, error) {
	body, _ := json.Marshal(map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/proxies", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("testbed: create proxy %s: %w", name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("testbed: create proxy %s → %s: %s: %s", name, upstream, resp.Status, strings.TrimSpace(string(b)))
	}
	var p struct {
		Listen string `json:"listen"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Listen == "" {
		return "", fmt.Errorf("testbed: create proxy %s: unreadable answer %q", name, b)
	}
	return p.Listen, nil
}

// waitHTTP polls url until it answers 200 or timeout passes.
func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	var last error = errNotReady
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("%s answered %s", url, resp.Status)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
