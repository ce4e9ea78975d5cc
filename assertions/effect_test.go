package assertions

import (
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// flatRun is testRun whose every second looks like its first: the fault
// slow is applied and reverted, and nothing moves.
func flatRun(t *testing.T) *record.Run {
	run := testRun(t, 20.3, 40.2)
	for i := range run.Windows {
		run.Windows[i].Series = run.Windows[0].Series
	}
	return run
}

// TestFaultEffects: the series a fault moved are named, largest change
// first; those it did not move are not; a fault that moved nothing says
// so, and one too short to tell noise is unjudged.
func TestFaultEffects(t *testing.T) {
	t.Run("moved", func(t *testing.T) {
		effs, err := FaultEffects(testRun(t, 20.3, 40.2))
		if err != nil || len(effs) != 1 {
			t.Fatalf("%+v, %v", effs, err)
		}
		moved := strings.Join(effs[0].Moved, "\n")
		if effs[0].Compared != 5 || !strings.HasPrefix(moved, "http_req_failed{api:A} 0→0.1") ||
			!strings.Contains(moved, "http_req_duration{api:A} 10→100") || strings.Contains(moved, "api:B") || strings.Contains(moved, "http_reqs") {
			t.Errorf("compared %d, moved:\n%s", effs[0].Compared, moved)
		}
	})
	t.Run("nothing moved", func(t *testing.T) {
		effs, _ := FaultEffects(flatRun(t))
		if len(effs) != 1 || effs[0].Compared != 5 || len(effs[0].Moved) != 0 {
			t.Errorf("%+v", effs)
		}
	})
	t.Run("short and clear: one-second blocks", func(t *testing.T) {
		effs, _ := FaultEffects(testRun(t, 20.3, 24.5))
		if len(effs) != 1 || !strings.Contains(strings.Join(effs[0].Moved, "\n"), "http_req_duration{api:A} 10→100") {
			t.Errorf("%+v", effs)
		}
	})
	t.Run("too short", func(t *testing.T) {
		effs, _ := FaultEffects(testRun(t, 20.3, 22.5))
		if len(effs) != 1 || effs[0].Compared != 0 || !strings.HasPrefix(effs[0].Unjudged, "too short to tell noise: 20s before the first fault and 1s during it (need 3s each)") {
			t.Errorf("%+v", effs)
		}
	})
	t.Run("a scraped counter", func(t *testing.T) {
		run := flatRun(t)
		for i := range 60 {
			rejected := float64(i) // one a second, then ten a second while slow
			if i > 20 {
				rejected = 20 + float64(min(i, 40)-20)*10 + float64(max(i-40, 0))
			}
			run.Scrapes = append(run.Scrapes, record.Scrape{Time: at(float64(i) + 0.5), Instance: "bank",
				Values: map[string]float64{`bulkhead_rejected_total{dep="vault"}`: rejected, "up": 1}})
		}
		effs, _ := FaultEffects(run)
		if len(effs) != 1 || len(effs[0].Moved) != 1 || effs[0].Moved[0] != `scrape:bulkhead_rejected_total{dep="vault"}@bank 1→10` {
			t.Errorf("%+v", effs)
		}
	})
}

// TestFaultEffectJudged: in Judge, a fault that moved nothing is a note;
// with expect_effect a failing verdict (and one that moved something, a
// passing one).
func TestFaultEffectJudged(t *testing.T) {
	for _, tt := range []struct {
		name      string
		run       *record.Run
		expect    bool
		pass      bool
		wantNotes int
	}{
		{"moved, no expectation", testRun(t, 20.3, 40.2), false, true, 0},
		{"moved, expected", testRun(t, 20.3, 40.2), true, true, 0},
		{"nothing moved: a warning", flatRun(t), false, true, 1},
		{"nothing moved, expected: a breach", flatRun(t), true, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scenario.Scenario{Faults: []scenario.Fault{{Name: "slow", ExpectEffect: tt.expect, Start: scenario.Duration(20 * time.Second)}}}
			notes := Judge(sc, tt.run, nil)
			var effect []record.Verdict
			for _, v := range tt.run.Verdicts {
				if v.Assertion == "fault-effect slow" {
					effect = append(effect, v)
				}
			}
			if tt.expect != (len(effect) == 1) || (tt.expect && effect[0].Pass != tt.pass) {
				t.Errorf("fault-effect verdicts %+v", effect)
			}
			if len(notes) != tt.wantNotes || (tt.wantNotes == 1 && !strings.Contains(notes[0], "fault slow: no observed series moved beyond run-to-run noise (5 compared)")) {
				t.Errorf("notes %q", notes)
			}
			if len(tt.run.FaultEffects) != 1 {
				t.Errorf("record's effects %+v", tt.run.FaultEffects)
			}
		})
	}
}

func TestCumulative(t *testing.T) {
	for name, want := range map[string]bool{
		`bulkhead_rejected_total{dep="vault"}`:                              true,
		"platform_request_duration_seconds{route=POST /transact/check}_sum": true,
		"platform_queue_wait_seconds_count":                                 true,
		`platform_request_duration_seconds_bucket{le="0.1"}`:                true,
		"platform_client_ejected_hosts{dependency=ledger}":                  false,
		"up": false,
	} {
		if got := cumulative(name); got != want {
			t.Errorf("cumulative(%q) = %v, want %v", name, got, want)
		}
	}
}
