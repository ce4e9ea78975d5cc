package bankservice

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/client"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// env is a bank in process, with a real ledger and vault on httptest servers.
type env struct {
	bank   string // base URL
	b      *bank
	ledger *ledgerBook
	vault  *cashVault
	m      *server.Metrics
}

type envOpts struct {
	accounts   int
	balance    int64
	cash       int64
	vaultWrap  func(http.Handler) http.Handler // e.g. slow or failing vault
	bank       bankConfig
	depTimeout time.Duration
}

func newEnv(t *testing.T, o envOpts) env {
	t.Helper()
	if o.depTimeout == 0 {
		o.depTimeout = 5 * time.Second
	}
	l, v := newLedger(o.accounts, o.balance), newVault(o.cash)
	lts := serve(t, (&ledgerAPI{Ledger: l}).Register, 64, time.Second)
	vmux := http.NewServeMux()
	(&vaultAPI{Vault: v}).Register(vmux)
	var vh http.Handler = vmux
	if o.vaultWrap != nil {
		vh = o.vaultWrap(vh)
	}
	vts := httptest.NewServer(vh)
	t.Cleanup(vts.Close)
	lc, _ := client.New("ledger", []string{hostPort(lts)}, o.depTimeout)
	vc, _ := client.New("vault", []string{hostPort(vts)}, o.depTimeout)
	t.Cleanup(lc.Close)
	t.Cleanup(vc.Close)
	m := server.NewMetrics()
	b := newBank(o.bank, lc, vc, m, nil)
	bts := serveWith(t, m, b.Register, 64, time.Second)
	return env{bank: bts.URL, b: b, ledger: l, vault: v, m: m}
}

var bulkheadsOn = bankConfig{Bulkheads: true, LedgerLimit: 32, VaultLimit: 8}

func TestBankHappyPath(t *testing.T) {
	e := newEnv(t, envOpts{accounts: 2, balance: 10_000, cash: 50_000, bank: bulkheadsOn})
	if a := post(t, e.bank+"/transact/check", transaction{"acct-0", 1000, "c1"}); a.status != 200 || decode[transactionAnswer](t, a).Balance != 9000 {
		t.Fatalf("check: %d %s, want 200 balance 9000", a.status, a.body)
	}
	if a := post(t, e.bank+"/transact/cash", transaction{"acct-0", 2000, "k1"}); a.status != 200 || decode[transactionAnswer](t, a).Balance != 7000 {
		t.Fatalf("cash: %d %s, want 200 balance 7000", a.status, a.body)
	}
	// Replays apply once, at the bank too.
	post(t, e.bank+"/transact/check", transaction{"acct-0", 1000, "c1"})
	post(t, e.bank+"/transact/cash", transaction{"acct-0", 2000, "k1"})
	if got := e.ledger.Total().Total; got != 17_000 {
		t.Errorf("ledger total = %d, want 17000 (replays applied once)", got)
	}
	if got := e.vault.Total().Cash; got != 48_000 {
		t.Errorf("vault cash = %d, want 48000", got)
	}
	// No key: the bank makes one, so two calls are two transactions.
	post(t, e.bank+"/transact/check", transaction{Account: "acct-1", Amount: 1})
	post(t, e.bank+"/transact/check", transaction{Account: "acct-1", Amount: 1})
	if got := e.ledger.Total().Total; got != 16_998 {
		t.Errorf("ledger total = %d, want 16998", got)
	}
	for i := range 23 {
		post(t, e.bank+"/transact/check", transaction{Account: "acct-1", Amount: int64(i + 1)})
	}
	a := getURL(t, e.bank+"/transactions?account=acct-1&pages=2")
	h := decode[historyAnswer](t, a)
	if a.status != 200 || h.Pages != 2 || len(h.Entries) != 20 || h.Entries[0].Amount != 23 {
		t.Errorf("history: %d, %d pages, %d entries; want 200, 2 pages, 20 entries newest first", a.status, h.Pages, len(h.Entries))
	}
	h = decode[historyAnswer](t, getURL(t, e.bank+"/transactions?account=acct-1&pages=9"))
	if h.Pages != 3 || len(h.Entries) != 25 {
		t.Errorf("history past the end: %d pages, %d entries; want it to stop at 3 pages, 25 entries", h.Pages, len(h.Entries))
	}
}

func TestBankFailures(t *testing.T) {
	failing := func(h http.Handler) http.Handler { // withdrawals fail, voids work
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/vault/withdraw" {
				h.ServeHTTP(w, r)
				return
			}
			http.Error(w, "boom", http.StatusInternalServerError)
		})
	}
	slow := func(h http.Handler) http.Handler { // withdrawals are slow (and pay), voids are not
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/vault/withdraw" {
				h.ServeHTTP(w, r)
				return
			}
			select {
			case <-time.After(time.Second):
			case <-r.Context().Done():
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	tests := []struct {
		name       string
		opts       envOpts
		path       string
		body       any
		wantStatus int
		wantReason string
		wantHeader string
		wantInErr  string
		wantLedger int64 // ledger total afterwards
	}{
		{"missing account", envOpts{}, "/transact/check", map[string]any{"amount": 5}, 400, reasonBadRequest, "", `"account"`, 1000},
		{"bad amount", envOpts{}, "/transact/cash", transaction{"acct-0", -5, ""}, 400, reasonBadRequest, "", `"amount"`, 1000},
		{"unknown field", envOpts{}, "/transact/cash", map[string]any{"acct": "x"}, 400, reasonBadRequest, "", `unknown field "acct"`, 1000},
		{"insufficient funds", envOpts{}, "/transact/check", transaction{"acct-0", 5000, ""}, 409, reasonInsufficientFunds, "", "acct-0 has 1000", 1000},
		{"unknown account", envOpts{}, "/transact/cash", transaction{"acct-5", 5, ""}, 404, reasonUnknownAccount, "", "acct-5", 1000},
		{"vault short of cash refunds", envOpts{cash: 10}, "/transact/cash", transaction{"acct-0", 500, ""}, 409, reasonInsufficientCash, "", "vault holds 10", 1000},
		{"vault error refunds", envOpts{cash: 1e6, vaultWrap: failing}, "/transact/cash", transaction{"acct-0", 500, ""}, 502, platform.ReasonDependencyError, platform.ReasonDependencyError, "status 500", 1000},
		{"vault timeout", envOpts{cash: 1e6, vaultWrap: slow, depTimeout: 100 * time.Millisecond}, "/transact/cash", transaction{"acct-0", 500, ""}, 504, platform.ReasonDependencyTimeout, platform.ReasonDependencyTimeout, "vault", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.accounts, o.balance, o.bank = 1, 1000, bulkheadsOn
			e := newEnv(t, o)
			a := post(t, e.bank+tt.path, tt.body)
			eb := a.err()
			if a.status != tt.wantStatus || eb.Reason != tt.wantReason || a.reject != tt.wantHeader || !strings.Contains(eb.Error, tt.wantInErr) {
				t.Errorf("got %d %s=%q %s; want %d reason %q header %q, error containing %q",
					a.status, platform.RejectHeader, a.reject, a.body, tt.wantStatus, tt.wantReason, tt.wantHeader, tt.wantInErr)
			}
			if got := e.ledger.Total().Total; got != tt.wantLedger {
				t.Errorf("ledger total = %d, want %d", got, tt.wantLedger)
			}
		})
	}
}

func TestBankVaultBulkheadFailsFast(t *testing.T) {
	release := make(chan struct{})
	held := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	e := newEnv(t, envOpts{accounts: 1, balance: 1e6, cash: 1e6, vaultWrap: held,
		bank: bankConfig{Bulkheads: true, LedgerLimit: 32, VaultLimit: 2}})
	results := make(chan answer, 2)
	for range 2 {
		go func() { results <- post(t, e.bank+"/transact/cash", transaction{Account: "acct-0", Amount: 1}) }()
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(string(getURL(t, e.bank+"/metrics").body), `platform_bulkhead_inflight{bulkhead="vault"} 2`) {
		if time.Now().After(deadline) {
			t.Fatal("the two held cash calls never both held a vault permit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	a := post(t, e.bank+"/transact/cash", transaction{Account: "acct-0", Amount: 1})
	if a.status != 503 || a.reject != platform.ReasonBulkhead || a.err().Reason != platform.ReasonBulkhead {
		t.Errorf("third cash call with 2 held: %d %s=%q %s; want 503 bulkhead", a.status, platform.RejectHeader, a.reject, a.body)
	}
	if a.took > 500*time.Millisecond {
		t.Errorf("bulkhead refusal took %s, want fail-fast", a.took)
	}
	close(release)
	for range 2 {
		if r := <-results; r.status != 200 {
			t.Errorf("held cash call: %d %s", r.status, r.body)
		}
	}
	if got := e.ledger.Total().Total; got != 1e6-2 {
		t.Errorf("ledger total = %d, want %d (the refused call never debited)", got, int64(1e6-2))
	}
}

func TestBankCashReplayAfterVaultFailure(t *testing.T) {
	var broken atomic.Int32 // 1: withdrawals fail; 2: every vault call fails
	flaky := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if b := broken.Load(); b == 2 || (b == 1 && r.URL.Path == "/vault/withdraw") {
				http.Error(w, "down", http.StatusInternalServerError)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	e := newEnv(t, envOpts{accounts: 1, balance: 1000, cash: 1000, vaultWrap: flaky, bank: bulkheadsOn})
	cash := func(key string) answer { return post(t, e.bank+"/transact/cash", transaction{"acct-0", 100, key}) }
	totals := func(wantLedger, wantVault int64) {
		t.Helper()
		if lt, vt := e.ledger.Total().Total, e.vault.Total().Cash; lt != wantLedger || vt != wantVault {
			t.Errorf("ledger %d, vault %d; want %d and %d", lt, vt, wantLedger, wantVault)
		}
	}

	// Paid once; the bank remembers it, so a replay answers 200 without the vault.
	if a := cash("paid"); a.status != 200 {
		t.Fatalf("cash: %d %s", a.status, a.body)
	}
	broken.Store(2)
	if a := cash("paid"); a.status != 200 {
		t.Errorf("replay of a paid transaction with the vault down: %d %s, want 200", a.status, a.body)
	}
	totals(900, 900)

	// A withdrawal that fails is voided at the vault and refunded; its key is closed.
	broken.Store(1)
	if a := cash("unpaid"); a.status != 502 {
		t.Errorf("cash with withdrawals failing: %d %s, want 502", a.status, a.body)
	}
	totals(900, 900)
	broken.Store(0)
	if a := cash("unpaid"); a.status != 409 || a.err().Reason != reasonReversed {
		t.Errorf("replay of a refunded transaction: %d %s, want 409 reversed", a.status, a.body)
	}

	// With the whole vault down the refund waits; a replay is refused meanwhile,
	// and the consistency check settles it once the vault is back.
	broken.Store(2)
	if a := cash("limbo"); a.status != 502 || !strings.Contains(a.err().Error, "pending") {
		t.Errorf("cash with the vault down: %d %s, want 502 refund pending", a.status, a.body)
	}
	if a := cash("limbo"); a.status != 409 || a.err().Reason != reasonReversed {
		t.Errorf("replay while its refund is pending: %d %s, want 409 reversed", a.status, a.body)
	}
	totals(800, 900)
	broken.Store(0)
	c := decode[consistency](t, getURL(t, e.bank+"/consistency"))
	if !c.OK {
		t.Errorf("consistency after the vault came back: %+v, want ok", c)
	}
	totals(900, 900)
}
