package main

import (
	"testing"
)

// bankABs are the bank's isolation, cache and outlier scenarios.
var bankABs = []catalogAB{
	{
		scenario: "bank-vault-down",
		// The drawer scaled to the 9 s outage (36000 cents of cash at
		// 4000/s): 48000, refilled below 40000, so it is refilled before
		// the outage and drains during it (bank_drawer_cash moves), as in
		// the full 40 s run; the default 200000 would cover 50 s, and a
		// 16 s run would never need the vault.
		short: []string{"workload.duration=16s", "faults.vault-down.start=4s", "faults.vault-down.duration=9s",
			"bank.drawer-capacity=48000", "bank.drawer-low=40000"},
		off:        []string{"bank.drawer=off"},
		breached:   "cash-served-from-drawer",
		moneyCheck: true,
	},
	{
		scenario:   "bank-list-starvation",
		short:      []string{"workload.duration=12s"},
		off:        []string{"bank.list-bulkhead=off"},
		breached:   "check-not-starved",
		moneyCheck: true,
	},
	{
		scenario:   "bank-outlier-host",
		short:      []string{"workload.duration=21s", "faults.bad-replica.start=5s", "faults.bad-replica.duration=12s"},
		off:        []string{"bank.outlier=off"},
		breached:   "success-after-ejection",
		moneyCheck: true,
	},
	{
		scenario:   "bank-outlier-pause",
		short:      []string{"workload.duration=21s", "faults.paused-replica.start=5s", "faults.paused-replica.duration=12s"},
		off:        []string{"bank.outlier=off"},
		breached:   "paused-replica-share",
		moneyCheck: true,
	},
	{
		scenario:   "bank-slow-replica",
		short:      []string{"workload.duration=21s", "faults.slow-replica.start=5s", "faults.slow-replica.duration=12s"},
		off:        []string{"bank.balancer=rr", "bank.outlier-latency-factor=0"},
		breached:   "slow-replica-share",
		moneyCheck: true,
	},
	{
		// the off arm enforces: its real rejections are what the on arm's
		// shadow count must match
		scenario:   "bank-shadow-vault",
		short:      []string{"workload.duration=20s", "faults.slow-vault.start=5s", "faults.slow-vault.duration=11s"},
		off:        []string{"bank.vault-bulkhead=hard"},
		breached:   "nothing-rejected",
		moneyCheck: true,
		faithful: &faithfulness{on: "would-rejections-reported", off: "nothing-rejected",
			calls: "cash-calls-at-the-bulkhead", within: 0.10},
	},
	{
		scenario:   "http-slow-withdraw",
		short:      []string{"workload.duration=16s", "faults.slow-withdraw.start=5s", "faults.slow-withdraw.duration=8s"},
		off:        []string{"bank.bulkheads=off"},
		breached:   "check-p99-isolated",
		moneyCheck: true,
	},
}

// TestBankScenariosAB runs the bank's isolation, cache and outlier scenarios
// with their protection on and off on the local testbed.
func TestBankScenariosAB(t *testing.T) {
	skipShort(t)
	for _, ab := range bankABs {
		runCatalogAB(t, "local", ab, nil)
	}
}
