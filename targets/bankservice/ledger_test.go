package bankservice

import (
	"net/http"
	"strings"
	"testing"
)

func TestLedgerApply(t *testing.T) {
	tests := []struct {
		name       string
		op         func(l *ledgerBook) outcome
		wantStatus int
		wantReason string
		wantBal    int64
	}{
		{"debit", func(l *ledgerBook) outcome { return l.Debit("acct-0", 300, "") }, 200, "", 700},
		{"debit all", func(l *ledgerBook) outcome { return l.Debit("acct-0", 1000, "") }, 200, "", 0},
		{"debit too much", func(l *ledgerBook) outcome { return l.Debit("acct-0", 1001, "") }, 409, reasonInsufficientFunds, 1000},
		{"credit", func(l *ledgerBook) outcome { return l.Credit("acct-1", 5, "") }, 200, "", 1005},
		{"unknown account", func(l *ledgerBook) outcome { return l.Debit("acct-9", 1, "") }, 404, reasonUnknownAccount, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger(2, 1000)
			out := tt.op(l)
			if out.status != tt.wantStatus || out.reason != tt.wantReason || out.balance != tt.wantBal {
				t.Errorf("outcome = %+v, want status %d reason %q balance %d", out, tt.wantStatus, tt.wantReason, tt.wantBal)
			}
		})
	}
}

func TestLedgerIdempotency(t *testing.T) {
	l := newLedger(1, 1000)
	first := l.Debit("acct-0", 100, "k1")
	again := l.Debit("acct-0", 100, "k1")
	if !again.replayed || first.replayed {
		t.Errorf("replayed flags: first %v, replay %v; want false, true", first.replayed, again.replayed)
	}
	again.replayed = false
	if first != again || first.balance != 900 {
		t.Errorf("replay = %+v, first = %+v; want the same, balance 900", again, first)
	}
	if got := l.Total().Total; got != 900 {
		t.Errorf("total after a replayed debit = %d, want 900 (applied once)", got)
	}
	if out := l.Debit("acct-0", 200, "k1"); out.status != http.StatusUnprocessableEntity || out.reason != reasonIdempotencyMismatch {
		t.Errorf("reused key for another amount: %+v, want 422 idempotency-mismatch", out)
	}
	// A credit with a debit's key is its refund: the debit, replayed, is refused.
	if out := l.Credit("acct-0", 100, "k1"); out.status != 200 || out.balance != 1000 {
		t.Errorf("credit with the debit's key: %+v, want 200 balance 1000", out)
	}
	if out := l.Debit("acct-0", 100, "k1"); out.status != http.StatusConflict || out.reason != reasonReversed {
		t.Errorf("replay of a refunded debit: %+v, want 409 reversed", out)
	}
	if got := l.Total().Total; got != 1000 {
		t.Errorf("total after debit, refund, replay = %d, want 1000", got)
	}
	// A refused debit is remembered too: replaying it after a credit still refuses.
	l.Debit("acct-0", 5000, "big")
	l.Credit("acct-0", 10000, "")
	if out := l.Debit("acct-0", 5000, "big"); out.status != http.StatusConflict {
		t.Errorf("replay of a refused debit: %+v, want the first answer (409)", out)
	}
	// No key: every call applies.
	l.Debit("acct-0", 1, "")
	l.Debit("acct-0", 1, "")
	if got := l.Total().Total; got != 10998 {
		t.Errorf("total = %d, want 10998", got)
	}
}

func TestLedgerPages(t *testing.T) {
	l := newLedger(1, 1_000_000)
	for i := 1; i <= 25; i++ {
		l.Debit("acct-0", int64(i), "")
	}
	tests := []struct {
		page             int
		wantN            int
		wantFirstAmount  int64
		wantMore, wantOK bool
	}{
		{0, 10, 25, true, true},
		{1, 10, 15, true, true},
		{2, 5, 5, false, true},
		{3, 0, 0, false, true},
	}
	for _, tt := range tests {
		entries, more, ok := l.Page("acct-0", tt.page)
		if len(entries) != tt.wantN || more != tt.wantMore || ok != tt.wantOK {
			t.Errorf("page %d: %d entries, more %v, ok %v; want %d, %v, %v", tt.page, len(entries), more, ok, tt.wantN, tt.wantMore, tt.wantOK)
			continue
		}
		if tt.wantN > 0 && entries[0].Amount != tt.wantFirstAmount {
			t.Errorf("page %d starts with amount %d, want %d (newest first)", tt.page, entries[0].Amount, tt.wantFirstAmount)
		}
	}
	if _, _, ok := l.Page("nobody", 0); ok {
		t.Error("page of an unknown account: ok = true")
	}
}

func TestLedgerHTTP(t *testing.T) {
	ts := serve(t, (&ledgerAPI{Ledger: newLedger(3, 1000)}).Register, 8, 0)
	u := ts.URL

	first := post(t, u+"/ledger/debit", ledgerOp{"acct-1", 400, "key-a"})
	replay := post(t, u+"/ledger/debit", ledgerOp{"acct-1", 400, "key-a"})
	fb, rb := decode[balanceAnswer](t, first), decode[balanceAnswer](t, replay)
	if first.status != 200 || replay.status != 200 || fb.Balance != 600 || rb.Balance != 600 || fb.Replayed || !rb.Replayed {
		t.Fatalf("debit + replay: %d %s / %d %s; want the same 200 balance 600, the second marked replayed", first.status, first.body, replay.status, replay.body)
	}
	if got := decode[ledgerTotal](t, getURL(t, u+"/ledger/total")); got.Total != 2600 || got.Accounts != 3 {
		t.Errorf("total = %+v, want 2600 over 3 accounts (replay applied once)", got)
	}
	pg := decode[ledgerPage](t, getURL(t, u+"/ledger/transactions?account=acct-1&page=0"))
	if len(pg.Entries) != 1 || pg.Entries[0].Balance != 600 || pg.More {
		t.Errorf("page = %+v, want one entry with balance 600", pg)
	}

	tests := []struct {
		name       string
		a          answer
		wantStatus int
		wantReason string
		wantInErr  string
	}{
		{"insufficient", post(t, u+"/ledger/debit", ledgerOp{"acct-0", 5000, ""}), 409, reasonInsufficientFunds, "acct-0 has 1000 cents"},
		{"unknown account", post(t, u+"/ledger/credit", ledgerOp{"acct-7", 1, ""}), 404, reasonUnknownAccount, `"acct-7"`},
		{"missing account", post(t, u+"/ledger/debit", map[string]any{"amount": 1}), 400, reasonBadRequest, `"account"`},
		{"zero amount", post(t, u+"/ledger/debit", map[string]any{"account": "acct-0"}), 400, reasonBadRequest, `"amount"`},
		{"unknown field", post(t, u+"/ledger/debit", map[string]any{"acount": "acct-0"}), 400, reasonBadRequest, `unknown field "acount"`},
		{"bad page", getURL(t, u+"/ledger/transactions?account=acct-0&page=-1"), 400, reasonBadRequest, `"page"`},
		{"page unknown account", getURL(t, u+"/ledger/transactions?account=zz"), 404, reasonUnknownAccount, `"zz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eb := tt.a.err()
			if tt.a.status != tt.wantStatus || eb.Reason != tt.wantReason || !strings.Contains(eb.Error, tt.wantInErr) {
				t.Errorf("got %d %s, want %d reason %q with %q in the error", tt.a.status, tt.a.body, tt.wantStatus, tt.wantReason, tt.wantInErr)
			}
			if tt.a.reject != "" {
				t.Errorf("business failure carries %s: %q; want none", "X-Reject-Reason", tt.a.reject)
			}
		})
	}
}
