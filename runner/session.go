package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/internal/logs"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// Waits bound a session's steps that wait on other processes.
type Waits struct {
	// Start is how long load may take to say hello.
	Start time.Duration
	// Stop is how long load parts have to end once told to.
	Stop time.Duration
	// Collect is how long the results streams have to end after load.
	Collect time.Duration
	// Down bounds the testbed's teardown.
	Down time.Duration
}

// DefaultWaits are the bounds of a real run.
var DefaultWaits = Waits{Start: 90 * time.Second, Stop: 15 * time.Second, Collect: 5 * time.Second, Down: 30 * time.Second}

// orDefault fills zero bounds from DefaultWaits.
func (w Waits) orDefault() Waits {
	pick := func(v, d time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return d
	}
	return Waits{Start: pick(w.Start, DefaultWaits.Start), Stop: pick(w.Stop, DefaultWaits.Stop),
		Collect: pick(w.Collect, DefaultWaits.Collect), Down: pick(w.Down, DefaultWaits.Down)}
}

// ErrInterrupted marks a run stopped by its context (Ctrl-C, SIGTERM).
var ErrInterrupted = errors.New("run interrupted")

// SessionOptions configures a session.
type SessionOptions struct {
	Scenario *scenario.Scenario
	Testbed  testbed.Testbed
	// Load makes the workload once the testbed is up.
	Load engine.NewLoad
	// Duration is how long load runs (the scenario's, or a game day's
	// bound).
	Duration time.Duration
	// Limit bounds the whole session's wall time.
	Limit time.Duration
	// OutDir receives logs and the window logs.
	OutDir string
	// Allowed is the blast radius beyond loopback and the testbed's own
	// services (--allow-target, allow_targets); nil allows nothing more.
	Allowed   *guard.Allowed
	Versions  map[string]string
	Overrides []string
	// BuildTime is how long getting the load's binaries took.
	BuildTime time.Duration
	// OnScrape, when set, sees every /metrics reading as it arrives.
	OnScrape func(record.Scrape)
	// OnWindow, when set, sees every results window as it arrives.
	OnWindow func(record.Window)
	// OnScriptChecks, when set, is given the load's own checks (a k6
	// script's thresholds) once the load is made, before it starts.
	OnScriptChecks func([]scenario.Assertion)
	// Keep says which metrics the record keeps; nil is workloads.KeepMetric.
	Keep func(metric string) bool
	// ScrapeEvery is how often the targets' /metrics are read; 0 is 1s.
	ScrapeEvery time.Duration
	// Waits bound the steps that wait on other processes; zero fields are
	// DefaultWaits.
	Waits Waits
}

// Session is one run's life, written once for every driver: the testbed up,
// the fault environment, the load, the scraper and teardown, filling one
// run record. A driver (Run with its fault schedule, a game day with
// manual faults) calls Start, waits with Await, then End, Finish and
// Close; Close runs on every path.
type Session struct {
	o   SessionOptions
	rec *record.Run
	err error

	ctx    context.Context
	cancel context.CancelFunc

	topo   *testbed.Topology
	faults *faults.ScenarioEnv
	load   engine.Load
	scr    *Scraper
	// scriptChecks are the load's own checks (ScriptChecks).
	scriptChecks []scenario.Assertion

	stopScrape context.CancelFunc
	bg         sync.WaitGroup
	loadEnded  bool
	ended      bool
	closed     bool
	// log takes the session's diagnostics (see internal/logs).
	log *slog.Logger
}

// NewSession makes a session and its record skeleton; nothing starts yet.
func NewSession(o SessionOptions) *Session {
	sc := o.Scenario
	seed := sc.Seed
	if seed == 0 {
		seed = rand.Int64N(1<<31) + 1
	}
	if o.Keep == nil {
		o.Keep = workloads.KeepMetric(sc)
	}
	if o.ScrapeEvery <= 0 {
		o.ScrapeEvery = time.Second
	}
	o.Waits = o.Waits.orDefault()
	rec := &record.Run{SchemaVersion: record.SchemaVersion, Scenario: sc.Name, File: sc.File, Seed: seed,
		Testbed: o.Testbed.Name(), Versions: o.Versions, Overrides: o.Overrides, Planned: record.Duration(o.Duration)}
	rec.Timings.Build = record.Duration(o.BuildTime)
	return &Session{o: o, rec: rec, log: logs.From(context.Background())}
}

// Record is the session's run record.
func (s *Session) Record() *record.Run { return s.rec }

// Err is the first failure of the session, nil if none.
func (s *Session) Err() error { return s.err }

// ScriptChecks are the load's own checks (a k6 script's thresholds); nil
// before Start or for a load without them.
func (s *Session) ScriptChecks() []scenario.Assertion { return s.scriptChecks }

// LoadPartCount is how many processes send the load's windows; 0 before
// Start or when the load does not say (PartCounter).
func (s *Session) LoadPartCount() int {
	if pc, ok := s.load.(engine.PartCounter); ok {
		return pc.PartCount()
	}
	return 0
}

// Topology is what the testbed stood up; nil before Start.
func (s *Session) Topology() *testbed.Topology { return s.topo }

// Faults is the environment that applies faults to the testbed.
func (s *Session) Faults() *faults.ScenarioEnv { return s.faults }

// Context ends with the session's wall-clock limit or its parent.
func (s *Session) Context() context.Context { return s.ctx }

// Fail marks the record incomplete with err as a problem; the first
// failure is the session's error.
func (s *Session) Fail(err error) {
	if err == nil {
		return
	}
	s.rec.Incomplete = true
	s.rec.Problems = append(s.rec.Problems, err.Error())
	s.log.Info("run incomplete", "problem", err)
	if s.err == nil {
		s.err = err
	}
}

// Note adds a problem to the record without marking it incomplete.
func (s *Session) Note(problem string) {
	s.rec.Problems = append(s.rec.Problems, problem)
	s.log.Info("run problem", "problem", problem)
}

// Start stands the testbed up, starts the load and waits until it runs,
// then starts the scraper. On failure the record holds why; call Close.
func (s *Session) Start(ctx context.Context) error {
	s.ctx, s.cancel = context.WithTimeoutCause(ctx, s.o.Limit, fmt.Errorf("run exceeded its wall-clock limit of %s", s.o.Limit))
	s.log = logs.From(ctx).With("scenario", s.rec.Scenario)
	s.log.Info("testbed starting", "testbed", s.rec.Testbed, "limit", s.o.Limit)
	t0 := time.Now()
	topo, err := s.o.Testbed.Up(s.ctx, s.o.Scenario)
	s.rec.Timings.Startup = record.Duration(time.Since(t0))
	if err != nil {
		s.Fail(s.interrupted(fmt.Errorf("testbed: %w", err)))
		return s.err
	}
	s.topo = topo
	s.rec.Topology = TopologyRecord(topo)
	s.log.Info("testbed up", "instances", len(topo.Instances), "took", time.Since(t0).Round(time.Millisecond))
	s.faults = &faults.ScenarioEnv{Scenario: s.o.Scenario, API: faults.NewToxiproxyAPI(topo.ToxiproxyURL)}
	if h, ok := s.o.Testbed.(testbed.HostControl); ok {
		s.faults.HostsAPI = h.Hosts()
	}
	s.scr = NewScraper(s.o.OnScrape)
	metrics := scraped(s.o.Scenario, topo.Instances)
	s.scr.Once(s.ctx, metrics) // counters' baseline, before load
	if err := s.startLoad(); err != nil {
		s.Fail(err)
		return s.err
	}
	s.rec.Start = s.load.StartTime()
	s.log.Info("load started", "parts", s.LoadPartCount(), "duration", s.o.Duration)
	scrapeCtx, stop := context.WithCancel(context.Background())
	s.stopScrape = stop
	s.bg.Go(func() { s.scr.Run(scrapeCtx, metrics, s.o.ScrapeEvery) })
	return nil
}

// startLoad makes the load, starts it and waits until it runs.
func (s *Session) startLoad() error {
	allowed := s.o.Allowed
	if allowed == nil {
		allowed, _ = guard.Parse(nil)
	}
	for _, in := range s.topo.Instances {
		allowed.Add(in.Address)
	}
	ld, err := s.o.Load(engine.LoadSpec{Scenario: s.o.Scenario, Addresses: s.topo.Addresses(), Seed: s.rec.Seed,
		Duration: s.o.Duration, Allowed: allowed, OutDir: s.o.OutDir, Keep: s.o.Keep})
	if err != nil {
		return err
	}
	s.load = ld
	if sc, ok := ld.(engine.ScriptChecks); ok {
		s.scriptChecks = sc.ScriptChecks()
		s.rec.ScriptChecks = assertions.RecordChecks(s.scriptChecks)
		if s.o.OnScriptChecks != nil {
			s.o.OnScriptChecks(s.scriptChecks)
		}
	}
	if s.o.OnWindow != nil {
		ld.OnWindow(s.o.OnWindow)
	}
	if err := ld.Start(s.ctx); err != nil {
		return err
	}
	// Load starts when every part said hello: faults and offsets count
	// from the first hello.
	select {
	case <-ld.Started():
		return nil
	case e, ok := <-ld.Ended():
		if !ok || e == nil {
			e = errors.New("it exited")
		}
		return fmt.Errorf("load ended before it started: %v", e)
	case err := <-s.topo.Died:
		return err
	case <-time.After(s.o.Waits.Start):
		return fmt.Errorf("load did not start within %s", s.o.Waits.Start)
	case <-s.ctx.Done():
		return s.interrupted(s.ctx.Err())
	}
}

// loadEnds is the load's Ended channel until it is closed, then nil.
func (s *Session) loadEnds() <-chan error {
	if s.loadEnded {
		return nil
	}
	return s.load.Ended()
}

// Await waits until the load ends by itself (nil), a load part fails, a
// service dies, the wall-clock limit passes or the parent context ends
// (the reason, also recorded), or stop is closed (nil). A failing part
// stops the others.
func (s *Session) Await(stop <-chan struct{}) error {
	for {
		var why error
		select {
		case e, ok := <-s.loadEnds():
			if !ok {
				s.loadEnded = true
				return nil
			}
			why = e
		case e := <-s.topo.Died:
			why = e
		case <-s.ctx.Done():
			why = s.interrupted(context.Cause(s.ctx))
		case <-stop:
			return nil
		}
		if why != nil {
			s.Fail(why)
			s.End()
			return why
		}
	}
}

// End stops the load, waits for every part to end and marks the end of
// load in the record: when the last part ended (or the wait for it gave
// up), not when it was told to stop. Calling it again does nothing.
func (s *Session) End() {
	if s.ended || s.load == nil {
		return
	}
	s.ended = true
	s.load.Stop()
	if err := s.load.Wait(s.o.Waits.Stop); err != nil {
		s.Fail(err)
	}
	s.rec.End = time.Now()
	s.loadEnded = true
	s.log.Info("load ended", "ran", s.rec.End.Sub(s.rec.Start).Round(time.Millisecond))
}

// Finish ends load if it still runs, stops the scraper, and fills the
// record: windows, problems, scrapes, timings, and the services' end
// checks when the run is complete (before teardown, which Close does).
func (s *Session) Finish() {
	if s.load == nil {
		return
	}
	s.End()
	if s.stopScrape != nil {
		s.stopScrape()
	}
	s.bg.Wait()
	if pr, ok := s.load.(engine.PartsReporter); ok {
		s.rec.LoadParts = pr.Parts()
	}
	src, notes, err := s.load.Collect(s.o.Waits.Collect)
	s.rec.Source = src
	s.rec.Problems = append(s.rec.Problems, notes...)
	if err != nil && !s.rec.Incomplete {
		s.Fail(err)
	}
	if s.scr != nil {
		s.rec.Scrapes, _ = s.scr.Results()
		s.noteScrapeFailures()
	}
	if len(s.o.Scenario.EndChecks) > 0 && !s.rec.Incomplete {
		s.rec.EndChecks = runEndChecks(context.Background(), s.o.Scenario, s.topo)
	}
	s.rec.Timings.Load = record.Duration(s.rec.End.Sub(s.rec.Start))
}

// noteScrapeFailures puts the failed /metrics reads in the record's
// problems: assertions over scrapes saw fewer readings. A service of the
// user's own that declares no metrics: and never served /metrics (read
// for a scrape: assertion naming no service) is left out.
func (s *Session) noteScrapeFailures() {
	own := map[string]bool{}
	for _, in := range s.topo.Instances {
		if svc := s.o.Scenario.Services[in.Service]; svc != nil && svc.Own() && svc.Metrics == nil {
			own[in.Name] = true
		}
	}
	for _, f := range s.scr.Failures() {
		if own[f.Instance] && f.Failed == f.Tries {
			continue
		}
		s.Note(fmt.Sprintf("/metrics of %s: %d of %d scrapes failed (last: %v); assertions over its scrapes saw fewer readings", f.Instance, f.Failed, f.Tries, f.Last))
	}
}

// Close stops whatever still runs — load, scraper — and tears the testbed
// down within its bound, on every path. It is safe to call twice.
func (s *Session) Close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.load != nil {
		s.End()
		s.load.Close()
	}
	if s.stopScrape != nil {
		s.stopScrape()
	}
	s.bg.Wait()
	t0 := time.Now()
	downCtx, cancel := context.WithTimeout(context.Background(), s.o.Waits.Down)
	defer cancel()
	if err := s.o.Testbed.Down(downCtx); err != nil {
		s.Fail(fmt.Errorf("teardown: %w", err))
	}
	s.rec.Timings.Teardown = record.Duration(time.Since(t0))
	s.log.Info("testbed down", "took", time.Since(t0).Round(time.Millisecond))
	if s.cancel != nil {
		s.cancel()
	}
}

// interrupted names why the session's context ended, when it did: the
// wall-clock limit, or an interrupt.
func (s *Session) interrupted(err error) error {
	if s.ctx.Err() == nil {
		return err
	}
	if cause := context.Cause(s.ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return fmt.Errorf("%w: %v", ErrInterrupted, err)
}
