package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

// topologyBed is the local testbed, handing each topology it stands up to
// the test (which then knows the fault plane's address and token, as a
// process the run trusts would).
type topologyBed struct {
	*testbed.Local
	up chan *testbed.Topology
}

func (b *topologyBed) Up(ctx context.Context, sc *scenario.Scenario) (*testbed.Topology, error) {
	topo, err := b.Local.Up(ctx, sc)
	if err == nil {
		b.up <- topo
	}
	return topo, err
}

// TestReliabilityTamperingMakesTheRunIncomplete: mid-fault, a client other than the
// run, holding the fault plane's token, deletes the fault's toxic from one
// proxy and adds a toxic of its own; the native run (whose load adds no
// toxics) ends INCOMPLETE, its problems naming both, not a pass.
func TestReliabilityTamperingMakesTheRunIncomplete(t *testing.T) {
	skipShort(t)
	t.Parallel() // its verdict is INCOMPLETE whatever the timings
	st, _, se := testState(t)
	st.Executable = chaosrunBinary(t)
	bed := &topologyBed{Local: &testbed.Local{Binary: st.Executable, LogDir: t.TempDir(), Seed: 7}, up: make(chan *testbed.Topology, 1)}
	st.NewTestbed = func() testbed.Testbed { return bed }
	out := t.TempDir()
	tampered := make(chan error, 1)
	go func() {
		topo := <-bed.up
		api := faults.NewToxiproxyAPI(topo.ToxiproxyURL)
		const proxy = "bank->vault" // one vault: one proxy
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) { // until the fault is in force
			if ts, err := api.(faults.ToxicLister).ListToxics(context.Background(), proxy); err == nil && len(ts) > 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		tampered <- errors.Join(api.RemoveToxic(context.Background(), proxy, faults.ToxicName("slow-vault")),
			api.AddToxic(context.Background(), proxy, faults.Toxic{Name: "someone-else", Type: "latency", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"latency": 1}}))
	}()
	code := Execute(context.Background(), st, []string{"run", "--quiet", "--out-dir", out, writeJudgeScenario(t)})
	if err := <-tampered; err != nil {
		t.Fatalf("tampering: %v", err)
	}
	r := readRecord(t, filepath.Join(out, "judge-e2e", "run.json"))
	problems := strings.Join(r.Problems, "\n")
	if code != exitRunError || !r.Incomplete || !strings.Contains(problems, `latency toxic "someone-else" added to`) ||
		!strings.Contains(problems, "the toxic was already gone before its revert") {
		t.Errorf("exit %d, incomplete %v; problems:\n%s\nstderr:\n%s", code, r.Incomplete, problems, se)
	}
}
