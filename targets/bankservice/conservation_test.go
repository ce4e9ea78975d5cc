package bankservice

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// TestMoneyConserved runs a batch of concurrent check and cash transactions, some
// replayed, many failing (insufficient funds, vault out of cash, vault errors, full
// vault bulkhead), and checks the invariant in the package doc:
// ledger_initial - ledger_total == C + K and vault_initial - vault_total == K.
func TestMoneyConserved(t *testing.T) {
	const accounts, balance, cash = 20, 5_000, 6_000
	var vaultCalls atomic.Int64
	flaky := func(h http.Handler) http.Handler { // every 5th withdrawal fails before the vault sees it
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/vault/withdraw" {
				if vaultCalls.Add(1)%5 == 0 {
					http.Error(w, "vault glitch", http.StatusInternalServerError)
					return
				}
				time.Sleep(3 * time.Millisecond) // long enough for the bulkhead of 3 to fill
			}
			h.ServeHTTP(w, r)
		})
	}
	e := newEnv(t, envOpts{accounts: accounts, balance: balance, cash: cash, vaultWrap: flaky,
		bank: bankConfig{Bulkheads: true, LedgerLimit: 32, VaultLimit: 3}})

	type result struct {
		key    string
		kind   string
		amount int64
		status int
		reason string
	}
	const goroutines, perG = 12, 40
	results := make(chan result, goroutines*perG)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(7, uint64(g)))
			var prev transaction
			var prevKind string
			for i := range perG {
				kind := "check"
				if rng.IntN(2) == 0 {
					kind = "cash"
				}
				tx := transaction{Account: accountName(rng.IntN(accounts)), Amount: 100 + rng.Int64N(1400),
					IdempotencyKey: fmt.Sprintf("g%d-%d", g, i)}
				if i > 0 && rng.IntN(5) == 0 { // replay the previous transaction
					tx, kind = prev, prevKind
				}
				a := post(t, e.bank+"/transact/"+kind, tx)
				results <- result{tx.IdempotencyKey, kind, tx.Amount, a.status, a.err().Reason}
				prev, prevKind = tx, kind
			}
		})
	}
	wg.Wait()
	close(results)

	paid := map[string]result{} // by key: the transactions that succeeded
	reasons := map[string]int{}
	for r := range results {
		reasons[r.reason]++
		if r.status == http.StatusOK {
			paid[r.key] = r
		}
	}
	var checks, cashPaid int64
	for _, r := range paid {
		if r.kind == "cash" {
			cashPaid += r.amount
		} else {
			checks += r.amount
		}
	}
	t.Logf("paid: checks %d, cash %d over %d keys; outcomes by reason: %v", checks, cashPaid, len(paid), reasons)

	lt, vt := e.ledger.Total(), e.vault.Total()
	if got, want := e.ledger.Initial()-lt.Total, checks+cashPaid; got != want {
		t.Errorf("ledger lost %d cents, but the bank paid out %d (checks %d + cash %d)", got, want, checks, cashPaid)
	}
	if got := int64(cash) - vt.Cash; got != cashPaid || vt.Withdrawn != cashPaid {
		t.Errorf("vault handed out %d (withdrawn %d), but the bank paid %d in cash", got, vt.Withdrawn, cashPaid)
	}
	// The batch must have exercised every failure path, or the invariant proves little.
	for _, want := range []string{"", reasonInsufficientFunds, reasonInsufficientCash, platform.ReasonDependencyError, platform.ReasonBulkhead} {
		if reasons[want] == 0 {
			t.Errorf("no transaction ended with reason %q; outcomes: %v", want, reasons)
		}
	}
}
