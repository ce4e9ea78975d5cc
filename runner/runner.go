// Package runner runs one scenario end to end: testbed up, k6 load, the
// fault schedule, /metrics scrapes, assertions, testbed down — and returns the
// run record, complete or marked incomplete, on every path.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
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
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// Options configures one run.
type Options struct {
	Scenario *scenario.Scenario
	Testbed  testbed.Testbed
	// Load makes the run's load once the testbed is up (K6, or a fake).
	Load engine.NewLoad
	// OutDir receives the load's and the services' logs.
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
	// BuildTime is how long getting the load's binaries took, for the record.
	BuildTime time.Duration
	// Waits bound the steps that wait on other processes (tests shorten
	// them); zero fields are DefaultWaits.
	Waits Waits
}

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

// Run runs the scenario: a session driven by the scenario's fault schedule,
// judged by its assertions and the load's own checks (a k6 script's
// thresholds). An abortOnFail check that fails while load runs stops the
// run early: load stopped, faults reverted, the record marked aborted. It
// returns the run record even when it fails; the record is then marked
// incomplete with the reasons in Problems. The record's windows stay on
// disk, in an unlinked file in OutDir, until the record is closed: close it
// once it is written.
func Run(ctx context.Context, o Options) (rec *record.Run, err error) {
	sc := o.Scenario
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	active := newActiveSet()
	prog := newProgress(o.Progress, o.Overwrite, sc.Workload.Duration.Std(), active)
	live := assertions.NewLive(sc.Assertions)
	s := NewSession(SessionOptions{Scenario: sc, Testbed: o.Testbed, Load: o.Load, Duration: sc.Workload.Duration.Std(),
		Limit: HardLimit(sc, o.Timeout), OutDir: o.OutDir, Allowed: o.Allowed, Versions: o.Versions,
		Overrides: o.Overrides, BuildTime: o.BuildTime, Waits: o.Waits,
		OnWindow:       func(w record.Window) { prog.window(w); live.Window(w) },
		OnScriptChecks: live.Add})
	defer func() {
		s.Close()
		err = s.Err()
	}()
	rec = s.Record()
	if s.Start(ctx) != nil {
		return rec, nil
	}
	prog.setStart(rec.Start)
	live.SetParts(s.LoadPartCount())

	evs := &eventLog{active: active, log: s.log}
	schedCtx, stopSched := context.WithCancel(context.Background())
	schedDone := make(chan error, 1)
	go func() {
		schedDone <- faults.Run(schedCtx, o.Clock, rec.Start, sc.Faults, s.Faults(), evs.add)
	}()
	progCtx, stopProg := context.WithCancel(context.Background())
	progDone := make(chan struct{})
	go func() { defer close(progDone); prog.run(progCtx) }()
	watch := watchAborts(live, rec.Start, evs)

	s.Await(watch.fired) //nolint:errcheck // recorded by the session
	s.End()
	if v, ok := watch.end(); ok {
		rec.Aborted = assertions.AbortReason(v)
	}
	stopSched()
	if serr := <-schedDone; serr != nil && !errors.Is(serr, context.Canceled) {
		s.Fail(fmt.Errorf("fault schedule: %w", serr))
	}
	stopProg()
	<-progDone
	prog.finish()
	s.Finish()
	judge(s, sc, evs.list())
	return rec, nil
}

// judge fills the record's fault timeline, the faults never applied and
// the verdicts (assertions.Judge).
func judge(s *Session, sc *scenario.Scenario, events []record.FaultEvent) {
	rec := s.Record()
	scripted, serr := record.ScriptFaultEvents(rec)
	if serr != nil {
		s.Fail(fmt.Errorf("reading the run's windows: %w", serr))
	}
	rec.Faults = record.MergeFaultEvents(events, scripted)
	for _, ev := range rec.Faults {
		if ev.Action == record.Failed {
			s.Fail(fmt.Errorf("fault %s could not be %s: %s", ev.Fault, "applied", ev.Error))
		}
	}
	for _, n := range assertions.Judge(sc, rec, s.ScriptChecks()) {
		s.Note(n)
	}
}

// eventLog collects the fault schedule's events as they happen.
type eventLog struct {
	mu     sync.Mutex
	events []record.FaultEvent
	active *activeSet
	log    *slog.Logger
}

func (l *eventLog) add(ev record.FaultEvent) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
	l.active.note(ev)
	if ev.Error != "" {
		l.log.Warn("fault "+string(ev.Action), "fault", ev.Fault, "detail", ev.Detail, "error", ev.Error)
	} else {
		l.log.Info("fault "+string(ev.Action), "fault", ev.Fault, "detail", ev.Detail)
	}
}

// list is a copy of the events so far.
func (l *eventLog) list() []record.FaultEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]record.FaultEvent(nil), l.events...)
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
