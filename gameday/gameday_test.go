package gameday

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// fakeToxics is a Toxiproxy API in memory.
type fakeToxics struct {
	mu     sync.Mutex
	toxics map[string]bool // proxy/name
	fail   bool
}

func (f *fakeToxics) AddToxic(_ context.Context, proxy string, t faults.Toxic) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return errors.New("toxiproxy down")
	}
	f.toxics[proxy+"/"+t.Name] = true
	return nil
}

func (f *fakeToxics) RemoveToxic(_ context.Context, proxy, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.toxics, proxy+"/"+name)
	return nil
}

func (f *fakeToxics) SetProxyEnabled(context.Context, string, bool) error { return nil }

func (f *fakeToxics) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.toxics)
}

func testScenario() *scenario.Scenario {
	return &scenario.Scenario{Name: "t", Services: map[string]*scenario.Service{
		"bank":  {Run: "bankservice", DependsOn: []string{"vault"}},
		"vault": {Run: "vault"},
	}, Assertions: []scenario.Assertion{{Name: "a", Metric: "http_req_duration", Checks: scenario.Checks("p(99) < 100ms")}}}
}

func newTestControl(t *testing.T) (*control, *fakeToxics) {
	t.Helper()
	sc := testScenario()
	api := &fakeToxics{toxics: map[string]bool{}}
	return newControl(sc, &faults.ScenarioEnv{Scenario: sc, API: api}), api
}

func TestControlAddClear(t *testing.T) {
	c, api := newTestControl(t)
	ctx := context.Background()
	af, err := c.Add(ctx, FaultRequest{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 2000}, By: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if af.Name != "latency@bank->vault" || api.count() != 1 {
		t.Fatalf("added %+v, %d toxics", af, api.count())
	}
	for _, bad := range []FaultRequest{
		{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 1}},  // name in force
		{Kind: "latency", Edge: "bank->ledger", Attributes: map[string]float64{"latency": 1}}, // no such edge
		{Name: "x", Kind: "nope", Edge: "bank->vault"},                                        // no such kind
		{Name: "y", Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": -1}},
	} {
		if _, err := c.Add(ctx, bad); !errors.Is(err, ErrBadRequest) {
			t.Errorf("Add(%+v) = %v, want a bad request", bad, err)
		}
	}
	if err := c.Clear(ctx, "nope", "bob", ""); !errors.Is(err, ErrNoSuchFault) {
		t.Errorf("Clear(nope) = %v", err)
	}
	if err := c.Clear(ctx, af.Name, "bob", ""); err != nil || api.count() != 0 || len(c.List()) != 0 {
		t.Fatalf("Clear = %v; %d toxics, %d active", err, api.count(), len(c.List()))
	}
	evs := c.Events()
	if len(evs) != 2 || evs[0].Action != record.Applied || evs[0].Detail != "manual by alice" ||
		evs[1].Action != record.Reverted || evs[1].Detail != "manual by bob" {
		t.Errorf("events: %+v", evs)
	}
	api.fail = true
	if _, err := c.Add(ctx, FaultRequest{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 5}}); err == nil || errors.Is(err, ErrBadRequest) {
		t.Errorf("Add with Toxiproxy down = %v, want an apply error", err)
	}
	if len(c.List()) != 0 {
		t.Error("a failed fault stays listed")
	}
}

func TestStopConditions(t *testing.T) {
	c, api := newTestControl(t)
	ctx := context.Background()
	if _, err := c.Add(ctx, FaultRequest{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 2000}}); err != nil {
		t.Fatal(err)
	}
	s := newStopConditions([]string{"a"}, 3*time.Second)
	t0 := time.Now()
	red := []SLO{{Assertion: "a", State: Red}, {Assertion: "b", State: Red}}
	green := []SLO{{Assertion: "a", State: Green}}
	steps := []struct {
		at     time.Duration
		slos   []SLO
		active int
	}{
		{0, red, 1},
		{2 * time.Second, red, 1},
		{2500 * time.Millisecond, green, 1}, // recovered: the grace starts again
		{3 * time.Second, red, 1},
		{5 * time.Second, red, 1},
		{6 * time.Second, red, 0}, // 3s of breach: reverted
	}
	for _, st := range steps {
		s.check(ctx, t0.Add(st.at), st.slos, c)
		if n := len(c.List()); n != st.active {
			t.Fatalf("at %s: %d faults active, want %d", st.at, n, st.active)
		}
	}
	if api.count() != 0 {
		t.Error("toxic left after the stop condition")
	}
	if !strings.Contains(c.Events()[1].Detail, "guard a breached") {
		t.Errorf("revert event: %+v", c.Events()[1])
	}
	// The breach is stamped when the guard was evaluated, not when the
	// note was written: the grace is counted from that stamp.
	var breaches []time.Time
	for _, e := range c.Timeline() {
		if strings.HasPrefix(e.What, "guard a breached;") {
			breaches = append(breaches, e.Time)
		}
	}
	if len(breaches) != 2 || !breaches[0].Equal(t0) || !breaches[1].Equal(t0.Add(3*time.Second)) {
		t.Errorf("breach entries stamped %v, want the evaluations at 0s and 3s", breaches)
	}
}

func TestState(t *testing.T) {
	for _, tc := range []struct {
		check          string
		observed, bnd  float64
		pass           bool
		err, wantState string
	}{
		{"p(99) < 100ms", 50, 100, true, "", Green},
		{"p(99) < 100ms", 85, 100, true, "", Amber},
		{"p(99) < 100ms", 120, 100, false, "", Red},
		{"rate > 10", 11, 10, true, "", Amber},
		{"rate > 10", 20, 10, true, "", Green},
		{"count == 0", 0, 0, true, "", Green},
		{"p(99) < 100ms", 0, 0, false, "no samples", Pending},
	} {
		got, _ := state(record.Verdict{Check: tc.check, Observed: tc.observed, Bound: tc.bnd, Pass: tc.pass, Error: tc.err})
		if got != tc.wantState {
			t.Errorf("%s observed %v bound %v: %s, want %s", tc.check, tc.observed, tc.bnd, got, tc.wantState)
		}
	}
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		listen, token string
		ok            bool
	}{
		{"127.0.0.1:0", "", true},
		{"127.0.0.2:0", "", false}, // loopback, but not what the README promises
		{"[::1]:8080", "", false},
		{"localhost:0", "", false},
		{"127.0.0.2:0", "secret", true},
		{"0.0.0.0:8080", "", false},
		{"0.0.0.0:8080", "secret", true},
		{"nonsense", "", false},
	} {
		if err := CheckListen(tc.listen, tc.token); (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q, %q) = %v", tc.listen, tc.token, err)
		}
	}
}

func TestServerAuth(t *testing.T) {
	c, _ := newTestControl(t)
	for _, tc := range []struct {
		token, host, auth, ctype, method, path string
		want                                   int
	}{
		{"", "127.0.0.1:1", "", "", "GET", "/api/faults", 200},
		{"", "evil.example:1", "", "", "GET", "/api/faults", 403},
		{"s3cret", "evil.example:1", "", "", "GET", "/api/faults", 401},
		{"s3cret", "evil.example:1", "Bearer s3cret", "", "GET", "/api/faults", 200},
		{"s3cret", "evil.example:1", "", "", "GET", "/api/faults?token=s3cret", 200},
		{"", "127.0.0.1:1", "", "text/plain", "POST", "/api/faults", 415},
		{"", "127.0.0.1:1", "", "", "GET", "/", 200},
	} {
		g := &gameDay{token: tc.token, ctl: c, hub: newHub(), stopCh: make(chan struct{}), kickCh: make(chan struct{}, 1)}
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}"))
		req.Host = tc.host
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		rr := httptest.NewRecorder()
		g.handler().ServeHTTP(rr, req)
		if rr.Code != tc.want {
			t.Errorf("%s %s host %s token %q auth %q: %d, want %d (%s)", tc.method, tc.path, tc.host, tc.token, tc.auth, rr.Code, tc.want, rr.Body)
		}
	}
}
