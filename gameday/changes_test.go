package gameday

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/runner/loadtest"
)

// slowToxics is a Toxiproxy API in memory whose toxics take effect at
// once but whose answer waits for release: a caller that gives up in
// between has a toxic in force without knowing it.
type slowToxics struct {
	fakeToxics
	release chan struct{}
	added   chan struct{} // gets one value per toxic added
}

func newSlowToxics() *slowToxics {
	return &slowToxics{fakeToxics: fakeToxics{toxics: map[string]bool{}}, release: make(chan struct{}), added: make(chan struct{}, 16)}
}

func (f *slowToxics) AddToxic(ctx context.Context, proxy string, t faults.Toxic) error {
	f.fakeToxics.AddToxic(ctx, proxy, t) //nolint:errcheck // never fails here
	f.added <- struct{}{}
	select {
	case <-f.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newTestGameDay is a game day's API over a control on api, under ctx.
func newTestGameDay(t *testing.T, ctx context.Context, api faults.ToxicAPI) (*gameDay, *httptest.Server) {
	t.Helper()
	sc := testScenario()
	g := &gameDay{ctx: ctx, ctl: newControl(sc, &faults.ScenarioEnv{Scenario: sc, API: api}), hub: newHub(),
		stopCh: make(chan struct{}), kickCh: make(chan struct{}, 1)}
	srv := httptest.NewServer(g.handler())
	t.Cleanup(srv.Close)
	return g, srv
}

func postFault(ctx context.Context, url string, body any) (int, string, error) {
	b, ok := body.([]byte)
	if !ok {
		b, _ = json.Marshal(body)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/faults", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var e struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&e) //nolint:errcheck // the status says enough
	return resp.StatusCode, e.Error, nil
}

// TestFaultOutlivesItsRequest: a client that leaves while its fault is
// being applied leaves it applied and tracked, so that the end of the
// game day reverts it; nothing stays in force.
func TestFaultOutlivesItsRequest(t *testing.T) {
	api := newSlowToxics()
	g, srv := newTestGameDay(t, context.Background(), api)
	client, leave := context.WithCancel(context.Background())
	go func() {
		<-api.added
		leave() // the client goes away mid-apply
		time.Sleep(50 * time.Millisecond)
		close(api.release)
	}()
	if _, _, err := postFault(client, srv.URL, FaultRequest{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 100}}); err == nil {
		t.Fatal("the client did not leave")
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(g.ctl.List()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(g.ctl.List()) != 1 {
		t.Fatalf("the applied fault is not tracked once its client left (toxics in force: %d)", api.count())
	}
	if _, err := g.ctl.Finish(context.Background(), "test", "end"); err != nil {
		t.Fatal(err)
	}
	if api.count() != 0 {
		t.Errorf("%d toxic(s) left in force after the game day's end", api.count())
	}
}

// TestFinishWaitsForChangesUnderWay: a fault still being applied when the
// game day ends is reverted by the final clear, and none starts after it.
func TestFinishWaitsForChangesUnderWay(t *testing.T) {
	api := newSlowToxics()
	g, _ := newTestGameDay(t, context.Background(), api)
	var wg sync.WaitGroup
	wg.Go(func() {
		g.ctl.Add(context.Background(), FaultRequest{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 100}}) //nolint:errcheck
	})
	<-api.added
	time.AfterFunc(100*time.Millisecond, func() { close(api.release) })
	names, err := g.ctl.Finish(context.Background(), "test", "end")
	wg.Wait()
	if err != nil || len(names) != 1 || api.count() != 0 {
		t.Errorf("Finish = %v, %v; %d toxic(s) left in force", names, err, api.count())
	}
	if _, err := g.ctl.Add(context.Background(), FaultRequest{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 1}}); !errors.Is(err, ErrEnding) {
		t.Errorf("Add after Finish: %v, want ErrEnding", err)
	}
}

// TestEndedApplyIsUndone: an apply cut short by the game day's end (its
// context) is undone, not left in force untracked.
func TestEndedApplyIsUndone(t *testing.T) {
	api := newSlowToxics()
	ctx, cancel := context.WithCancel(context.Background())
	g, _ := newTestGameDay(t, ctx, api)
	go func() {
		<-api.added
		cancel()
	}()
	if _, err := g.ctl.Add(ctx, FaultRequest{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 100}}); err == nil {
		t.Fatal("an apply cut short succeeded")
	}
	if api.count() != 0 || len(g.ctl.List()) != 0 {
		t.Errorf("%d toxic(s) in force, %d listed, after an apply cut short", api.count(), len(g.ctl.List()))
	}
}

// TestAPIRefusesBadNamesAndBodies: fault names follow the scenario's rule;
// bodies are bounded.
func TestAPIRefusesBadNamesAndBodies(t *testing.T) {
	api := &fakeToxics{toxics: map[string]bool{}}
	_, srv := newTestGameDay(t, context.Background(), api)
	ok := FaultRequest{Kind: "latency", Edge: "bank->vault", Attributes: map[string]float64{"latency": 1}}
	named := func(n string) FaultRequest { r := ok; r.Name = n; return r }
	for _, tc := range []struct {
		name string
		body any
		code int
		want string
	}{
		{"dot dot", named(".."), http.StatusBadRequest, `invalid fault name ".."`},
		{"a slash", named("a/b"), http.StatusBadRequest, "invalid fault name"},
		{"60 KB", named(strings.Repeat("a", 60<<10)), http.StatusBadRequest, "61440 characters long"},
		{"a control character", named("a\x1b[2Jb"), http.StatusBadRequest, "invalid fault name"},
		{"100 KB body", named(strings.Repeat("a", 100<<10)), http.StatusRequestEntityTooLarge, "larger than 64 KiB"},
		{"two values", []byte(`{"kind":"latency"} {"kind":"latency"}`), http.StatusBadRequest, "more than one JSON value"},
		{"a good name", named("slow-vault.1"), http.StatusCreated, ""},
	} {
		code, msg, err := postFault(context.Background(), srv.URL, tc.body)
		if err != nil || code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %q (%v), want %d %q", tc.name, code, msg, err, tc.code, tc.want)
		}
	}
	if api.count() != 1 {
		t.Errorf("%d toxics in force, want the good one only", api.count())
	}
}

// failingListener accepts nothing: its Accept fails for good.
type failingListener struct{ net.Listener }

func (l failingListener) Accept() (net.Conn, error) {
	return nil, errors.New("accept: too many open files")
}

// TestPageServerFailureEndsTheGameDay: a page that stops serving ends the
// game day with the reason in its record, instead of a game day nobody
// can steer.
func TestPageServerFailureEndsTheGameDay(t *testing.T) {
	old := pageListen
	t.Cleanup(func() { pageListen = old })
	pageListen = func(ctx context.Context, addr string) (net.Listener, error) {
		ln, err := old(ctx, addr)
		return failingListener{ln}, err
	}
	load := &loadtest.Load{Windows: [][]record.Series{{{Metric: "http_reqs", Kind: record.Counter, Count: 5, Sum: 5}}}, RunFor: time.Hour}
	bed := &loadtest.Testbed{}
	done := make(chan struct{})
	var rec *record.Run
	var err error
	go func() {
		defer close(done)
		rec, err = Run(context.Background(), Options{Scenario: testScenario(), Testbed: bed, Load: load.Factory(), OutDir: t.TempDir(), MaxDuration: time.Minute})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the game day went on without its page")
	}
	if rec == nil || err == nil || !strings.Contains(err.Error(), "stopped serving") || !rec.Incomplete {
		t.Fatalf("err %v, record %+v", err, rec)
	}
	rec.Close()
	if bed.Downs() != 1 {
		t.Errorf("torn down %d times", bed.Downs())
	}
}
