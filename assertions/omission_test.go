package assertions

import (
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// closedRun is testRun whose load sends perSec requests a second while the
// fault slow is in force (20.3s to 40.2s) and 10 otherwise.
func closedRun(t *testing.T, perSec float64) *record.Run {
	run := testRun(t, 20.3, 40.2)
	for i := range run.Windows {
		if i >= 21 && i < 40 {
			for j, s := range run.Windows[i].Series {
				if s.Metric == "http_reqs" {
					run.Windows[i].Series[j].Count, run.Windows[i].Series[j].Sum = int64(perSec), perSec
				}
			}
		}
	}
	return run
}

// TestCoordinatedOmission: a load that may wait for its responses and
// sends under half its rate during a fault gets the window's latency
// verdicts marked understated and a note naming its executor; a load that
// keeps its rate, and the native engine, are never flagged.
func TestCoordinatedOmission(t *testing.T) {
	k6 := func(executors ...string) *scenario.Scenario {
		return &scenario.Scenario{Workload: scenario.Workload{Engine: scenario.EngineK6, Executors: executors}}
	}
	native := &scenario.Scenario{Workload: scenario.Workload{Engine: scenario.EngineNative}}
	defs := []scenario.Assertion{
		{Name: "fast", Metric: "http_req_duration{api:A}", Window: "during slow", Checks: scenario.Checks("p(99) < 500")},
		{Name: "fast-before", Metric: "http_req_duration{api:A}", Window: "before slow", Checks: scenario.Checks("p(99) < 500")},
		{Name: "few-errors", Metric: "http_req_failed", Window: "during slow", Checks: scenario.Checks("rate < 0.5")},
	}
	tests := []struct {
		name   string
		sc     *scenario.Scenario
		perSec float64
		note   string // "" when nothing is flagged
	}{
		{"closed, starved", k6(), 1, "the script names no executor, so k6 runs its VUs in a closed loop (constant-vus)"},
		{"named closed executor", k6("constant-vus"), 1, "the script's executor constant-vus waits for each response"},
		{"arrival rate out of VUs", k6("constant-arrival-rate"), 2, "ran out of VUs and dropped iterations"},
		{"none sent", k6("ramping-vus"), 0, "sent 0 requests/s during slow against 10/s before it"},
		{"half the rate is not flagged", k6(), 5, ""},
		{"steady", k6(), 10, ""},
		{"native never waits", native, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := closedRun(t, tt.perSec)
			vs := Evaluate(run, defs)
			notes := CoordinatedOmission(tt.sc, run, vs)
			if tt.note == "" {
				if len(notes) > 0 || vs[0].Understated != "" {
					t.Fatalf("flagged: %q, %q", notes, vs[0].Understated)
				}
				return
			}
			if len(notes) != 1 || !strings.Contains(notes[0], tt.note) || !strings.Contains(notes[0], "coordinated omission") {
				t.Fatalf("notes %q, want one saying %q", notes, tt.note)
			}
			if vs[0].Understated == "" || !strings.Contains(vs[0].Understated, "during slow") {
				t.Errorf("latency during the fault not marked: %+v", vs[0])
			}
			if vs[1].Understated != "" || vs[2].Understated != "" {
				t.Errorf("marked beyond the fault's latency: before %q, errors %q", vs[1].Understated, vs[2].Understated)
			}
		})
	}
}

func TestCoordinatedOmissionInJudge(t *testing.T) {
	sc := &scenario.Scenario{Workload: scenario.Workload{Engine: scenario.EngineK6}, Assertions: []scenario.Assertion{
		{Name: "fast", Metric: "http_req_duration{api:A}", Window: "during slow", Checks: scenario.Checks("p(99) < 500")}}}
	run := closedRun(t, 1)
	notes := Judge(sc, run, nil)
	if len(run.Verdicts) != 1 || run.Verdicts[0].Understated == "" || !run.Verdicts[0].Pass {
		t.Errorf("verdicts %+v: want the one check passing and understated", run.Verdicts)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "coordinated omission: the load sent 1 requests/s during slow against 10/s before it") {
		t.Errorf("notes %q", notes)
	}
}
