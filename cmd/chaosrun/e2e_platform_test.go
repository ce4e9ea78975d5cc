package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// platformAB is one scenario of the platform catalog run both ways: with its
// protection on it must hold (exit 0); switched off it must breach (exit 1)
// and name the assertion that catches it.
type platformAB struct {
	scenario string   // file under scenarios/, without .yaml
	short    []string // --set overrides that shorten the run for CI
	off      []string // --set overrides that switch the protection off
	breached string   // an assertion that must fail with the protection off
	// offBelow bounds what the breached assertion observes with the
	// protection off, where the claim is stronger than a breach.
	offBelow float64
}

var platformABs = []platformAB{
	{
		scenario: "bank-overload",
		short:    []string{"workload.duration=20s"},
		off:      []string{"ledger.queue=fifo"},
		breached: "goodput-near-capacity",
		offBelow: 50, // FIFO: goodput under 50% of the ~100/s capacity
	},
	{
		scenario: "bank-quota",
		short:    []string{"workload.duration=20s"},
		off:      []string{"bank.quotas=off"},
		breached: "others-unharmed",
	},
	{
		scenario: "bank-retry-storm",
		short:    []string{"workload.duration=32s", "faults.slow-ledger.start=8s", "faults.slow-ledger.duration=10s"},
		off:      []string{"bank.retry-mode=naive"},
		breached: "amplification",
	},
	{
		scenario: "http-retry-storm",
		short:    []string{"workload.duration=20s", "faults.ledger-503.start=8s", "faults.ledger-503.duration=10s"},
		off:      []string{"bank.retry-mode=naive"},
		breached: "amplification",
	},
	{
		scenario: "bank-deadlines",
		short:    []string{"workload.duration=15s"},
		// Both: with deadlines enforced the bank's context already bounds
		// its calls, and without enforcement propagation forwards the
		// dependency timeout, not the caller's budget.
		off:      []string{"bank.deadlines=off", "bank.deadline-propagation=off"},
		breached: "no-wasted-work",
	},
}

// TestPlatformScenariosAB runs each platform scenario with its protection on
// and off on the local testbed and checks the verdicts split as claimed.
func TestPlatformScenariosAB(t *testing.T) {
	skipShort(t)
	for _, sc := range platformABs {
		for _, arm := range []struct {
			name     string
			sets     []string
			wantCode int
		}{
			{"on-holds", sc.short, exitOK},
			{"off-breaches", append(append([]string(nil), sc.short...), sc.off...), exitBreach},
		} {
			t.Run(sc.scenario+"/"+arm.name, func(t *testing.T) {
				args := []string{"--quiet"}
				for _, s := range arm.sets {
					args = append(args, "--set", s)
				}
				args = append(args, filepath.Join("scenarios", sc.scenario+".yaml"))
				res := runChaosrun(t, 4*time.Minute, args...)
				t.Logf("chaosrun run %s:\n%s", strings.Join(args, " "), res.stdout)
				if res.code != arm.wantCode {
					t.Fatalf("exit code %d, want %d\nstderr:\n%s", res.code, arm.wantCode, res.stderr)
				}
				r := readRecord(t, filepath.Join(res.outDir, sc.scenario, "run.json"))
				if r.Incomplete {
					t.Fatalf("record incomplete: %v", r.Problems)
				}
				if len(r.Verdicts) == 0 {
					t.Fatal("run record holds no verdicts")
				}
				for _, v := range r.Verdicts {
					t.Logf("%s", verdictLine(v))
					if arm.wantCode == exitOK && !v.Pass {
						t.Errorf("protection on, yet %s failed", verdictLine(v))
					}
				}
				if arm.wantCode == exitBreach {
					if !strings.Contains(res.stderr, sc.breached) {
						t.Errorf("breach message does not name %s:\n%s", sc.breached, res.stderr)
					}
					v, ok := findVerdict(r, sc.breached)
					if !ok || v.Pass {
						t.Errorf("protection off, yet assertion %s did not fail (found %v)", sc.breached, ok)
					}
					if sc.offBelow > 0 && v.Observed >= sc.offBelow {
						t.Errorf("protection off: %s observed %g, want below %g", sc.breached, v.Observed, sc.offBelow)
					}
				}
				assertNoDataLost(t, r)
				assertNothingLeft(t, r)
			})
		}
	}
}

func findVerdict(r *record.Run, assertion string) (record.Verdict, bool) {
	for _, v := range r.Verdicts {
		if v.Assertion == assertion && !v.Pass {
			return v, true
		}
	}
	for _, v := range r.Verdicts {
		if v.Assertion == assertion {
			return v, true
		}
	}
	return record.Verdict{}, false
}

func verdictLine(v record.Verdict) string {
	res := "pass"
	if !v.Pass {
		res = "FAIL"
	}
	return fmt.Sprintf("%s %s: %s observed %g bound %g (%d samples, %s)", res, v.Assertion, v.Check, v.Observed, v.Bound, v.Samples, v.Window)
}
