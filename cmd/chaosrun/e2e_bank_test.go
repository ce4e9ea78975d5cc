package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bankAB is a BankService scenario run both ways: with its protection on it
// holds (exit 0) and money is conserved; switched off it breaches (exit 1)
// on the named assertion, and money is still conserved.
type bankAB struct {
	scenario string   // file under scenarios/, without .yaml
	short    []string // --set overrides that shorten the run for CI
	off      []string // --set overrides that switch the protection off
	breached string   // an assertion that must fail with the protection off
}

var bankABs = []bankAB{
	{
		scenario: "bank-vault-down",
		short:    []string{"workload.duration=25s", "faults.vault-down.start=6s", "faults.vault-down.duration=12s"},
		off:      []string{"bank.drawer=off"},
		breached: "cash-served-from-drawer",
	},
	{
		scenario: "bank-list-starvation",
		short:    []string{"workload.duration=15s"},
		off:      []string{"bank.list-bulkhead=off"},
		breached: "check-not-starved",
	},
	{
		scenario: "bank-outlier-host",
		short:    []string{"workload.duration=25s", "faults.bad-replica.start=6s", "faults.bad-replica.duration=14s"},
		off:      []string{"bank.outlier=off"},
		breached: "success-after-ejection",
	},
	{
		scenario: "bank-outlier-pause",
		short:    []string{"workload.duration=25s", "faults.paused-replica.start=6s", "faults.paused-replica.duration=14s"},
		off:      []string{"bank.outlier=off"},
		breached: "paused-replica-share",
	},
	{
		scenario: "http-slow-withdraw",
		short:    []string{"workload.duration=25s", "faults.slow-withdraw.start=8s", "faults.slow-withdraw.duration=10s"},
		off:      []string{"bank.bulkheads=off"},
		breached: "check-p99-isolated",
	},
}

// TestBankScenariosAB runs the bank's isolation, cache and outlier scenarios
// with their protection on and off on the local testbed.
func TestBankScenariosAB(t *testing.T) {
	skipShort(t)
	for _, sc := range bankABs {
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
				failed := map[string]bool{}
				for _, v := range r.Verdicts {
					if !v.Pass {
						failed[v.Assertion] = true
					}
				}
				if arm.wantCode == exitOK && len(failed) > 0 {
					t.Errorf("protection on, yet assertions failed: %v", failed)
				}
				if arm.wantCode == exitBreach && !failed[sc.breached] {
					t.Errorf("protection off, yet %s did not fail (failed: %v)", sc.breached, failed)
				}
				// Both ways, no money is lost or paid twice.
				if len(r.EndChecks) != 1 || !r.EndChecks[0].OK {
					t.Errorf("money-conserved end check: %+v, want one that is ok", r.EndChecks)
				} else {
					t.Logf("end check: %s", r.EndChecks[0].Detail)
				}
				assertNoDataLost(t, r)
				assertNothingLeft(t, r)
			})
		}
	}
}
