package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/chaosrun/chaosrun/clock"
)

// fakeAPI records every call; failOn makes calls whose description contains
// a key fail.
type fakeAPI struct {
	mu     sync.Mutex
	clk    *clock.Fake
	calls  []string
	toxics map[string][]string // proxy -> toxic names
	failOn map[string]bool
	// onCall runs after each call is recorded (e.g. to cancel a context).
	onCall func(call string)
}

func newFakeAPI() *fakeAPI {
	return &fakeAPI{toxics: map[string][]string{}, failOn: map[string]bool{}}
}

func (a *fakeAPI) record(call string) error {
	a.mu.Lock()
	a.calls = append(a.calls, call)
	fail := false
	for k := range a.failOn {
		if strings.Contains(call, k) {
			fail = true
		}
	}
	hook := a.onCall
	a.mu.Unlock()
	if hook != nil {
		hook(call)
	}
	if fail {
		return fmt.Errorf("injected failure on %s", call)
	}
	return nil
}

func (a *fakeAPI) AddToxic(_ context.Context, proxy string, t Toxic) error {
	if err := a.record(fmt.Sprintf("add %s %s %s %s %v %v", proxy, t.Name, t.Type, t.Stream, t.Toxicity, t.Attributes)); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.toxics[proxy] = append(a.toxics[proxy], t.Name)
	return nil
}

func (a *fakeAPI) RemoveToxic(_ context.Context, proxy, name string) error {
	if err := a.record(fmt.Sprintf("remove %s %s", proxy, name)); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.Index(a.toxics[proxy], name)
	if i < 0 {
		return fmt.Errorf("toxic %s: %w", name, ErrNotFound)
	}
	a.toxics[proxy] = slices.Delete(a.toxics[proxy], i, i+1)
	return nil
}

func (a *fakeAPI) SetProxyEnabled(_ context.Context, proxy string, enabled bool) error {
	return a.record(fmt.Sprintf("enable %s %v", proxy, enabled))
}

func (a *fakeAPI) Calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

func (a *fakeAPI) Remaining() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, ts := range a.toxics {
		n += len(ts)
	}
	return n
}

// fakeEnv maps edges to proxies.
type fakeEnv struct {
	edges map[string][]string
	api   ToxicAPI
	// native says the load adds no toxics of its own.
	native bool
}

func (e *fakeEnv) ScriptsAddToxics() bool { return !e.native }

func (e *fakeEnv) ProxiesFor(edge string) ([]string, error) {
	ps, ok := e.edges[edge]
	if !ok {
		return nil, fmt.Errorf("no edge %q", edge)
	}
	return ps, nil
}

func (e *fakeEnv) Toxics() ToxicAPI { return e.api }
