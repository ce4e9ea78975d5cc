package main

import "testing"

// grpcSlowVaultAB is the bank's bulkhead over gRPC: a latency assertion,
// run with the timing-sensitive tests.
var grpcSlowVaultAB = catalogAB{
	scenario:   "grpc-slow-vault",
	short:      []string{"workload.duration=16s", "faults.slow-withdraw.start=5s", "faults.slow-withdraw.duration=8s"},
	off:        []string{"bank.bulkheads=off"},
	breached:   "check-p99-isolated",
	moneyCheck: true,
}

// grpcRetryABs are the smart client's retries over gRPC: their assertions
// count retries, so their arms run side by side.
var grpcRetryABs = []catalogAB{
	{
		scenario:   "grpc-unavailable-retries",
		short:      []string{"workload.duration=16s", "faults.debit-unavailable.start=5s", "faults.debit-unavailable.duration=8s"},
		off:        []string{"bank.retry-mode=naive"},
		breached:   "amplification",
		moneyCheck: true,
		parallel:   true,
	},
	{
		scenario:   "grpc-pushback-storm",
		short:      []string{"workload.duration=16s", "faults.debit-pushback.start=5s", "faults.debit-pushback.duration=8s"},
		off:        []string{"bank.retry-mode=naive"},
		breached:   "pushback-honoured",
		moneyCheck: true,
		parallel:   true,
	},
}

// TestGRPCSlowVaultAB: the bank calls the vault over gRPC and a
// grpc_latency fault slows one method, Withdraw; the bulkhead keeps
// TransactCheck flat, and off, it breaches. The fault matches gRPC calls
// only, so its effect in the protected arm (runCatalogAB checks that
// something moved) shows the calls went over gRPC.
func TestGRPCSlowVaultAB(t *testing.T) {
	skipShort(t)
	runCatalogAB(t, "local", grpcSlowVaultAB, nil)
}

// TestGRPCRetryScenariosAB: UNAVAILABLE on one method is retried within
// the budget by smart clients and amplified by naive ones; RESOURCE_EXHAUSTED
// with pushback is back pressure smart clients do not retry at all.
func TestGRPCRetryScenariosAB(t *testing.T) {
	skipShort(t)
	t.Parallel() // with the other robust end-to-end runs, after the timing-sensitive ones
	for _, ab := range grpcRetryABs {
		runCatalogAB(t, "local", ab, nil)
	}
}
