package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/internal/logs"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

// Bounds of teardowns the testbed does by itself: after a failed Up, and
// of one container that failed to start.
const (
	downAfterFailedUp = 30 * time.Second
	removeTimeout     = 10 * time.Second
)

// proxyBasePort is the first port Toxiproxy's proxies listen on inside its
// container (one per edge, in Edges order).
const proxyBasePort = 20000

// Testbed runs each service in its own container on a private network
// ("chaosrun-RUNID"), reachable by its instance name as alias, behind a
// Toxiproxy container with one proxy per edge. The harness reaches the
// services and Toxiproxy's API through ports published on 127.0.0.1; each
// published port is fixed for the run, so it survives a stop and start.
type Testbed struct {
	// Image is the chaosrun image (see ChaosrunImage) that serves the
	// built-in targets and Toxiproxy.
	Image string
	// LogDir receives each container's log at teardown.
	LogDir string
	// Seed seeds Toxiproxy's random choices.
	Seed int64
	// RunID names the run in labels and names; default random.
	RunID string
	// ReadyTimeout bounds each service's start-up; default 20s.
	ReadyTimeout time.Duration
	// Progress, when set, receives one line per image built on demand.
	Progress io.Writer

	mu        sync.Mutex
	cli       *client.Client
	sc        *scenario.Scenario
	netID     string
	netName   string
	nets      []string // every network's ID, the run's own first
	ctrs      []*box
	byName    map[string]*box
	died      chan error
	down      bool
	stopWatch context.CancelFunc
	watchCtx  context.Context // ends when the run's watchers must stop
	watchers  sync.WaitGroup
	// built maps each Compose service with build: to the image the run
	// built for it; builtRefs, createdVolumes are what teardown removes.
	built          map[string]string
	builtRefs      []string
	volumes        runVolumes
	createdVolumes []string
}

// box is one container of the run.
type box struct {
	name     string // instance name ("ledger.1") or "toxiproxy"
	alias    string // network alias
	id       string
	port     int // container port the harness reaches
	hostPort int
	extra    map[int]int // more published ports: container port → host port
	nets     []netAttach
	health   scenario.Health
	token    string

	// restarts: the engine restarts the container when its process dies
	// (a Compose restart policy).
	restarts bool

	mu          sync.Mutex
	expectDown  bool // a host fault stopped or killed it
	reportedDie bool
	crash       *crashState // a host_kill the engine is to recover
	recoveries  []recovery  // the engine's recoveries, in order
}

func (b *box) addr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return "127.0.0.1:" + strconv.Itoa(b.hostPort)
}

// extraAddr is where the harness reaches container port p.
func (b *box) extraAddr(p int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return "127.0.0.1:" + strconv.Itoa(b.extra[p])
}

// readyAddr is addr with the token as basic-auth password, when it has one.
func (b *box) readyAddr() string {
	if b.token == "" {
		return b.addr()
	}
	return ":" + b.token + "@" + b.addr()
}

// Name returns "docker".
func (t *Testbed) Name() string { return "docker" }

// labels are the run labels of every object.
func (t *Testbed) labels(service string) map[string]string {
	l := map[string]string{LabelRun: t.RunID, LabelScenario: t.sc.Name, LabelOwner: Owner()}
	if service != "" {
		l[LabelService] = service
	}
	return l
}

// Up creates the network, starts Toxiproxy, then each service after what
// it depends on (the replicas of one service together), each edge through
// its own proxy. On error everything started is removed.
func (t *Testbed) Up(ctx context.Context, sc *scenario.Scenario) (topo *testbed.Topology, err error) {
	if t.Image == "" {
		return nil, errors.New("testbed: docker: no chaosrun image (build one with `chaosrun images`)")
	}
	if t.ReadyTimeout == 0 {
		t.ReadyTimeout = 20 * time.Second
	}
	if t.RunID == "" {
		b := make([]byte, 4)
		rand.Read(b) //nolint:errcheck // crypto/rand does not fail
		t.RunID = hex.EncodeToString(b)
	}
	if t.LogDir != "" {
		if err := os.MkdirAll(t.LogDir, 0o755); err != nil {
			return nil, fmt.Errorf("testbed: docker: log dir: %w", err)
		}
	}
	cli, err := NewClient(ctx)
	if err != nil {
		return nil, fmt.Errorf("testbed: %w", err)
	}
	t.mu.Lock()
	if t.down {
		t.mu.Unlock()
		cli.Close()
		return nil, errors.New("testbed: docker: already torn down")
	}
	t.cli, t.sc, t.byName, t.died = cli, sc, map[string]*box{}, make(chan error, 16)
	t.built, t.volumes = map[string]string{}, runVolumes{}
	t.mu.Unlock()
	defer t.downIfFailed(ctx, &err)
	if err := t.prepareProject(ctx, sc); err != nil {
		return nil, err
	}
	if err := t.checkImages(ctx, sc); err != nil {
		return nil, err
	}

	w := planWiring(sc, t.RunID, sc.Edges())
	t.netName = w.main
	for _, n := range w.networks() {
		nres, err := cli.NetworkCreate(ctx, n, client.NetworkCreateOptions{Driver: "bridge", Labels: t.labels("")})
		if err != nil {
			return nil, fmt.Errorf("testbed: docker: create network %s: %w", n, err)
		}
		t.mu.Lock()
		if n == w.main {
			t.netID = nres.ID
		}
		t.nets = append(t.nets, nres.ID)
		t.mu.Unlock()
	}
	toxi, err := t.toxiproxy(ctx, sc, w)
	if err != nil {
		return nil, err
	}
	topo = &testbed.Topology{Proxies: map[string]string{}, ToxiproxyURL: toxi.url, Died: t.died}
	if err := t.startAll(ctx, sc, w, toxi, topo); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.mu.Lock()
	t.stopWatch, t.watchCtx = cancel, wctx
	t.mu.Unlock()
	t.watchers.Go(func() { t.watch(wctx) })
	return topo, nil
}

// downIfFailed removes what a failed Up (*err set) started, within
// downAfterFailedUp even when ctx has ended.
func (t *Testbed) downIfFailed(ctx context.Context, err *error) {
	if *err == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), downAfterFailedUp)
	defer cancel()
	t.Down(ctx) //nolint:errcheck // the start-up error matters more
}

// toxi is the run's Toxiproxy container.
type toxi struct {
	*box
	url   string
	token string
	// ips maps each network to Toxiproxy's address on it.
	ips map[string]string
}

// toxiproxy starts the Toxiproxy container on every network of the run.
// Its API listens on every interface of its container, so it wants the
// run's token; the harness sends it as the URL's password.
func (t *Testbed) toxiproxy(ctx context.Context, sc *scenario.Scenario, w *wiring) (*toxi, error) {
	token := guard.NewToken()
	args := []string{"serve", "toxiproxy", "--listen", "0.0.0.0:" + strconv.Itoa(ToxiproxyPort), "--seed", strconv.FormatInt(t.Seed, 10)}
	if sc.NeedsStage(scenario.StageHTTP) {
		args = append(args, "--http-stage") // an HTTP stage behind every proxy, inside the container
	}
	s := spec{name: "toxiproxy", image: t.Image, port: ToxiproxyPort, health: scenario.Health{Check: "/version"}, token: token,
		cmd: args, env: map[string]string{"GODEBUG": "randseednop=0", guard.AdminTokenEnv: token}, nets: w.toxi}
	for _, p := range w.front {
		s.extraPorts = append(s.extraPorts, p)
	}
	s.hostGateway = len(w.front) > 0
	b, err := t.run(ctx, s)
	if err != nil {
		return nil, err
	}
	tx := &toxi{box: b, url: "http://:" + token + "@" + b.addr(), token: token, ips: map[string]string{}}
	if len(w.toxi) > 1 {
		res, err := t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
		if err != nil {
			return nil, fmt.Errorf("testbed: docker: inspect toxiproxy: %w", err)
		}
		for n, ep := range res.Container.NetworkSettings.Networks {
			if ep != nil && ep.IPAddress.IsValid() {
				tx.ips[n] = ep.IPAddress.String()
			}
		}
	}
	return tx, nil
}

// startService creates the proxies of a service's edges and starts its
// replicas; an external service gets the proxy in front of it instead.
func (t *Testbed) startService(ctx context.Context, sc *scenario.Scenario, w *wiring, tx *toxi, topo *testbed.Topology, name string) error {
	svc := sc.Services[name]
	if svc.External != "" {
		in, err := t.external(ctx, w, tx, topo, name, svc)
		if err != nil {
			return err
		}
		topo.Instances = append(topo.Instances, in)
		return nil
	}
	deps := map[string][]string{}
	for i, e := range sc.Edges() {
		if e.From != name {
			continue
		}
		listen := "0.0.0.0:" + strconv.Itoa(proxyBasePort+i)
		addr := "toxiproxy:" + strconv.Itoa(proxyBasePort+i)
		if svc.ByName() {
			var err error
			if addr, err = t.byNameProxies(ctx, sc, w, tx, name, e, proxyBasePort+i); err != nil {
				return err
			}
			topo.Proxies[e.Proxy] = addr
			deps[e.To] = append(deps[e.To], addr)
			continue
		}
		if err := createProxy(ctx, tx.url, e.Proxy, listen, w.upstream(sc, t.RunID, e.To, e.Replica)); err != nil {
			return err
		}
		topo.Proxies[e.Proxy] = addr
		deps[e.To] = append(deps[e.To], addr)
	}
	replicas := max(svc.Replicas, 1)
	boxes := make([]*box, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			s, err := t.serviceSpec(sc, name, i, deps, tx.token)
			if err == nil {
				s.nets = w.attach(name, s.name)
				boxes[i], err = t.run(ctx, s)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, b := range boxes {
		in := testbed.Instance{Service: name, Index: i, Name: b.name, Address: b.addr()}
		if mp := svc.MetricsPort(); mp > 0 && mp != b.port {
			in.Metrics = "http://" + b.extraAddr(mp) + svc.MetricsPath()
		} else {
			in.Metrics = "http://" + b.addr() + svc.MetricsPath()
		}
		topo.Instances = append(topo.Instances, in)
	}
	return nil
}

func envName(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}

// servicePort is the port a service listens on inside its container.
func servicePort(svc *scenario.Service) int {
	if svc.Image != "" && svc.Port > 0 {
		return svc.Port
	}
	return ChaosrunPort
}

// alias is an instance's name on the network ("ledger.1" → "ledger-1").
func alias(instance string) string { return strings.ReplaceAll(instance, ".", "-") }

// serveArgs are testbed.ServeArgs listening on the container's port.
func serveArgs(svc *scenario.Service, deps map[string][]string) []string {
	return testbed.ServeArgs(svc, "0.0.0.0:"+strconv.Itoa(ChaosrunPort), deps)
}

// checkImages makes sure every image the scenario needs is here: the
// chaosrun image must be; a host-program image is built on demand; any
// other image must have been built by the user (nothing is pulled).
func (t *Testbed) checkImages(ctx context.Context, sc *scenario.Scenario) error {
	refs := []string{t.Image}
	for _, n := range sc.StartOrder() {
		svc := sc.Services[n]
		if svc.External != "" {
			continue
		}
		if svc.Image == "" && len(svc.Command) > 0 {
			return fmt.Errorf("testbed: docker: service %s has only command: (the local testbed's); give it image: and port: to run it here", n)
		}
		if svc.Image != "" {
			refs = append(refs, t.imageFor(n, svc))
		}
	}
	for _, ref := range refs {
		if _, err := t.cli.ImageInspect(ctx, ref); err == nil {
			continue
		}
		if hp, ok := FindHostProgram(ref); ok {
			if _, err := hp.Ensure(ctx, t.cli, t.Progress); err != nil {
				return fmt.Errorf("testbed: %w", err)
			}
			continue
		}
		hint := "build it locally first (docker build -t " + ref + " …)"
		if strings.HasPrefix(ref, ChaosrunRepo+":") {
			hint = "run `chaosrun images` to build it"
		}
		return fmt.Errorf("testbed: docker: image %s is not on this engine and is never pulled: %s", ref, hint)
	}
	return nil
}

// freePort asks the kernel for a free port on 127.0.0.1 and lets it go:
// the engine binds a published port by number, so no socket can be handed
// to it. A fixed number (not the engine's pick, HostPort "") keeps a
// container's address through a restart, where the engine would pick
// anew; a port taken in between fails the start with "port is already
// allocated", which run retries on new ports.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run creates and starts one container with Testcontainers, publishes its
// port on a fixed 127.0.0.1 port and waits until it is healthy.
func (t *Testbed) run(ctx context.Context, s spec) (*box, error) {
	setupEnv()
	b := &box{name: s.name, alias: alias(s.name), port: s.port, health: s.health, token: s.token, nets: s.nets, expectDown: s.job}
	b.restarts = s.compose != nil && s.compose.restarts
	if s.name == "toxiproxy" {
		b.alias = "toxiproxy"
	}
	if b.nets == nil {
		b.nets = []netAttach{{name: t.netName, aliases: []string{b.alias}}}
	}
	for attempt := 0; ; attempt++ {
		req, err := t.request(s, b)
		if err != nil {
			return nil, err
		}
		ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true, Logger: discardLogger{}})
		if ctr != nil && ctr.GetContainerID() != "" {
			b.id = ctr.GetContainerID()
			t.mu.Lock()
			t.ctrs = append(t.ctrs, b)
			t.byName[b.name] = b
			t.mu.Unlock()
		}
		if err == nil {
			break
		}
		if b.id != "" {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
			rerr := t.remove(rctx, b)
			cancel()
			t.forget(b)
			if rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		clash := strings.Contains(err.Error(), "port is already allocated") || strings.Contains(err.Error(), "address already in use")
		if !clash || attempt == 2 || ctx.Err() != nil {
			return nil, fmt.Errorf("testbed: docker: start %s (%s): %w", s.name, s.image, err)
		}
	}
	logs.From(ctx).Debug("container started", "name", s.name, "image", s.image, "id", b.id)
	if s.job {
		if err := t.waitJob(ctx, b); err != nil {
			return nil, fmt.Errorf("testbed: docker: %s: %w%s", s.name, err, t.logTail(b))
		}
		return b, nil
	}
	if err := t.waitHealthy(ctx, b); err != nil {
		return nil, fmt.Errorf("testbed: docker: %s not healthy (%s): %w%s", s.name, b.health, err, t.logTail(b))
	}
	return b, nil
}

// request is the container request of s, its ports published on free
// 127.0.0.1 ports (noted in b).
func (t *Testbed) request(s spec, b *box) (testcontainers.ContainerRequest, error) {
	bindings := network.PortMap{}
	var exposed []string
	b.extra = map[int]int{}
	for k, p := range append([]int{s.port}, s.extraPorts...) {
		if p == 0 {
			continue // a service with no port (a worker): nothing to publish
		}
		hp, err := freePort()
		if err != nil {
			return testcontainers.ContainerRequest{}, fmt.Errorf("testbed: docker: %s: no free port: %w", s.name, err)
		}
		if k == 0 {
			b.hostPort = hp
		} else {
			b.extra[p] = hp
		}
		cport := network.MustParsePort(strconv.Itoa(p) + "/tcp")
		exposed = append(exposed, cport.String())
		bindings[cport] = []network.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(hp)}}
	}
	req := testcontainers.ContainerRequest{
		Image:          s.image,
		Name:           ctrName(t.RunID, b.alias),
		Entrypoint:     s.entrypoint,
		Cmd:            s.cmd,
		Env:            s.env,
		Labels:         t.labels(s.name),
		ExposedPorts:   exposed,
		NetworkAliases: map[string][]string{},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.PortBindings = bindings
			if s.hostGateway {
				hc.ExtraHosts = append(hc.ExtraHosts, hostGateway+":host-gateway")
			}
		},
	}
	for _, n := range b.nets {
		req.Networks = append(req.Networks, n.name)
		req.NetworkAliases[n.name] = n.aliases
	}
	if hc := dockerHealth(s.health); hc != nil {
		req.ConfigModifier = func(c *container.Config) { c.Healthcheck = hc }
	}
	if x := s.compose; x != nil {
		applyCompose(&req, x)
	}
	return req, nil
}

// running reports whether b's container runs.
func (t *Testbed) running(ctx context.Context, b *box) bool {
	res, err := t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	return err == nil && res.Container.State != nil && res.Container.State.Running
}

// discardLogger silences Testcontainers' own progress lines.
type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// watch reports, once per container, a container that stopped though no
// host fault stopped it.
func (t *Testbed) watch(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t.mu.Lock()
		boxes := append([]*box(nil), t.ctrs...)
		t.mu.Unlock()
		for _, b := range boxes {
			b.mu.Lock()
			skip := b.expectDown || b.reportedDie
			b.mu.Unlock()
			if skip {
				continue
			}
			res, err := t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
			if ctx.Err() != nil {
				return
			}
			if err != nil || res.Container.State == nil || res.Container.State.Running {
				continue
			}
			b.mu.Lock()
			if b.expectDown || b.reportedDie {
				b.mu.Unlock()
				continue
			}
			b.reportedDie = true
			b.mu.Unlock()
			st := res.Container.State
			select {
			case t.died <- fmt.Errorf("testbed: docker: %s exited during the run (%s, exit code %d)%s", b.name, st.Status, st.ExitCode, t.logTail(b)):
			default:
			}
		}
	}
}

// logTail returns the last lines of a container's log, for errors.
func (t *Testbed) logTail(b *box) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var sb strings.Builder
	if err := t.copyLogs(ctx, b, &sb, "8"); err != nil || strings.TrimSpace(sb.String()) == "" {
		return ""
	}
	return "\n  last log lines of " + b.name + ":\n    " + strings.ReplaceAll(strings.TrimSpace(sb.String()), "\n", "\n    ")
}

// saveLogs writes every container's log to LogDir.
func (t *Testbed) saveLogs(ctx context.Context, boxes []*box) error {
	if t.LogDir == "" {
		return nil
	}
	var errs []error
	for _, b := range boxes {
		f, err := os.Create(filepath.Join(t.LogDir, strings.NewReplacer("/", "_", " ", "_").Replace(b.name)+".log"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := t.copyLogs(ctx, b, f, "all"); err != nil {
			errs = append(errs, fmt.Errorf("logs of %s: %w", b.name, err))
		}
		f.Close()
	}
	return errors.Join(errs...)
}
