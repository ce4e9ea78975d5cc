// Package gameday runs a game day: a scenario's testbed under steady load
// until stopped, a web page (and JSON API) to inject and clear faults by
// hand while watching the scenario's SLOs live over a sliding window, stop
// conditions that revert every fault when a guard assertion breaches for
// longer than its grace, and at the end the same run record as a run, with
// the manual actions as fault events.
package gameday

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/k6run"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// Options configures a game day.
type Options struct {
	Scenario *scenario.Scenario
	Testbed  testbed.Testbed
	// K6 is the k6 binary (built with xk6-resilience); Script the workload
	// script, resolved.
	K6, Script string
	// OutDir receives k6's log.
	OutDir string
	// Listen is the page's address (default 127.0.0.1:0). Token, when set,
	// is required by the page and the API; it must be set off loopback.
	Listen, Token string
	// Guards name the scenario's assertions that are stop conditions;
	// Grace is how long one may breach before every fault is reverted.
	Guards []string
	Grace  time.Duration
	// Slide is the sliding window of the live SLOs (default 10s).
	Slide time.Duration
	// MaxDuration bounds the load (default 1h).
	MaxDuration time.Duration
	// Allowed is the load's blast radius beyond loopback and the testbed.
	Allowed *guard.Allowed
	// Ready is called with the page's URL once load runs.
	Ready func(url string)
	// Log receives one line per timeline entry; nil for none.
	Log       io.Writer
	Versions  map[string]string
	Overrides []string
}

// ErrInterrupted marks a game day ended by its context rather than by Stop.
var ErrInterrupted = errors.New("game day interrupted")

type gameDay struct {
	o     Options
	sc    *scenario.Scenario
	token string
	meta  Meta
	live  *live
	tgts  *targetSeries
	ctl   *control
	stop  *stopConditions
	hub   *hub
	start time.Time

	mu       sync.Mutex
	stopBy   string
	stopCh   chan struct{}
	stopOnce sync.Once
	kickCh   chan struct{}
	last     []byte
}

// CheckListen refuses a non-loopback address without a token.
func CheckListen(listen, token string) error {
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return fmt.Errorf("--listen %q: %w (allowed: HOST:PORT, e.g. 127.0.0.1:0)", listen, err)
	}
	if token == "" && !guard.IsLoopbackListen(listen) {
		return fmt.Errorf("--listen %s is not a loopback address: set --token so that only people with it can inject faults", listen)
	}
	return nil
}

// CheckGuards checks that every guard names an assertion of the scenario.
func CheckGuards(sc *scenario.Scenario, guards []string) error {
	names := map[string]bool{}
	var all []string
	for _, a := range sc.Assertions {
		names[a.Name] = true
		all = append(all, a.Name)
	}
	for _, g := range guards {
		if !names[g] {
			return fmt.Errorf("--guard %q is not an assertion of scenario %s (allowed: %s)", g, sc.Name, strings.Join(all, ", "))
		}
	}
	return nil
}

// Run runs the game day until ctx ends, the page's Stop is pressed or the
// load ends; it reverts every fault, tears the testbed down on every path,
// and returns the run record (incomplete, with Problems, on failure). The
// record reads its windows from a file in OutDir: close it once written.
func Run(ctx context.Context, o Options) (rec *record.Run, err error) {
	sc := o.Scenario
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.Slide <= 0 {
		o.Slide = 10 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 5 * time.Second
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = time.Hour
	}
	if err := CheckListen(o.Listen, o.Token); err != nil {
		return nil, err
	}
	if err := CheckGuards(sc, o.Guards); err != nil {
		return nil, err
	}
	seed := sc.Seed
	if seed == 0 {
		seed = rand.Int64N(1<<31) + 1
	}
	rec = &record.Run{SchemaVersion: record.SchemaVersion, Scenario: sc.Name, File: sc.File, Seed: seed,
		Testbed: o.Testbed.Name(), Versions: o.Versions, Overrides: o.Overrides}
	fail := func(e error) {
		rec.Incomplete = true
		rec.Problems = append(rec.Problems, e.Error())
		if err == nil {
			err = e
		}
	}
	ctx, cancelLimit := context.WithTimeout(ctx, o.MaxDuration+3*time.Minute)
	defer cancelLimit()

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
		fail(fmt.Errorf("testbed: %w", uerr))
		return rec, err
	}
	rec.Topology = runner.TopologyRecord(topo)

	fenv := &faults.ScenarioEnv{Scenario: sc, API: faults.NewToxiproxyAPI(topo.ToxiproxyURL)}
	if h, ok := o.Testbed.(testbed.HostControl); ok {
		fenv.HostsAPI = h.Hosts()
	}
	g := &gameDay{o: o, sc: sc, token: o.Token, live: newLive(o.Slide), tgts: newTargetSeries(), ctl: newControl(sc, fenv),
		stop: newStopConditions(o.Guards, o.Grace), hub: newHub(), stopCh: make(chan struct{}), kickCh: make(chan struct{}, 1)}
	g.ctl.onApply = g.live.freeze
	g.meta = newMeta(sc, topo, o)

	// Load.
	env, eerr := workloads.ScriptEnv(sc, topo.Addresses(), seed, o.MaxDuration)
	if eerr != nil {
		fail(eerr)
		return rec, err
	}
	allowed := o.Allowed
	if allowed == nil {
		allowed, _ = guard.Parse(nil)
	}
	for _, in := range topo.Instances {
		allowed.Add(in.Address)
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	// Settled windows go to a log on disk, so that a long game day's
	// memory stays flat; the record reads them from it.
	wl, lerr := stream.CreateWindowLog(o.OutDir)
	if lerr != nil {
		fail(fmt.Errorf("results stream: %w", lerr))
		return rec, err
	}
	handedOver := false
	defer func() {
		if !handedOver {
			wl.Close()
		}
	}()
	recv, lerr := stream.ListenWith(loadCtx, stream.Config{Log: wl, Keep: workloads.KeepMetric(sc)})
	if lerr != nil {
		fail(fmt.Errorf("results stream: %w", lerr))
		return rec, err
	}
	defer recv.Close()
	recv.OnWindow(g.live.add)
	k6done := make(chan k6outcome, 1)
	go func() {
		res, rerr := k6run.Run(loadCtx, k6run.Spec{Binary: o.K6, Script: o.Script, Env: env, Extra: allowed.K6Flags(),
			StreamAddr: recv.Addr(), LogPath: filepath.Join(o.OutDir, "logs", "k6.log")})
		k6done <- k6outcome{res, rerr}
	}()
	k6ended := false
	defer func() {
		stopLoad()
		if !k6ended {
			select {
			case <-k6done:
			case <-time.After(k6run.Grace + 10*time.Second):
				fail(errors.New("k6 did not stop within 15s of being told to"))
			}
		}
	}()
	select {
	case <-recv.Started():
		rec.Start = recv.StartTime()
	case out := <-k6done:
		k6ended = true
		fail(fmt.Errorf("k6 ended before load started: %v%s", out.err, tailOf(out.res)))
		return rec, err
	case derr := <-topo.Died:
		fail(derr)
		return rec, err
	case <-time.After(90 * time.Second):
		fail(errors.New("k6 did not start load within 90s"))
		return rec, err
	case <-ctx.Done():
		fail(fmt.Errorf("%w before load started", ErrInterrupted))
		return rec, err
	}
	g.start = rec.Start
	g.live.setStart(rec.Start)
	g.tgts.setStart(rec.Start)
	// The targets' /metrics, once a second: live sheds and ejections, and
	// the record's scrapes for the report.
	scr := runner.NewScraper(g.tgts.add)
	scrapeCtx, stopScrape := context.WithCancel(ctx)
	scrapeDone := make(chan struct{})
	go func() {
		defer close(scrapeDone)
		scr.Run(scrapeCtx, topo.Instances, time.Second)
	}()
	defer func() { stopScrape(); <-scrapeDone }()

	// The page.
	var lc net.ListenConfig
	ln, lnErr := lc.Listen(ctx, "tcp", o.Listen)
	if lnErr != nil {
		fail(fmt.Errorf("page: listen on %s: %w", o.Listen, lnErr))
		return rec, err
	}
	srv := &http.Server{Handler: g.handler(), ReadHeaderTimeout: 10 * time.Second}
	srvDone := make(chan struct{})
	go func() {
		defer close(srvDone)
		srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	}()
	defer func() {
		g.hub.close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if serr := srv.Shutdown(sctx); serr != nil {
			srv.Close()
		}
		<-srvDone
	}()
	g.ctl.note("chaosrun", "info", "game day started: %s under steady load; live SLOs over the last %s", sc.Name, o.Slide)
	if len(o.Guards) > 0 {
		g.ctl.note("chaosrun", "info", "stop conditions: %s (grace %s)", strings.Join(o.Guards, ", "), o.Grace)
	}
	if o.Ready != nil {
		u := "http://" + ln.Addr().String() + "/"
		if o.Token != "" {
			u += "?token=" + o.Token
		}
		o.Ready(u)
	}

	// Live loop: evaluate, check stop conditions, publish, twice a second.
	logged := 0
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var stopWhy error
loop:
	for {
		g.publish(ctx)
		logged = g.logTimeline(logged)
		select {
		case <-tick.C:
		case <-g.kickCh:
		case <-g.stopCh:
			g.ctl.note(g.stopper(), "info", "game day stopped")
			break loop
		case out := <-k6done:
			k6ended = true
			if out.err != nil {
				stopWhy = fmt.Errorf("k6: %w%s", out.err, tailOf(out.res))
			} else {
				g.ctl.note("chaosrun", "info", "load ended after --max-duration %s", o.MaxDuration)
			}
			break loop
		case derr := <-topo.Died:
			stopWhy = derr
			break loop
		case <-ctx.Done():
			stopWhy = fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
			g.ctl.note("chaosrun", "info", "game day interrupted")
			break loop
		}
	}
	g.requestStop("")
	// Every fault is reverted before load stops, with a fresh context.
	rctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	if names, cerr := g.ctl.ClearAll(rctx, "chaosrun", "the game day ended"); cerr != nil {
		fail(fmt.Errorf("reverting faults at the end: %w", cerr))
	} else if len(names) > 0 {
		g.ctl.note("chaosrun", "clear", "reverted at the end: %s", strings.Join(names, ", "))
	}
	cancel()
	g.publish(ctx)
	g.logTimeline(logged)
	rec.End = time.Now()
	if stopWhy != nil {
		fail(stopWhy)
	}
	stopLoad()
	if !k6ended {
		select {
		case <-k6done:
			k6ended = true
		case <-time.After(k6run.Grace + 10*time.Second):
			k6ended = true // the deferred wait would only wait again
			fail(errors.New("k6 did not stop within 15s of being told to"))
		}
	}
	recv.WaitEnded(3 * time.Second)
	recv.Close()
	sum := recv.Summary()
	if sum.LogErr != nil {
		fail(fmt.Errorf("results stream: %w", sum.LogErr))
	}
	rec.Source = rangeSource{stream.Spilled{Logs: stream.WindowLogs{wl}, Held: sum.Windows}, rec.Start, rec.End}
	handedOver = true
	stopScrape()
	<-scrapeDone
	rec.Scrapes, _ = scr.Results()
	rec.Faults = g.ctl.Events()
	rec.Timings.Load = record.Duration(rec.End.Sub(rec.Start))
	rec.Planned = record.Duration(rec.End.Sub(rec.Start))
	rec.Verdicts = assertions.Evaluate(rec, finalDefs(sc.Assertions, rec))
	if err := writeTimeline(filepath.Join(o.OutDir, "timeline.json"), g.ctl.Timeline()); err != nil {
		rec.Problems = append(rec.Problems, err.Error())
	}
	return rec, err
}

type k6outcome struct {
	res k6run.Result
	err error
}

func tailOf(r k6run.Result) string {
	if strings.TrimSpace(r.Tail) == "" {
		return ""
	}
	return "\n  last lines of k6's output:\n    " + strings.ReplaceAll(strings.TrimSpace(r.Tail), "\n", "\n    ")
}

// requestStop ends the game day (the page's Stop button); by is who asked.
func (g *gameDay) requestStop(by string) {
	g.stopOnce.Do(func() {
		g.mu.Lock()
		g.stopBy = by
		g.mu.Unlock()
		close(g.stopCh)
	})
}

func (g *gameDay) stopper() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopBy
}

func (g *gameDay) stopping() bool {
	select {
	case <-g.stopCh:
		return true
	default:
		return false
	}
}

// kick makes the live loop publish now (after a fault was added or cleared).
func (g *gameDay) kick() {
	select {
	case g.kickCh <- struct{}{}:
	default:
	}
}

// Snapshot is what the page receives over Server-Sent Events.
type Snapshot struct {
	Time     time.Time     `json:"time"`
	Elapsed  float64       `json:"elapsed"`
	Stopping bool          `json:"stopping"`
	SLOs     []SLO         `json:"slos"`
	Points   []Point       `json:"points"`
	Faults   []ActiveFault `json:"faults"`
	Timeline []Entry       `json:"timeline"`
	// Spans are the faults' times in force, in seconds since load start,
	// for shading the plots; To is 0 while in force.
	Spans []Span `json:"spans"`
}

// Span is a fault's time in force.
type Span struct {
	Name string  `json:"name"`
	From float64 `json:"from"`
	To   float64 `json:"to,omitempty"`
}

func spans(evs []record.FaultEvent, start time.Time) []Span {
	out := []Span{}
	open := map[string]int{}
	for _, ev := range evs {
		t := ev.Actual.Sub(start.Truncate(time.Second)).Seconds()
		switch ev.Action {
		case record.Applied:
			open[ev.Fault] = len(out)
			out = append(out, Span{Name: ev.Fault, From: t})
		case record.Reverted:
			if i, ok := open[ev.Fault]; ok {
				out[i].To = t
				delete(open, ev.Fault)
			}
		}
	}
	return out
}

// publish evaluates the SLOs, applies the stop conditions and sends a
// snapshot to every page.
func (g *gameDay) publish(ctx context.Context) {
	guards := map[string]bool{}
	for _, n := range g.o.Guards {
		guards[n] = true
	}
	now := time.Now()
	slos := g.live.evaluate(g.sc.Assertions, guards)
	if !g.stopping() {
		g.stop.check(ctx, now, slos, g.ctl)
	}
	s := Snapshot{Time: now, Elapsed: now.Sub(g.start).Seconds(), Stopping: g.stopping(), SLOs: slos,
		Points: g.points(180), Faults: g.ctl.List(), Timeline: g.ctl.Timeline(), Spans: spans(g.ctl.Events(), g.start)}
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	g.mu.Lock()
	g.last = b
	g.mu.Unlock()
	g.hub.publish(b)
}

func (g *gameDay) snapshotJSON() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		return []byte("{}")
	}
	return g.last
}

// logTimeline writes the timeline entries after the first n to the log.
func (g *gameDay) logTimeline(n int) int {
	tl := g.ctl.Timeline()
	if g.o.Log != nil {
		for _, e := range tl[min(n, len(tl)):] {
			fmt.Fprintf(g.o.Log, "%s  %-16s %s\n", e.Time.Format("15:04:05"), e.By, e.What)
		}
	}
	return len(tl)
}

func newMeta(sc *scenario.Scenario, topo *testbed.Topology, o Options) Meta {
	m := Meta{Scenario: sc.Name, Edges: edgeNames(sc), Kinds: kindInfos(), Guards: append([]string{}, o.Guards...),
		Grace: o.Grace.String(), Slide: o.Slide.String(), Presets: []Preset{}}
	seen := map[string]bool{}
	for _, in := range topo.Instances {
		for _, h := range []string{in.Service, in.Name} {
			if !seen[h] {
				seen[h] = true
				m.Hosts = append(m.Hosts, h)
			}
		}
	}
	sort.Strings(m.Hosts)
	for _, f := range sc.Faults {
		m.Presets = append(m.Presets, Preset{Name: f.Name, Kind: f.Kind, Edge: f.Edge, Host: f.Host, Attributes: f.Attributes})
	}
	return m
}

// inRange reports whether w lies in the game day: from start's second to
// before end.
func inRange(w record.Window, start, end time.Time) bool {
	return !w.Start.Before(start.Truncate(time.Second)) && w.Start.Before(end)
}

// rangeSource yields the windows of a game day's results that lie in it.
type rangeSource struct {
	spilled    stream.Spilled
	start, end time.Time
}

// EachWindow calls f with each window in the game day.
func (r rangeSource) EachWindow(f func(record.Window) error) error {
	return r.spilled.EachWindow(func(w record.Window) error {
		if !inRange(w, r.start, r.end) {
			return nil
		}
		return f(w)
	})
}

// Close frees the log.
func (r rangeSource) Close() error { return r.spilled.Close() }

// finalDefs are the assertions judged on the whole game day. A window or
// baseline that names a fault never injected refers to the first fault
// injected instead; with none injected, such a window is the whole day.
func finalDefs(defs []scenario.Assertion, rec *record.Run) []scenario.Assertion {
	applied := map[string]bool{}
	for _, ev := range rec.Faults {
		if ev.Action == record.Applied {
			applied[ev.Fault] = true
		}
	}
	fix := func(s string, whole bool) string {
		w, err := assertions.ParseWindow(s)
		if err != nil || w.Kind == assertions.Whole || w.Fault == "" || applied[w.Fault] {
			return s
		}
		if len(applied) == 0 {
			if whole {
				return assertions.Whole
			}
			return s
		}
		return w.Kind
	}
	out := make([]scenario.Assertion, len(defs))
	for i, d := range defs {
		d.Window = fix(d.Window, true)
		d.Baseline = fix(d.Baseline, false)
		out[i] = d
	}
	return out
}

func writeTimeline(path string, tl []Entry) error {
	b, err := json.MarshalIndent(tl, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	return nil
}

// points are the plots' data: k6's windows with the targets' sheds and
// ejections of the same seconds.
func (g *gameDay) points(max int) []Point {
	pts := g.live.points(max)
	g.tgts.fill(pts)
	return pts
}
