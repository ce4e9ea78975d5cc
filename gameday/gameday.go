// Package gameday runs a game day: a scenario's testbed under steady load
// until stopped, a web page (and JSON API) to inject and clear faults by
// hand while watching the scenario's SLOs live over a sliding window, stop
// conditions that revert every fault when a guard assertion breaches for
// longer than its grace, and at the end the same run record as a run, with
// the manual actions as fault events.
package gameday

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// Options configures a game day.
type Options struct {
	Scenario *scenario.Scenario
	Testbed  testbed.Testbed
	// Load makes the game day's load once the testbed is up.
	Load engine.NewLoad
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
var ErrInterrupted = runner.ErrInterrupted

type gameDay struct {
	// ctx is the session's: faults are applied and reverted under it.
	ctx   context.Context
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
	logged   int
	// pageErr gets the page server's error if it stops serving.
	pageErr chan error
}

// CheckListen refuses to serve without a token on any address but
// 127.0.0.1 (other loopback addresses too: a container or a namespace may
// share them).
func CheckListen(listen, token string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w (allowed: HOST:PORT, e.g. 127.0.0.1:0)", listen, err)
	}
	if token == "" && host != "127.0.0.1" {
		return fmt.Errorf("--listen %s: serving on any address but 127.0.0.1 needs --token, so that only people with it can inject faults", listen)
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
	if err := o.defaults(); err != nil {
		return nil, err
	}
	sc := o.Scenario
	g := &gameDay{o: o, sc: sc, token: o.Token, live: newLive(o.Slide), tgts: newTargetSeries(),
		stop: newStopConditions(o.Guards, o.Grace), hub: newHub(), stopCh: make(chan struct{}), kickCh: make(chan struct{}, 1),
		pageErr: make(chan error, 1)}
	s := runner.NewSession(runner.SessionOptions{Scenario: sc, Testbed: o.Testbed, Load: o.Load, Duration: o.MaxDuration,
		Limit: o.MaxDuration + 3*time.Minute, OutDir: o.OutDir, Allowed: o.Allowed, Versions: o.Versions,
		Overrides: o.Overrides, OnScrape: g.tgts.add, OnWindow: g.live.add})
	defer func() {
		s.Close()
		err = s.Err()
	}()
	rec = s.Record()
	if !start(ctx, s, func() { g.requestStop("Ctrl-C") }) {
		return rec, nil
	}
	g.ctx = s.Context()
	g.ctl = newControl(sc, s.Faults())
	g.ctl.onApply = g.live.freeze
	g.meta = newMeta(sc, s.Topology(), o)
	g.start = rec.Start
	g.live.setStart(rec.Start)
	g.tgts.setStart(rec.Start)

	stopPage, perr := g.listenPage(ctx)
	if perr != nil {
		s.Fail(perr)
		return rec, nil
	}
	defer stopPage()
	if perr := g.liveLoop(s); perr != nil {
		s.Fail(perr)
	}

	// Every fault is reverted before load stops, with a fresh context,
	// once the changes under way have ended.
	rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if names, cerr := g.ctl.Finish(rctx, "chaosrun", "the game day ended"); cerr != nil {
		s.Fail(fmt.Errorf("reverting faults at the end: %w", cerr))
	} else if len(names) > 0 {
		g.ctl.note("chaosrun", "clear", "reverted at the end: %s", strings.Join(names, ", "))
	}
	cancel()
	g.publish(s.Context())
	g.logTimeline(g.logged)
	s.End()
	s.Finish()
	rec.Source = rangeSource{rec.Source, rec.Start, rec.End}
	rec.Faults = g.ctl.Events()
	rec.Planned = record.Duration(rec.End.Sub(rec.Start))
	for _, n := range Judge(sc, rec, s.ScriptChecks()) {
		s.Note(n)
	}
	if terr := writeTimeline(filepath.Join(o.OutDir, "timeline.json"), g.ctl.Timeline()); terr != nil {
		s.Note(terr.Error())
	}
	return rec, nil
}

// start starts the session. An interrupt (ctx ending) while it starts
// aborts it; once load runs, an interrupt is the ordinary way to end a
// game day and calls stop, as the page's Stop button does, so that the
// faults are reverted, the end checks run and the day is judged. It
// reports whether the session started.
func start(ctx context.Context, s *runner.Session, stop func()) bool {
	sctx, abort := context.WithCancelCause(context.WithoutCancel(ctx))
	unwatch := context.AfterFunc(ctx, func() { abort(context.Cause(ctx)) })
	if ctx.Err() != nil { // AfterFunc would abort in a goroutine of its own
		abort(context.Cause(ctx))
	}
	if s.Start(sctx) != nil {
		unwatch()
		return false
	}
	if !unwatch() { // interrupted as load started: the session saw it
		return true
	}
	context.AfterFunc(ctx, stop)
	return true
}

// defaults fills the options' defaults and checks them.
func (o *Options) defaults() error {
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
		return err
	}
	return CheckGuards(o.Scenario, o.Guards)
}

// pageListen opens the page's listener (tests replace it).
var pageListen = func(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", addr)
}

// listenPage serves the page and API until the returned stop is called.
func (g *gameDay) listenPage(ctx context.Context) (stop func(), err error) {
	ln, err := pageListen(ctx, g.o.Listen)
	if err != nil {
		return nil, fmt.Errorf("page: listen on %s: %w", g.o.Listen, err)
	}
	srv := &http.Server{Handler: g.handler(), ReadHeaderTimeout: 10 * time.Second}
	srvDone := make(chan struct{})
	go func() {
		defer close(srvDone)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			g.pageErr <- fmt.Errorf("the game day's page stopped serving on %s: %w", ln.Addr(), err)
		}
	}()
	g.ctl.note("chaosrun", "info", "game day started: %s under steady load; live SLOs over the last %s", g.sc.Name, g.o.Slide)
	if len(g.o.Guards) > 0 {
		g.ctl.note("chaosrun", "info", "stop conditions: %s (grace %s)", strings.Join(g.o.Guards, ", "), g.o.Grace)
	}
	if g.o.Ready != nil {
		u := "http://" + ln.Addr().String() + "/"
		if g.o.Token != "" {
			u += "?token=" + g.o.Token
		}
		g.o.Ready(u)
	}
	return func() {
		g.hub.close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if serr := srv.Shutdown(sctx); serr != nil {
			srv.Close()
		}
		<-srvDone
	}, nil
}

// liveLoop evaluates, checks stop conditions and publishes twice a second
// until the session ends: Stop, the load's end, a failure or an interrupt.
// A page server that stops serving ends it too, with its error.
func (g *gameDay) liveLoop(s *runner.Session) (pageErr error) {
	done := make(chan error, 1)
	go func() { done <- s.Await(g.stopCh) }()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		g.publish(s.Context())
		g.logged = g.logTimeline(g.logged)
		select {
		case <-tick.C:
		case <-g.kickCh:
		case pageErr = <-g.pageErr:
			g.ctl.note("chaosrun", "error", "%v: ending the game day", pageErr)
			g.requestStop("")
		case why := <-done:
			switch {
			case g.stopping():
				g.ctl.note(g.stopper(), "info", "game day stopped")
			case why == nil:
				g.ctl.note("chaosrun", "info", "load ended after --max-duration %s", g.o.MaxDuration)
			case errors.Is(why, runner.ErrInterrupted):
				g.ctl.note("chaosrun", "info", "game day interrupted")
			}
			g.requestStop("")
			return pageErr
		}
	}
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
	spilled    record.WindowSource
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
func (r rangeSource) Close() error {
	if c, ok := r.spilled.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Judge gives a game day's record its verdicts through assertions.Judge,
// as run and judge do, with script the load's own checks: sc's assertions
// as finalDefs gives them, and no fault schedule (a game day's faults are
// presets the operator may or may not inject, never "not applied"). It
// returns the problems to note.
func Judge(sc *scenario.Scenario, rec *record.Run, script []scenario.Assertion) []string {
	day := *sc
	day.Assertions = finalDefs(sc.Assertions, rec)
	day.Faults = nil
	notes := assertions.Judge(&day, rec, script)
	markNotApplicable(sc.Assertions, rec)
	return notes
}

// markNotApplicable makes n/a, not failed, the verdicts of a day in which
// no fault was injected on assertions that judge a fault's window or
// compare with the time before one: they have nothing to judge.
func markNotApplicable(defs []scenario.Assertion, rec *record.Run) {
	for _, ev := range rec.Faults {
		if ev.Action == record.Applied {
			return
		}
	}
	why, window := map[string]string{}, map[string]string{}
	for _, d := range defs {
		if r := faultDependence(d); r != "" {
			why[d.Name], window[d.Name] = r, cmp.Or(d.Window, assertions.Whole)
		}
	}
	for i, v := range rec.Verdicts {
		if r, ok := why[v.Assertion]; ok && v.Source == "" {
			rec.Verdicts[i] = record.Verdict{Assertion: v.Assertion, Check: v.Check, Metric: v.Metric, Window: window[v.Assertion] + " (no fault injected)",
				Unit: v.Unit, Pass: true, NotApplicable: r + ", and no fault was injected"}
		}
	}
}

// faultDependence says how an assertion depends on a fault being applied:
// its window is one (before, during, after), or its check compares with
// the baseline, by default the time before the first fault; "" when it
// does not.
func faultDependence(d scenario.Assertion) string {
	if w, err := assertions.ParseWindow(d.Window); err == nil && w.Kind != assertions.Whole {
		return "its window is " + w.String()
	}
	for _, c := range d.Checks {
		if strings.Contains(c.Threshold, "baseline") {
			if d.Baseline == "" {
				return "its check compares with the baseline, the time before the first fault"
			}
			if w, err := assertions.ParseWindow(d.Baseline); err == nil && w.Kind != assertions.Whole {
				return "its check compares with the baseline, " + w.String()
			}
		}
	}
	return ""
}

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
