package bankservice

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// slowVault delays every vault call by d, as a latency toxic on the bank→vault edge.
func slowVault(t *testing.T, d time.Duration) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	(&vaultAPI{Vault: newVault(1e12), ServiceTime: time.Millisecond}).Register(mux)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// loadResult is what an open-model load saw for one API.
type loadResult struct {
	byOutcome map[string]int // "200", "503 bulkhead", ...
	latencies []time.Duration
}

func (r loadResult) total() int {
	n := 0
	for _, c := range r.byOutcome {
		n += c
	}
	return n
}

func (r loadResult) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// openLoad sends TransactCash at cashRate/s for dur and TransactCheck at checkRate/s
// from checkDelay to dur, never waiting for answers (open model), then waits for
// every answer. It returns the results per API.
func openLoad(t *testing.T, base string, cashRate, checkRate int, checkDelay, dur time.Duration) (cash, check loadResult) {
	t.Helper()
	var mu sync.Mutex
	res := map[string]*loadResult{"cash": {byOutcome: map[string]int{}}, "check": {byOutcome: map[string]int{}}}
	var wg sync.WaitGroup
	var seq int
	send := func(api string) {
		seq++
		tx := transaction{Account: accountName(seq % 1000), Amount: 1, IdempotencyKey: fmt.Sprintf("%s-%d", api, seq)}
		wg.Go(func() {
			a := post(t, base+"/transact/"+api, tx)
			outcome := fmt.Sprint(a.status)
			if a.status != 200 {
				outcome += " " + a.err().Reason
			}
			mu.Lock()
			defer mu.Unlock()
			res[api].byOutcome[outcome]++
			if a.status == 200 {
				res[api].latencies = append(res[api].latencies, a.took)
			}
		})
	}
	cashTick := time.NewTicker(time.Second / time.Duration(cashRate))
	checkTick := time.NewTicker(time.Second / time.Duration(checkRate))
	defer cashTick.Stop()
	defer checkTick.Stop()
	start := time.Now()
	end := time.After(dur)
loop:
	for {
		select {
		case <-cashTick.C:
			send("cash")
		case <-checkTick.C:
			if time.Since(start) >= checkDelay {
				send("check")
			}
		case <-end:
			break loop
		}
	}
	wg.Wait()
	return *res["cash"], *res["check"]
}

// TestSlowVaultIsolation is the slow-vault A/B on the real process entry point:
// the vault answers after 1 s; cash arrives at 40/s, so 40 cash calls would be in
// flight, more than the bank's 16 workers. With bulkheads on, cash beyond 4 fails
// fast and TransactCheck is untouched; with them off, cash holds every worker and
// TransactCheck times out in the queue. A vault bulkhead in shadow mode behaves
// as if off, and reports the cash calls it would have refused.
func TestSlowVaultIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test; skipped with -short")
	}
	ledger := serve(t, (&ledgerAPI{Ledger: newLedger(1000, seedBalance), ServiceTime: time.Millisecond}).Register, 64, time.Second)
	vault := slowVault(t, time.Second)
	for _, bulkheads := range []string{"on", "off", "shadow"} {
		t.Run("bulkheads "+bulkheads, func(t *testing.T) {
			mode := map[string]string{"on": "hard", "off": "hard", "shadow": "shadow"}[bulkheads]
			base, stop := runMain(t, BankMain, "--listen", "127.0.0.1:0",
				"--dep", "ledger="+hostPort(ledger), "--dep", "vault="+hostPort(vault),
				"--workers", "16", "--queue-timeout", "300ms", "--vault-limit", "4", "--ledger-limit", "32",
				"--bulkheads", map[string]string{"on": "on", "off": "off", "shadow": "on"}[bulkheads], "--vault-bulkhead", mode,
				"--queue", "fifo", // the bulkhead A/B alone, without CoDel
				"--drawer", "off", "--retry-mode", "off", "--breaker", "off") // every cash call reaches the vault
			defer stop()
			cash, check := openLoad(t, base, 40, 50, time.Second, 3*time.Second)
			t.Logf("cash: %v, p50 %s; check: %v, p50 %s p99 %s", cash.byOutcome, cash.quantile(.5),
				check.byOutcome, check.quantile(.5), check.quantile(.99))
			if check.total() < 40 || cash.total() < 60 {
				t.Fatalf("load too thin to judge: %d checks, %d cash calls", check.total(), cash.total())
			}
			okChecks := check.byOutcome["200"]
			queueTimeouts := check.byOutcome["503 "+platform.ReasonQueueTimeout]
			if bulkheads == "on" {
				if okChecks < check.total()*95/100 {
					t.Errorf("bulkheads on: %d of %d checks succeeded, want >= 95%%", okChecks, check.total())
				}
				if p := check.quantile(.5); p > 300*time.Millisecond {
					t.Errorf("bulkheads on: check p50 %s, want fast (< 300ms)", p)
				}
				if rej := cash.byOutcome["503 "+platform.ReasonBulkhead]; rej < cash.total()/2 {
					t.Errorf("bulkheads on: %d of %d cash calls hit the bulkhead, want most", rej, cash.total())
				}
				return
			}
			if bulkheads == "shadow" {
				would := shadowRejections(t, base, "vault")
				if would < float64(cash.total())/10 {
					t.Errorf("shadow: %v would-be rejections reported of %d cash calls, want many", would, cash.total())
				}
			}
			if queueTimeouts < check.total()/2 {
				t.Errorf("bulkheads %s: %d of %d checks got 503 queue-timeout, want at least half", bulkheads, queueTimeouts, check.total())
			}
			if rej := cash.byOutcome["503 "+platform.ReasonBulkhead]; rej != 0 {
				t.Errorf("bulkheads %s: %d cash calls hit a bulkhead, want 0", bulkheads, rej)
			}
		})
	}
}

// shadowRejections reads what the bank at base reports its bulkhead name in
// shadow mode would have refused for being full.
func shadowRejections(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := testClient.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	series := `platform_shadow_rejections_total{limit="bulkhead",name="` + name + `",reason="full"} `
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s%s: %v", series, v, err)
			}
			return f
		}
	}
	t.Fatalf("no series %s in /metrics", series)
	return 0
}
