package faults

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// CleanupTimeout bounds reverting one fault once the schedule's context is
// done (and rolling back a partial apply).
const CleanupTimeout = 5 * time.Second

// HostRevertTimeout bounds reverting a host fault: starting a killed or
// stopped service again and waiting until it is healthy (a database's
// crash recovery and its health check's interval) takes longer than
// removing a toxic.
const HostRevertTimeout = 30 * time.Second

// revertTimeout is how long reverting a fault of kind may take.
func revertTimeout(kind string) time.Duration {
	if IsHostKind(kind) {
		return HostRevertTimeout
	}
	return CleanupTimeout
}

// Step is one action of the fault schedule, at an offset from load start.
type Step struct {
	At     time.Duration
	Fault  string
	Action record.FaultAction
	// Index is the fault's position in the specs.
	Index int
}

// Plan turns a fault schedule into steps sorted by offset: each fault is
// applied at Start and reverted at Start+Duration. At the same instant
// reverts come before applies, then faults keep their order in specs. Names
// must be unique and non-empty, Start ≥ 0 and Duration > 0.
func Plan(specs []scenario.Fault) ([]Step, error) {
	seen := map[string]int{}
	var errs []error
	steps := make([]Step, 0, 2*len(specs))
	for i, s := range specs {
		where := fmt.Sprintf("faults[%d] (%s)", i, s.Name)
		switch j, dup := seen[s.Name]; {
		case s.Name == "":
			errs = append(errs, fmt.Errorf("faults[%d]: empty name", i))
		case dup:
			errs = append(errs, fmt.Errorf("%s: name already used by faults[%d] (allowed: unique names)", where, j))
		default:
			seen[s.Name] = i
		}
		if s.Start < 0 {
			errs = append(errs, fmt.Errorf("%s: start %s is negative (allowed: ≥ 0)", where, s.Start.Std()))
		}
		if s.Duration <= 0 {
			errs = append(errs, fmt.Errorf("%s: duration %s must be > 0", where, s.Duration.Std()))
		}
		steps = append(steps,
			Step{At: s.Start.Std(), Fault: s.Name, Action: record.Applied, Index: i},
			Step{At: s.Start.Std() + s.Duration.Std(), Fault: s.Name, Action: record.Reverted, Index: i})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.SortStableFunc(steps, func(a, b Step) int {
		return cmp.Or(
			cmp.Compare(a.At, b.At),
			cmp.Compare(actionOrder(a.Action), actionOrder(b.Action)),
			cmp.Compare(a.Index, b.Index),
		)
	})
	return steps, nil
}

func actionOrder(a record.FaultAction) int {
	if a == record.Reverted {
		return 0
	}
	return 1
}

// Run applies and reverts the faults on schedule: each at start+Start, each
// revert at start+Start+Duration, waiting on clk. emit receives an event per
// action, with the scheduled time and clk.Now() right after Toxiproxy
// answered. A failed apply emits a Failed event and the schedule goes on
// (its revert is skipped); a failed revert emits a Failed event, and Run
// returns an error naming the faults that may still be in force. When ctx
// is done, Run reverts every fault in force (each within CleanupTimeout,
// even though ctx is done), emits their events and returns ctx.Err().
// None of the kinds draws random numbers: Toxiproxy's own randomness
// (toxicity, jitter) is seeded by the testbed.
func Run(ctx context.Context, clk clock.Clock, start time.Time, specs []scenario.Fault, env Env, emit func(record.FaultEvent)) error {
	steps, err := Plan(specs)
	if err != nil {
		return fmt.Errorf("fault schedule: %w", err)
	}
	built := make([]Fault, len(specs))
	for i, s := range specs {
		if built[i], err = New(s); err != nil {
			return fmt.Errorf("fault schedule: %w", err)
		}
	}
	s := &schedule{clk: clk, start: start, specs: specs, built: built, env: env, emit: emit, active: map[int]bool{}}
	for _, st := range steps {
		if err := s.wait(ctx, start.Add(st.At)); err != nil {
			s.cleanup(ctx)
			return err
		}
		if st.Action == record.Applied {
			s.apply(ctx, st)
		} else {
			s.revert(ctx, st)
		}
		if err := ctx.Err(); err != nil {
			s.cleanup(ctx)
			return err
		}
	}
	var errs []error
	if len(s.stuck) > 0 {
		errs = append(errs, fmt.Errorf("fault schedule: could not revert %v: they may still be in force", s.stuck))
	}
	for _, err := range s.outside {
		errs = append(errs, fmt.Errorf("fault schedule: %w", err))
	}
	return errors.Join(errs...)
}

// schedule is the state of one Run.
type schedule struct {
	clk    clock.Clock
	start  time.Time
	specs  []scenario.Fault
	built  []Fault
	env    Env
	emit   func(record.FaultEvent)
	active map[int]bool // faults in force, by spec index
	order  []int        // spec indexes in the order they were applied
	stuck  []string     // faults whose revert failed
	// outside are what something outside the run did to its faults'
	// toxics (ErrGone, ErrTampered), found at their revert.
	outside []error
}

// wait blocks until clk reaches t or ctx is done.
func (s *schedule) wait(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d := t.Sub(s.clk.Now())
	if d <= 0 {
		return nil
	}
	select {
	case <-s.clk.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *schedule) event(i int, action record.FaultAction, scheduled time.Time, err error) record.FaultEvent {
	ev := record.FaultEvent{
		Fault:     s.specs[i].Name,
		Kind:      s.specs[i].Kind,
		Target:    cmp.Or(s.specs[i].Edge, s.specs[i].Host),
		Action:    action,
		Scheduled: scheduled,
		Actual:    s.clk.Now(),
		Detail:    s.built[i].Describe(),
	}
	if c, ok := s.built[i].(Counter); ok && action == record.Reverted {
		ev.Counts = c.Counts()
	}
	if err != nil {
		ev.Action = record.Failed
		ev.Error = err.Error()
	}
	return ev
}

func (s *schedule) apply(ctx context.Context, st Step) {
	err := s.built[st.Index].Apply(ctx, s.env)
	ev := s.event(st.Index, record.Applied, s.start.Add(st.At), err)
	if err != nil {
		ev.Error = "apply: " + ev.Error
	} else {
		s.active[st.Index] = true
		s.order = append(s.order, st.Index)
	}
	s.emit(ev)
}

func (s *schedule) revert(ctx context.Context, st Step) {
	s.revertWithin(ctx, st, revertTimeout(s.specs[st.Index].Kind))
}

// revertWithin reverts the step's fault, taking at most d.
func (s *schedule) revertWithin(ctx context.Context, st Step, d time.Duration) {
	if !s.active[st.Index] {
		return // its apply failed: nothing to revert
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	defer cancel()
	err := s.built[st.Index].Revert(rctx, s.env)
	ev := s.event(st.Index, record.Reverted, s.start.Add(st.At), err)
	switch {
	case errors.Is(err, ErrGone), errors.Is(err, ErrTampered): // reverted; something outside the run acted on it
		ev.Action, ev.Error = record.Reverted, "revert: "+ev.Error
		s.outside = append(s.outside, fmt.Errorf("[%s]: %w", s.specs[st.Index].Name, err))
	case err != nil:
		ev.Error = "revert: " + ev.Error
		s.stuck = append(s.stuck, s.specs[st.Index].Name)
	}
	delete(s.active, st.Index)
	s.emit(ev)
}

// cleanup reverts every fault still in force, newest first, with a fresh
// bounded context per fault.
func (s *schedule) cleanup(ctx context.Context) {
	for k := len(s.order) - 1; k >= 0; k-- {
		i := s.order[k]
		if !s.active[i] {
			continue
		}
		spec := s.specs[i]
		s.revertWithin(ctx, Step{At: spec.Start.Std() + spec.Duration.Std(), Fault: spec.Name, Action: record.Reverted, Index: i}, CleanupTimeout)
	}
}

// RevertAll reverts every fault of specs whether or not it is in force, for
// a runner cleaning up after a crash or an interrupted schedule. Each fault
// gets CleanupTimeout, even if ctx is done; faults not in force count as
// reverted. It returns every failure, joined.
func RevertAll(ctx context.Context, specs []scenario.Fault, env Env) error {
	var errs []error
	for k := len(specs) - 1; k >= 0; k-- {
		f, err := New(specs[k])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
		if err := f.Revert(rctx, env); err != nil && !errors.Is(err, ErrGone) {
			errs = append(errs, fmt.Errorf("fault %s: revert: %w", specs[k].Name, err))
		}
		cancel()
	}
	return errors.Join(errs...)
}
