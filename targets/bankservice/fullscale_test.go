package bankservice

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// TestSlowVaultFullScale runs the catalog's slow-vault A/B at full scale with the
// default flags (64 workers, 1 s queue timeout, vault limit 8): checks at 100/s,
// cash at 40/s, the vault 2 s slow. It takes ~40 s, so it runs only with
// CHAOSRUN_FULL_AB=1.
func TestSlowVaultFullScale(t *testing.T) {
	if os.Getenv("CHAOSRUN_FULL_AB") != "1" {
		t.Skip("set CHAOSRUN_FULL_AB=1 to run the full-scale slow-vault A/B (~40 s)")
	}
	ledger := serve(t, (&ledgerAPI{Ledger: newLedger(1000, seedBalance), ServiceTime: time.Millisecond}).Register, 64, time.Second)
	var delay atomic.Int64
	mux := http.NewServeMux()
	(&vaultAPI{Vault: newVault(1e12), ServiceTime: time.Millisecond}).Register(mux)
	vault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Duration(delay.Load())):
		case <-r.Context().Done():
			return
		}
		mux.ServeHTTP(w, r)
	}))
	defer vault.Close()

	for _, bulkheads := range []string{"on", "off"} {
		t.Run("bulkheads "+bulkheads, func(t *testing.T) {
			base, stop := runMain(t, BankMain, "--dep", "ledger="+hostPort(ledger), "--dep", "vault="+hostPort(vault),
				"--bulkheads", bulkheads, "--drawer", "off")
			defer stop()
			delay.Store(0)
			_, baseline := openLoad(t, base, 40, 100, 0, 5*time.Second)
			delay.Store(int64(2 * time.Second))
			cash, check := openLoad(t, base, 40, 100, 2*time.Second, 10*time.Second)
			delay.Store(0)
			errRate := 1 - float64(check.byOutcome["200"])/float64(check.total())
			bp99, p99 := baseline.quantile(.99), check.quantile(.99)
			t.Logf("baseline check p99 %s %v; slow vault: check p99 %s errors %.1f%% %v; cash %v",
				bp99, baseline.byOutcome, p99, 100*errRate, check.byOutcome, cash.byOutcome)
			degraded := p99 > bp99*3/2+10*time.Millisecond || errRate > 0.01
			if (bulkheads == "on") == degraded {
				t.Errorf("bulkheads %s: TransactCheck degraded = %v (p99 %s vs baseline %s, errors %.1f%%)",
					bulkheads, degraded, p99, bp99, 100*errRate)
			}
		})
	}
}
