package gameday

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// FaultRequest is a fault to inject, as the page and `chaosrun fault add`
// send it.
type FaultRequest struct {
	// Name identifies the fault while in force; default KIND@TARGET.
	Name string `json:"name,omitempty"`
	Kind string `json:"kind"`
	// Edge is "from->to" or "from->to.N"; Host names an instance for host
	// fault kinds.
	Edge       string             `json:"edge,omitempty"`
	Host       string             `json:"host,omitempty"`
	Direction  string             `json:"direction,omitempty"`
	Toxicity   *float64           `json:"toxicity,omitempty"`
	Attributes map[string]float64 `json:"attributes,omitempty"`
	// By is who asked (a name typed on the page, or the terminal's user).
	By string `json:"by,omitempty"`
}

// ActiveFault is a fault in force.
type ActiveFault struct {
	FaultRequest
	Since    time.Time `json:"since"`
	Describe string    `json:"describe"`
}

// Entry is one line of the timeline.
type Entry struct {
	Time time.Time `json:"time"`
	By   string    `json:"by"`
	What string    `json:"what"`
	// Kind is info, inject, clear, guard or error.
	Kind string `json:"kind"`
}

// control applies and reverts faults, and keeps the timeline and the fault
// events for the record.
type control struct {
	sc  *scenario.Scenario
	env faults.Env
	now func() time.Time
	// onApply is called before a fault is applied (ends the baseline).
	onApply func()

	mu       sync.Mutex
	active   map[string]*activeEntry
	events   []record.FaultEvent
	timeline []Entry
	// changes counts the applies and reverts under way; once ending is
	// set no new one starts, so that the final clear misses none.
	changes sync.WaitGroup
	ending  bool
}

type activeEntry struct {
	info  ActiveFault
	fault faults.Fault
}

func newControl(sc *scenario.Scenario, env faults.Env) *control {
	return &control{sc: sc, env: env, now: time.Now, active: map[string]*activeEntry{}, onApply: func() {}}
}

// note adds a timeline entry.
func (c *control) note(by, kind, format string, args ...any) {
	c.noteAt(c.now(), by, kind, format, args...)
}

// noteAt adds a timeline entry stamped at t: a stop condition's breach is
// stamped when the guard was evaluated, so its revert never appears to
// come before the grace has passed.
func (c *control) noteAt(t time.Time, by, kind, format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timeline = append(c.timeline, Entry{Time: t, By: by, Kind: kind, What: fmt.Sprintf(format, args...)})
}

// ErrBadRequest marks requests that are wrong (HTTP 400), as opposed to
// faults that could not be applied (HTTP 502).
var ErrBadRequest = errors.New("bad request")

// ErrNoSuchFault is returned by Clear for a name not in force.
var ErrNoSuchFault = errors.New("no such fault in force")

// ErrEnding refuses changes once the game day is ending (HTTP 409).
var ErrEnding = errors.New("the game day is ending: every fault is being cleared, and no new one is injected")

// begin starts a change (an apply or a revert) unless the game day is
// ending; end it with c.changes.Done.
func (c *control) begin() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ending {
		return ErrEnding
	}
	c.changes.Add(1)
	return nil
}

// Add validates and applies a fault. ctx is the game day's, never an HTTP
// request's: a client that leaves does not cut an apply short.
func (c *control) Add(ctx context.Context, r FaultRequest) (ActiveFault, error) {
	if r.Name != "" {
		if err := scenario.CheckFaultName(r.Name); err != nil {
			return ActiveFault{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
		}
	}
	if err := c.begin(); err != nil {
		return ActiveFault{}, err
	}
	defer c.changes.Done()
	r.By = who(r.By)
	target := r.Edge
	if faults.IsHostKind(r.Kind) {
		target = r.Host
		r.Edge = ""
	} else {
		r.Host = ""
		if _, err := c.sc.ProxiesFor(r.Edge); err != nil {
			return ActiveFault{}, fmt.Errorf("%w: edge %q: %v (allowed: %s)", ErrBadRequest, r.Edge, err, strings.Join(edgeNames(c.sc), ", "))
		}
	}
	if r.Name == "" {
		r.Name = r.Kind + "@" + target
	}
	spec := scenario.Fault{Name: r.Name, Kind: r.Kind, Edge: r.Edge, Host: r.Host, Direction: r.Direction, Toxicity: r.Toxicity, Attributes: r.Attributes}
	f, err := faults.New(spec)
	if err != nil {
		return ActiveFault{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	c.mu.Lock()
	if _, dup := c.active[r.Name]; dup {
		c.mu.Unlock()
		return ActiveFault{}, fmt.Errorf("%w: a fault named %q is already in force (clear it first, or pick another name)", ErrBadRequest, r.Name)
	}
	// Reserve the name while applying.
	c.active[r.Name] = &activeEntry{info: ActiveFault{FaultRequest: r}}
	c.mu.Unlock()

	c.onApply()
	at := c.now()
	aerr := f.Apply(ctx, c.env)
	var rerr error
	if aerr != nil && ctx.Err() != nil {
		// Cut short by the game day's end: whether it took effect is
		// unknown (its own rollback had no context left).
		rerr = c.undo(ctx, f)
	}
	done := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := record.FaultEvent{Fault: r.Name, Kind: r.Kind, Target: target, Scheduled: at, Actual: done, Detail: "manual by " + r.By}
	if aerr != nil {
		ev.Action, ev.Error = record.Failed, aerr.Error()
		c.events = append(c.events, ev)
		c.timeline = append(c.timeline, Entry{Time: done, By: r.By, Kind: "error", What: fmt.Sprintf("could not inject %s on %s: %v", r.Kind, target, aerr)})
		if rerr == nil {
			delete(c.active, r.Name)
			return ActiveFault{}, fmt.Errorf("applying %s: %w", r.Name, aerr)
		}
		// Maybe partly in force: kept, so that clearing it (or the end of
		// the game day) tries again.
		c.active[r.Name] = &activeEntry{info: ActiveFault{FaultRequest: r, Since: done, Describe: f.Describe() + " (may be partly in force)"}, fault: f}
		return ActiveFault{}, fmt.Errorf("applying %s: %w (and undoing it: %v; it stays listed until cleared)", r.Name, aerr, rerr)
	}
	ev.Action = record.Applied
	c.events = append(c.events, ev)
	info := ActiveFault{FaultRequest: r, Since: done, Describe: f.Describe()}
	c.active[r.Name] = &activeEntry{info: info, fault: f}
	c.timeline = append(c.timeline, Entry{Time: done, By: r.By, Kind: "inject", What: fmt.Sprintf("injected %s: %s", r.Name, f.Describe())})
	return info, nil
}

// undo reverts what a failed apply may have left, with a context of its
// own: the apply's may be what ended.
func (c *control) undo(ctx context.Context, f faults.Fault) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	if err := f.Revert(ctx, c.env); !errors.Is(err, faults.ErrGone) {
		return err
	}
	return nil
}

// undoTimeout bounds undoing a failed apply.
const undoTimeout = 15 * time.Second

// Clear reverts the fault named name; why says who or what asked. Like
// Add, it runs under the game day's context.
func (c *control) Clear(ctx context.Context, name, by, why string) error {
	if err := c.begin(); err != nil {
		return err
	}
	defer c.changes.Done()
	return c.clear(ctx, name, by, why)
}

// clear is Clear without the check for the game day's end.
func (c *control) clear(ctx context.Context, name, by, why string) error {
	by = who(by)
	c.mu.Lock()
	e, ok := c.active[name]
	if !ok || e.fault == nil {
		c.mu.Unlock()
		return fmt.Errorf("%w: %q (in force: %s)", ErrNoSuchFault, name, strings.Join(c.namesLocked(), ", "))
	}
	delete(c.active, name)
	c.mu.Unlock()

	at := c.now()
	rerr := e.fault.Revert(ctx, c.env)
	done := c.now()
	target := e.info.Edge + e.info.Host
	ev := record.FaultEvent{Fault: name, Kind: e.info.Kind, Target: target, Scheduled: at, Actual: done, Action: record.Reverted, Detail: "manual by " + by}
	if why != "" {
		ev.Detail += ": " + why
	}
	if errors.Is(rerr, faults.ErrGone) { // no longer in force: cleared, saying so
		ev.Error, rerr = rerr.Error(), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rerr != nil {
		c.active[name] = e // still (maybe) in force
		ev.Action, ev.Error = record.Failed, rerr.Error()
		c.events = append(c.events, ev)
		c.timeline = append(c.timeline, Entry{Time: done, By: by, Kind: "error", What: fmt.Sprintf("could not clear %s: %v", name, rerr)})
		return fmt.Errorf("reverting %s: %w", name, rerr)
	}
	c.events = append(c.events, ev)
	what := "cleared " + name
	if why != "" {
		what += " (" + why + ")"
	}
	c.timeline = append(c.timeline, Entry{Time: done, By: by, Kind: "clear", What: what})
	return nil
}

// Finish ends every change: no new one starts, those under way are waited
// for (until ctx ends), then every fault in force is reverted. It returns
// the names reverted.
func (c *control) Finish(ctx context.Context, by, why string) ([]string, error) {
	c.mu.Lock()
	c.ending = true
	c.mu.Unlock()
	waited := make(chan struct{})
	go func() {
		c.changes.Wait()
		close(waited)
	}()
	var errs []error
	select {
	case <-waited:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("fault changes still under way after %v: they may stay in force", context.Cause(ctx)))
	}
	names, err := c.ClearAll(ctx, by, why)
	return names, errors.Join(append(errs, err)...)
}

// ClearAll reverts every fault in force and returns the names reverted.
func (c *control) ClearAll(ctx context.Context, by, why string) ([]string, error) {
	c.mu.Lock()
	names := c.namesLocked()
	c.mu.Unlock()
	var errs []error
	var done []string
	for _, n := range names {
		if err := c.clear(ctx, n, by, why); err != nil {
			if !errors.Is(err, ErrNoSuchFault) {
				errs = append(errs, err)
			}
			continue
		}
		done = append(done, n)
	}
	return done, errors.Join(errs...)
}

// List returns the faults in force, by name.
func (c *control) List() []ActiveFault {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []ActiveFault{}
	for _, n := range c.namesLocked() {
		out = append(out, c.active[n].info)
	}
	return out
}

func (c *control) namesLocked() []string {
	out := make([]string, 0, len(c.active))
	for n, e := range c.active {
		if e.fault != nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Timeline returns a copy of the timeline.
func (c *control) Timeline() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Entry(nil), c.timeline...)
}

// Events returns the fault events for the record.
func (c *control) Events() []record.FaultEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]record.FaultEvent(nil), c.events...)
}

// who is who asked, as the timeline shows it: at most 64 characters,
// control characters (a forged timeline line) replaced.
func who(by string) string {
	by = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, strings.TrimSpace(by))
	if by == "" {
		return "anonymous"
	}
	if r := []rune(by); len(r) > 64 {
		by = string(r[:64])
	}
	return by
}

// edgeNames lists the scenario's edges ("from->to").
func edgeNames(sc *scenario.Scenario) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range sc.Edges() {
		for _, n := range []string{e.From + "->" + e.To, e.Proxy} {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}
