package main

import (
	"slices"
	"testing"
)

// k6TwinABs are the catalog scenarios' k6 twins (scenarios/k6/): the same
// claim, load and assertions on engine k6, so that both engines are proven
// on them. Their short overrides are their native scenario's.
var k6TwinABs = []catalogAB{
	{
		scenario: "bank-overload-k6",
		file:     "scenarios/k6/bank-overload.yaml",
		short:    []string{"workload.duration=14s"},
		off:      []string{"ledger.queue=fifo"},
		breached: "goodput-near-capacity",
		offBelow: 50, // FIFO: goodput under 50% of the ~100/s capacity
	},
	{
		scenario:   "bank-retry-storm-k6",
		file:       "scenarios/k6/bank-retry-storm.yaml",
		short:      []string{"workload.duration=26s", "faults.slow-ledger.start=5s", "faults.slow-ledger.duration=8s"},
		off:        []string{"bank.retry-mode=naive"},
		breached:   "amplification",
		moneyCheck: true,
	},
}

// TestK6CatalogAB runs the k6 twins' A/B pairs on the local testbed: on k6
// the protection holds and its absence breaches, as on the native engine.
func TestK6CatalogAB(t *testing.T) {
	skipShort(t)
	for _, ab := range slices.Concat(k6TwinABs, kvK6Twins) {
		runCatalogAB(t, "local", ab, nil)
	}
}
