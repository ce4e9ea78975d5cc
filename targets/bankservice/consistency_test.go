package bankservice

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/client"
)

// TestReplicatedLedgerConsistency runs the bank over three ledger fronts of
// one primary, with the drawer on: cash and checks spread over the replicas,
// replays are applied once, and /consistency holds — until cash leaves the
// vault behind the bank's back.
func TestReplicatedLedgerConsistency(t *testing.T) {
	primary := newLedgerWithHistory(5, 10_000, 30)
	pts := serve(t, (&ledgerAPI{Ledger: primary}).Register, 16, time.Second)
	var fronts []string
	for range 3 {
		fts := serve(t, newLedgerFront(hostPort(pts), time.Second, 0).Register, 16, time.Second)
		fronts = append(fronts, hostPort(fts))
	}
	vault := newVault(1_000_000)
	vts := serve(t, (&vaultAPI{Vault: vault}).Register, 16, time.Second)
	bank, _ := runMain(t, BankMain, "--dep", "ledger="+strings.Join(fronts, ","), "--dep", "vault="+hostPort(vts),
		"--drawer-capacity", "5000", "--drawer-low", "2000")

	deadline := time.Now().Add(5 * time.Second)
	for vault.Total().Cash == 1_000_000 && time.Now().Before(deadline) { // the first refill
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 12 {
		tx := transaction{Account: accountName(i % 5), Amount: 300, IdempotencyKey: "k" + string(rune('a'+i))}
		for range 2 { // each sent twice: applied once
			if a := post(t, bank+"/transact/cash", tx); a.status != 200 {
				t.Errorf("cash %d: %d %s", i, a.status, a.body)
			}
			if a := post(t, bank+"/transact/check", tx); a.status != 200 {
				t.Errorf("check %d: %d %s", i, a.status, a.body)
			}
		}
	}
	if got := primary.Total().Total; got != 50_000-12*600 {
		t.Errorf("primary ledger total = %d, want %d (each key applied once)", got, 50_000-12*600)
	}
	h := decode[historyAnswer](t, getURL(t, bank+"/transactions?account=acct-0&pages=4"))
	if h.Pages != 4 || len(h.Entries) != 36 {
		t.Errorf("history through the fronts: %d pages, %d entries; want 4 pages (30 opening + 6 entries)", h.Pages, len(h.Entries))
	}

	c := decode[consistency](t, getURL(t, bank+"/consistency"))
	if !c.OK || c.Values["paid_out"] != 3600 || c.Values["ledger_net_cash"] != 3600 || c.Values["ledger_net_check"] != 3600 {
		t.Fatalf("consistency = %+v; want ok with 3600 cents paid out in cash and by check", c)
	}
	if c.Values["refilled"] == 0 || c.Values["drawer_cash"]+c.Values["vault_cash"]+c.Values["paid_out"] != 1_000_000 {
		t.Errorf("drawer not used or cash not conserved: %v", c.Values)
	}

	vault.Withdraw(700, "behind-the-banks-back")
	c = decode[consistency](t, getURL(t, bank+"/consistency"))
	if c.OK || !strings.Contains(c.Detail, "-700") {
		t.Errorf("consistency after 700 cents left the vault unrecorded = %+v; want not ok, naming -700", c)
	}
}

func TestListBulkhead(t *testing.T) {
	ledger := serve(t, (&ledgerAPI{Ledger: newLedgerWithHistory(1, 1000, 100), PageTime: 200 * time.Millisecond}).Register, 16, time.Second)
	vault := serve(t, (&vaultAPI{Vault: newVault(1000)}).Register, 4, time.Second)
	for _, mode := range []string{"hard", "off"} {
		t.Run(mode, func(t *testing.T) {
			bank, _ := runMain(t, BankMain, "--dep", "ledger="+hostPort(ledger), "--dep", "vault="+hostPort(vault),
				"--list-bulkhead", mode, "--list-limit", "1", "--drawer", "off")
			first := make(chan answer, 1)
			go func() { first <- getURL(t, bank+"/transactions?account=acct-0&pages=3") }()
			time.Sleep(100 * time.Millisecond) // the first holds the only permit
			second := getURL(t, bank+"/transactions?account=acct-0&pages=1")
			if a := <-first; a.status != 200 {
				t.Errorf("first list: %d %s", a.status, a.body)
			}
			want := 200
			if mode == "hard" {
				want = 503
			}
			if second.status != want || (want == 503 && second.reject != platform.ReasonBulkhead) {
				t.Errorf("second list with the first running: %d %s=%q, want %d", second.status, platform.RejectHeader, second.reject, want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		reason string
	}{
		{"deadline", &client.DepError{Kind: client.KindDeadline}, 504, platform.ReasonDeadline},
		{"breaker", &client.DepError{Kind: client.KindBreaker}, 503, platform.ReasonBreaker},
		{"back pressure passed on", &client.DepError{Kind: client.KindStatus, Status: 503, Backpressure: true}, 503, platform.ReasonBackpressure},
		{"plain 503", &client.DepError{Kind: client.KindStatus, Status: 503}, 502, platform.ReasonDependencyError},
		{"timeout", &client.DepError{Kind: client.KindTimeout}, 504, platform.ReasonDependencyTimeout},
		{"business refusal", &client.DepError{Kind: client.KindStatus, Status: 409, Body: platform.ErrorBody{Reason: reasonInsufficientFunds}}, 409, reasonInsufficientFunds},
		{"refund pending", errPending, 409, reasonReversed},
		{"other", errors.New("x"), 500, "internal"},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got.Status != tt.status || got.Reason != tt.reason {
			t.Errorf("%s: %+v, want %d %s", tt.name, got, tt.status, tt.reason)
		}
	}
	rec := &headerRecorder{h: http.Header{}}
	(&bank{}).fail(rec, &client.DepError{Kind: client.KindStatus, Status: 503, Backpressure: true, RetryAfter: 2 * time.Second})
	if rec.h.Get(platform.HeaderBackpressure) != "1" || rec.h.Get(platform.HeaderRetryAfter) != "2" || rec.code != 503 {
		t.Errorf("back pressure answer: %d %v; want 503 with %s: 1, Retry-After: 2", rec.code, rec.h, platform.HeaderBackpressure)
	}
}

type headerRecorder struct {
	h    http.Header
	code int
}

func (r *headerRecorder) Header() http.Header         { return r.h }
func (r *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *headerRecorder) WriteHeader(code int)        { r.code = code }
