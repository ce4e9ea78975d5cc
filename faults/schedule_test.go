package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

func sec(n float64) scenario.Duration {
	return scenario.Duration(time.Duration(n * float64(time.Second)))
}

func lat(name string, start, dur float64) scenario.Fault {
	return scenario.Fault{Name: name, Kind: "latency", Edge: "a->b", Start: sec(start), Duration: sec(dur),
		Attributes: map[string]float64{"latency": 100}}
}

func stepsString(steps []Step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = fmt.Sprintf("%s %s %s", s.At, s.Action, s.Fault)
	}
	return strings.Join(parts, "; ")
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name  string
		specs []scenario.Fault
		want  string
	}{
		{"none", nil, ""},
		{"one", []scenario.Fault{lat("x", 20, 20)}, "20s applied x; 40s reverted x"},
		{"overlapping", []scenario.Fault{lat("x", 10, 20), lat("y", 5, 10)},
			"5s applied y; 10s applied x; 15s reverted y; 30s reverted x"},
		{"revert before apply at the same instant", []scenario.Fault{lat("y", 10, 5), lat("x", 0, 10)},
			"0s applied x; 10s reverted x; 10s applied y; 15s reverted y"},
		{"equal instants keep spec order", []scenario.Fault{lat("b", 1, 2), lat("a", 1, 2)},
			"1s applied b; 1s applied a; 3s reverted b; 3s reverted a"},
		{"sub-second", []scenario.Fault{lat("x", 0.25, 0.5)}, "250ms applied x; 750ms reverted x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := Plan(tc.specs)
			if err != nil {
				t.Fatal(err)
			}
			if got := stepsString(steps); got != tc.want {
				t.Errorf("Plan\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}

func TestPlanErrors(t *testing.T) {
	tests := []struct {
		name  string
		specs []scenario.Fault
		want  []string
	}{
		{"duplicate", []scenario.Fault{lat("x", 0, 1), lat("x", 2, 1)}, []string{"faults[1] (x): name already used by faults[0]"}},
		{"zero duration", []scenario.Fault{lat("x", 0, 0)}, []string{"faults[0] (x): duration 0s must be > 0"}},
		{"negative start", []scenario.Fault{lat("x", -1, 1)}, []string{"faults[0] (x): start -1s is negative"}},
		{"empty name", []scenario.Fault{lat("", 0, 1)}, []string{"faults[0]: empty name"}},
		{"two at once", []scenario.Fault{lat("x", -1, 0)}, []string{"start -1s is negative", "duration 0s must be > 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Plan(tc.specs)
			if err == nil {
				t.Fatal("Plan succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// runner runs the schedule in a goroutine and collects its events.
type runner struct {
	mu     sync.Mutex
	events []record.FaultEvent
	done   chan error
}

func startRun(ctx context.Context, clk clock.Clock, specs []scenario.Fault, env Env) *runner {
	r := &runner{done: make(chan error, 1)}
	go func() {
		r.done <- Run(ctx, clk, t0, specs, env, func(ev record.FaultEvent) {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		})
	}()
	return r
}

func (r *runner) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s")
		return nil
	}
}

func (r *runner) summary() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		s := fmt.Sprintf("%s %s sched=%s actual=%s", ev.Action, ev.Fault, ev.Scheduled.Sub(t0), ev.Actual.Sub(t0))
		if ev.Error != "" {
			s += " err=" + ev.Error
		}
		out = append(out, s)
	}
	return out
}

func TestRunAppliesAndRevertsOnSchedule(t *testing.T) {
	clk := clock.NewFake(t0)
	api := newFakeAPI()
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}}, api: api}
	specs := []scenario.Fault{lat("x", 10, 20), lat("y", 30, 5)}
	r := startRun(context.Background(), clk, specs, env)
	// Each wait: the schedule parks on one timer; step the clock to it.
	for _, d := range []time.Duration{10 * time.Second, 20 * time.Second, 5 * time.Second} {
		clk.BlockUntil(1)
		clk.Advance(d)
	}
	if err := r.wait(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{
		"applied x sched=10s actual=10s",
		"reverted x sched=30s actual=30s",
		"applied y sched=30s actual=30s",
		"reverted y sched=35s actual=35s",
	}
	if got := r.summary(); !slices.Equal(got, want) {
		t.Errorf("events\n got: %q\nwant: %q", got, want)
	}
	ev := r.events[0]
	if ev.Kind != "latency" || ev.Target != "a->b" || ev.Detail != "latency 100ms downstream on a->b" {
		t.Errorf("event fields: %+v", ev)
	}
	if n := api.Remaining(); n != 0 {
		t.Errorf("%d toxics remain", n)
	}
}

func TestRunLateClockRecordsActual(t *testing.T) {
	// The clock overshoots: the apply happens late and Actual says so.
	clk := clock.NewFake(t0)
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}}, api: newFakeAPI()}
	r := startRun(context.Background(), clk, []scenario.Fault{lat("x", 1, 1)}, env)
	clk.BlockUntil(1)
	clk.Advance(1500 * time.Millisecond) // fires at 1s, clock lands at 1.5s
	clk.BlockUntil(1)
	clk.Advance(time.Second)
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	// Advance finishes before the woken schedule can read the clock, so the
	// apply lands at 1.5s; the revert is still due at 2s and lands at 2.5s.
	want := []string{"applied x sched=1s actual=1.5s", "reverted x sched=2s actual=2.5s"}
	if got := r.summary(); !slices.Equal(got, want) {
		t.Errorf("events\n got: %q\nwant: %q", got, want)
	}
}

func TestRunFailedApplySkipsRevertAndContinues(t *testing.T) {
	clk := clock.NewFake(t0)
	api := newFakeAPI()
	api.failOn["add a->b chaosrun-x"] = true
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}}, api: api}
	r := startRun(context.Background(), clk, []scenario.Fault{lat("x", 1, 1), lat("y", 3, 1)}, env)
	for _, d := range []time.Duration{time.Second, 2 * time.Second, time.Second} {
		clk.BlockUntil(1)
		clk.Advance(d)
	}
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	got := r.summary()
	if len(got) != 3 || !strings.HasPrefix(got[0], "failed x sched=1s actual=1s err=apply: injected failure") ||
		got[1] != "applied y sched=3s actual=3s" || got[2] != "reverted y sched=4s actual=4s" {
		t.Errorf("events %q", got)
	}
	for _, c := range api.Calls() {
		if strings.HasPrefix(c, "remove a->b chaosrun-x") {
			t.Errorf("revert of a failed apply was attempted: %q", c)
		}
	}
}

func TestRunFailedRevertReturnsError(t *testing.T) {
	clk := clock.NewFake(t0)
	api := newFakeAPI()
	api.failOn["remove a->b chaosrun-x"] = true
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}}, api: api}
	r := startRun(context.Background(), clk, []scenario.Fault{lat("x", 0, 1)}, env)
	clk.BlockUntil(1)
	clk.Advance(time.Second)
	err := r.wait(t)
	if err == nil || !strings.Contains(err.Error(), "could not revert [x]") {
		t.Fatalf("Run error = %v, want one naming x", err)
	}
	got := r.summary()
	if len(got) != 2 || !strings.HasPrefix(got[1], "failed x sched=1s actual=1s err=revert: injected failure") {
		t.Errorf("events %q", got)
	}
}

// TestRunToxicRemovedBehindItsBack: a toxic another process removed while
// its fault was in force makes the run's schedule fail naming it, and the
// revert event says so; the fault still counts as reverted.
func TestRunToxicRemovedBehindItsBack(t *testing.T) {
	clk := clock.NewFake(t0)
	api := newFakeAPI()
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}}, api: api}
	r := startRun(context.Background(), clk, []scenario.Fault{lat("x", 1, 5)}, env)
	clk.BlockUntil(1)
	clk.Advance(time.Second) // applied
	clk.BlockUntil(1)
	if err := api.RemoveToxic(context.Background(), "a->b", "chaosrun-x"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Second)
	err := r.wait(t)
	if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "[x]") {
		t.Fatalf("Run error = %v, want ErrGone naming x", err)
	}
	got := r.summary()
	if len(got) != 2 || !strings.HasPrefix(got[1], "reverted x sched=6s actual=6s err=revert: the toxic was already gone") {
		t.Errorf("events %q", got)
	}
}

func TestRunCancelRevertsActiveFaults(t *testing.T) {
	clk := clock.NewFake(t0)
	api := newFakeAPI()
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b.0", "a->b.1"}, "c->d": {"c->d"}}, api: api}
	down := scenario.Fault{Name: "down", Kind: "proxy_down", Edge: "c->d", Start: sec(2), Duration: sec(100)}
	specs := []scenario.Fault{lat("x", 1, 100), down, lat("later", 50, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r := startRun(ctx, clk, specs, env)
	clk.BlockUntil(1)
	clk.Advance(time.Second)
	clk.BlockUntil(1) // fired timers leave the pending set
	clk.Advance(time.Second)
	clk.BlockUntil(1)
	clk.Advance(3 * time.Second)
	cancel()
	if err := r.wait(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	want := []string{
		"applied x sched=1s actual=1s",
		"applied down sched=2s actual=2s",
		"reverted down sched=1m42s actual=5s",
		"reverted x sched=1m41s actual=5s",
	}
	if got := r.summary(); !slices.Equal(got, want) {
		t.Errorf("events\n got: %q\nwant: %q", got, want)
	}
	if n := api.Remaining(); n != 0 {
		t.Errorf("%d toxics remain after cancel", n)
	}
	calls := api.Calls()
	if !slices.Contains(calls, "enable c->d true") {
		t.Errorf("proxy not re-enabled: %q", calls)
	}
}

func TestRunCancelDuringApply(t *testing.T) {
	// The context ends while Toxiproxy answers the apply: the fault counts
	// as applied and is reverted at once.
	clk := clock.NewFake(t0)
	api := newFakeAPI()
	ctx, cancel := context.WithCancel(context.Background())
	api.onCall = func(call string) {
		if strings.HasPrefix(call, "add") {
			cancel()
		}
	}
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}}, api: api}
	r := startRun(ctx, clk, []scenario.Fault{lat("x", 0, 10)}, env)
	if err := r.wait(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v", err)
	}
	want := []string{"applied x sched=0s actual=0s", "reverted x sched=10s actual=0s"}
	if got := r.summary(); !slices.Equal(got, want) {
		t.Errorf("events\n got: %q\nwant: %q", got, want)
	}
	if n := api.Remaining(); n != 0 {
		t.Errorf("%d toxics remain", n)
	}
}

func TestRunRejectsBadSpecsBeforeActing(t *testing.T) {
	api := newFakeAPI()
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}}, api: api}
	bad := scenario.Fault{Name: "x", Kind: "nope", Edge: "a->b", Duration: sec(1)}
	err := Run(context.Background(), clock.NewFake(t0), t0, []scenario.Fault{lat("ok", 0, 1), bad}, env, func(record.FaultEvent) {})
	if err == nil || !strings.Contains(err.Error(), "unknown fault kind") {
		t.Fatalf("Run error = %v", err)
	}
	if len(api.Calls()) != 0 {
		t.Errorf("calls made despite a bad schedule: %q", api.Calls())
	}
}

func TestRevertAll(t *testing.T) {
	api := newFakeAPI()
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}, "c->d": {"c->d"}}, api: api}
	specs := []scenario.Fault{lat("x", 0, 1), lat("y", 0, 1), {Name: "down", Kind: "proxy_down", Edge: "c->d", Duration: sec(1)}}
	f, _ := New(specs[0])
	if err := f.Apply(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if err := RevertAll(context.Background(), specs, env); err != nil {
		t.Fatalf("RevertAll: %v", err)
	}
	if n := api.Remaining(); n != 0 {
		t.Errorf("%d toxics remain", n)
	}
	api.failOn["enable c->d"] = true
	if err := RevertAll(context.Background(), specs, env); err == nil || !strings.Contains(err.Error(), "fault down: revert") {
		t.Errorf("RevertAll error = %v, want one naming fault down", err)
	}
}
