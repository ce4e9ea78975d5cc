// Package runner runs one scenario end to end: testbed up, k6 load, the
// fault schedule, /metrics scrapes, assertions, testbed down — and returns the
// run record, complete or marked incomplete, on every path.
package runner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/k6run"
)

// Options configures one run.
type Options struct {
	Scenario *scenario.Scenario
	Testbed  testbed.Testbed
	// K6 is the k6 binary (built with xk6-resilience).
	K6 string
	// ScriptDir is where workload scripts named in scenarios live.
	ScriptDir string
	// OutDir receives k6's log and the services' logs.
	OutDir string
	// Timeout bounds the whole run; 0 derives it from the scenario.
	Timeout time.Duration
	// Progress receives a live status line once a second; nil for none.
	Progress io.Writer
	// Overwrite makes the progress line rewrite itself (a terminal).
	Overwrite bool
	Clock     clock.Clock
	Versions  map[string]string
	Overrides []string
	// Allowed is the blast radius beyond loopback and the testbed's own
	// services (--allow-target, allow_targets); nil allows nothing more.
	Allowed *guard.Allowed
	// LoadShards runs the workload as this many k6 processes, each with its
	// execution segment; their results are merged. 0 or 1: one process.
	LoadShards int
	// BuildTime is how long getting the k6 binary took, for the record.
	BuildTime time.Duration
	// Results says where the results stream is received; zero is
	// loopback with free ports and no token.
	Results Results
}

// Results says where the results stream's receivers listen and whom they
// let in (--results-listen and friends).
type Results struct {
	// Listen is HOST:PORT; "" is 127.0.0.1 with a free port. With several
	// shards, port 0 gives each a free port on HOST and port P gives
	// shard i port P+i.
	Listen string
	// Token must be in each connection's hello; required off loopback.
	Token string
	// TLS, when set, makes the receivers speak TLS.
	TLS *tls.Config
	// K6Options are the output options the local k6 processes need to
	// reach a TLS receiver (ca, server_name).
	K6Options url.Values
	// OnListen, when set, is told each shard's name and listen address.
	OnListen func(shard, addr string)
	// OnRefused, when set, is called with each refused connection's reason.
	OnRefused func(error)
}

// ErrInterrupted marks a run stopped by its context (Ctrl-C, SIGTERM).
var ErrInterrupted = errors.New("run interrupted")

// HardLimit is the wall-clock bound of a run: the scenario's timeout, or
// the load duration plus three minutes for start-up, grace and teardown.
func HardLimit(sc *scenario.Scenario, override time.Duration) time.Duration {
	if override > 0 {
		return override
	}
	if sc.Timeout > 0 {
		return sc.Timeout.Std()
	}
	return sc.Workload.Duration.Std() + 3*time.Minute
}

// Run runs the scenario. It returns the run record even when it fails; the
// record is then marked incomplete with the reasons in Problems. The
// record's windows stay on disk, in an unlinked file in OutDir, until the
// record is closed: close it once it is written.
func Run(ctx context.Context, o Options) (rec *record.Run, err error) {
	sc := o.Scenario
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	seed := sc.Seed
	if seed == 0 {
		seed = rand.Int64N(1<<31) + 1
	}
	rec = &record.Run{
		SchemaVersion: record.SchemaVersion,
		Scenario:      sc.Name,
		File:          sc.File,
		Seed:          seed,
		Testbed:       o.Testbed.Name(),
		Versions:      o.Versions,
		Overrides:     o.Overrides,
		Planned:       record.Duration(sc.Workload.Duration),
	}
	rec.Timings.Build = record.Duration(o.BuildTime)
	fail := func(e error) {
		rec.Incomplete = true
		rec.Problems = append(rec.Problems, e.Error())
		if err == nil {
			err = e
		}
	}

	limit := HardLimit(sc, o.Timeout)
	ctx, cancelLimit := context.WithTimeoutCause(ctx, limit, fmt.Errorf("run exceeded its wall-clock limit of %s", limit))
	defer cancelLimit()

	// Teardown happens on every path, with its own bounded context.
	defer func() {
		t0 := time.Now()
		downCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if derr := o.Testbed.Down(downCtx); derr != nil {
			fail(fmt.Errorf("teardown: %w", derr))
		}
		rec.Timings.Teardown = record.Duration(time.Since(t0))
	}()

	t0 := time.Now()
	topo, uerr := o.Testbed.Up(ctx, sc)
	rec.Timings.Startup = record.Duration(time.Since(t0))
	if uerr != nil {
		fail(interrupted(ctx, fmt.Errorf("testbed: %w", uerr)))
		return rec, err
	}
	rec.Topology = TopologyRecord(topo)

	env, eerr := workloads.ScriptEnv(sc, topo.Addresses(), seed, sc.Workload.Duration.Std())
	if eerr != nil {
		fail(eerr)
		return rec, err
	}
	// k6 may reach loopback, the testbed's services and what the user
	// allowed; it refuses every other IP before connecting.
	allowed := o.Allowed
	if allowed == nil {
		allowed, _ = guard.Parse(nil)
	}
	for _, in := range topo.Instances {
		allowed.Add(in.Address)
	}
	script, serr := workloads.ResolveScript(sc.File, sc.Workload.Script, o.ScriptDir)
	if serr != nil {
		fail(serr)
		return rec, err
	}

	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	shards := max(o.LoadShards, 1)
	ld, lerr := startLoad(loadCtx, shards, k6run.Spec{Binary: o.K6, Script: script, Env: env, Extra: allowed.K6Flags()}, filepath.Join(o.OutDir, "logs"), o.OutDir, workloads.KeepMetric(sc), o.Results)
	if lerr != nil {
		fail(lerr)
		return rec, err
	}
	// Whatever path the run takes, k6 is stopped and waited for before the
	// testbed goes down.
	defer func() {
		stopLoad()
		ld.waitAll(15 * time.Second) //nolint:errcheck // reported on the main path
		ld.close()
	}()

	// Load starts when every shard's results output has said hello: faults
	// and offsets count from the first hello.
	select {
	case <-ld.started:
		rec.Start = ld.startTime()
	case i := <-ld.finished:
		e := ld.note(i)
		if e == nil {
			e = errors.New("it exited")
		}
		fail(fmt.Errorf("k6 ended before load started: %v", e))
		return rec, err
	case derr := <-topo.Died:
		fail(derr)
		return rec, err
	case <-time.After(90 * time.Second):
		fail(fmt.Errorf("k6 did not start load within 90s (%d shard(s))", shards))
		return rec, err
	case <-ctx.Done():
		fail(interrupted(ctx, ctx.Err()))
		return rec, err
	}

	scr := NewScraper(nil)
	scrapeCtx, stopScrape := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Go(func() { scr.Run(scrapeCtx, topo.Instances, time.Second) })

	active := newActiveSet()
	var events []record.FaultEvent
	var evMu sync.Mutex
	schedCtx, stopSched := context.WithCancel(context.Background())
	schedDone := make(chan error, 1)
	fenv := &faults.ScenarioEnv{Scenario: sc, API: faults.NewToxiproxyAPI(topo.ToxiproxyURL)}
	if h, ok := o.Testbed.(testbed.HostControl); ok {
		fenv.HostsAPI = h.Hosts()
	}
	go func() {
		schedDone <- faults.Run(schedCtx, o.Clock, rec.Start, sc.Faults, fenv, func(ev record.FaultEvent) {
			evMu.Lock()
			events = append(events, ev)
			evMu.Unlock()
			active.note(ev)
		})
	}()

	prog := newProgress(o.Progress, o.Overwrite, sc.Workload.Duration.Std(), rec.Start, active)
	ld.onWindow(prog.window)
	progCtx, stopProg := context.WithCancel(context.Background())
	bg.Go(func() { prog.run(progCtx) })

	// Load ends when every shard has; one that fails stops the others.
	stopping := false
	for ld.running() > 0 {
		var stopWhy error
		select {
		case i := <-ld.finished:
			stopWhy = ld.note(i)
		case derr := <-topo.Died:
			stopWhy = derr
		case <-ctx.Done():
			stopWhy = interrupted(ctx, context.Cause(ctx))
		}
		if stopWhy != nil && !stopping {
			fail(stopWhy)
			rec.End = time.Now()
			stopping = true
			stopLoad()
			break
		}
	}
	if !stopping {
		rec.End = time.Now()
	}
	if werr := ld.waitAll(15 * time.Second); werr != nil {
		fail(werr)
	}
	stopSched()
	if serr := <-schedDone; serr != nil && !errors.Is(serr, context.Canceled) {
		fail(fmt.Errorf("fault schedule: %w", serr))
	}
	stopScrape()
	stopProg()
	bg.Wait()
	prog.finish()

	spilled, notes, cerr := ld.collect(5 * time.Second)
	rec.Source = spilled
	rec.Problems = append(rec.Problems, notes...)
	if cerr != nil && !rec.Incomplete {
		fail(cerr)
	}
	scripted, serr := ScriptFaultEvents(rec)
	if serr != nil {
		fail(fmt.Errorf("reading the run's windows: %w", serr))
	}
	evMu.Lock()
	rec.Faults = mergeFaultEvents(events, scripted)
	evMu.Unlock()
	for _, ev := range rec.Faults {
		if ev.Action == record.Failed {
			fail(fmt.Errorf("fault %s could not be %s: %s", ev.Fault, "applied", ev.Error))
		}
	}
	rec.Scrapes, _ = scr.Results()
	if len(sc.EndChecks) > 0 && !rec.Incomplete {
		rec.EndChecks = runEndChecks(context.Background(), sc, topo)
	}
	rec.Timings.Load = record.Duration(rec.End.Sub(rec.Start))
	rec.Verdicts = assertions.Evaluate(rec, sc.Assertions)
	return rec, err
}

func tailOf(r k6run.Result) string {
	if strings.TrimSpace(r.Tail) == "" {
		return ""
	}
	return "\n  last lines of k6's output:\n    " + strings.ReplaceAll(strings.TrimSpace(r.Tail), "\n", "\n    ")
}

func interrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return fmt.Errorf("%w: %v", ErrInterrupted, err)
}

// hostOf is the host:port of a URL, without its credentials (the Docker
// testbed's Toxiproxy URL carries the run's token).
// TopologyRecord lists what a testbed started, for the run record: Toxiproxy
// (its address without the token) and every instance.
func TopologyRecord(topo *testbed.Topology) []record.ServiceInfo {
	out := []record.ServiceInfo{{Name: "toxiproxy", Address: hostOf(topo.ToxiproxyURL), PID: topo.ToxiproxyPID, Proxies: topo.Proxies}}
	for _, in := range topo.Instances {
		out = append(out, record.ServiceInfo{Name: in.Name, Address: in.Address, PID: in.PID})
	}
	return out
}

func hostOf(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		return u.Host
	}
	return strings.TrimPrefix(rawURL, "http://")
}

// activeSet tracks which faults are in force, for the progress line.
type activeSet struct {
	mu  sync.Mutex
	set map[string]bool
}

func newActiveSet() *activeSet { return &activeSet{set: map[string]bool{}} }

func (a *activeSet) note(ev record.FaultEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch ev.Action {
	case record.Applied:
		a.set[ev.Fault] = true
	default:
		delete(a.set, ev.Fault)
	}
}

func (a *activeSet) names() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.set))
	for n := range a.set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
