package main

import (
	"fmt"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

// platformABs are the platform's queueing, quota, retry and deadline scenarios.
var platformABs = []catalogAB{
	{
		scenario: "bank-overload",
		short:    []string{"workload.duration=14s"},
		off:      []string{"ledger.queue=fifo"},
		breached: "goodput-near-capacity",
		offBelow: 50, // FIFO: goodput under 50% of the ~100/s capacity
	},
	{
		scenario:   "bank-quota",
		short:      []string{"workload.duration=14s"},
		off:        []string{"bank.quotas=off"},
		breached:   "others-unharmed",
		moneyCheck: true,
	},
	{
		scenario:   "bank-retry-storm",
		short:      []string{"workload.duration=26s", "faults.slow-ledger.start=5s", "faults.slow-ledger.duration=8s"},
		off:        []string{"bank.retry-mode=naive"},
		breached:   "amplification",
		moneyCheck: true,
	},
	{
		scenario:   "http-retry-storm",
		short:      []string{"workload.duration=16s", "faults.ledger-503.start=5s", "faults.ledger-503.duration=8s"},
		off:        []string{"bank.retry-mode=naive"},
		breached:   "amplification",
		moneyCheck: true,
		parallel:   true, // retries counted, nothing timed
	},
	{
		scenario: "bank-deadlines",
		short:    []string{"workload.duration=12s"},
		// Both: with deadlines enforced the bank's context already bounds
		// its calls, and without enforcement propagation forwards the
		// dependency timeout, not the caller's budget.
		off:        []string{"bank.deadlines=off", "bank.deadline-propagation=off"},
		breached:   "no-wasted-work",
		moneyCheck: true,
	},
}

// TestPlatformScenariosAB runs each platform scenario with its protection on
// and off on the local testbed and checks the verdicts split as claimed.
func TestPlatformScenariosAB(t *testing.T) {
	skipShort(t)
	for _, ab := range platformABs {
		runCatalogAB(t, "local", ab, nil)
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
