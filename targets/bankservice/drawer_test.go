package bankservice

import "testing"

func TestDrawer(t *testing.T) {
	d := newDrawer(true, 1000, 400)
	if got := d.RefillAmount(); got != 1000 {
		t.Fatalf("empty drawer refill = %d, want 1000", got)
	}
	d.Refill(1000)
	steps := []struct {
		name string
		do   func() bool
		want bool
	}{
		{"reserve within", func() bool { return d.Reserve(700) }, true},
		{"reserve beyond what is left", func() bool { return d.Reserve(400) }, false},
		{"pay the reservation", func() bool { return d.Pay("k1", 700, sourceDrawer) }, true},
		{"a paid key is not paid again", func() bool { d.Reserve(100); return d.Pay("k1", 100, sourceDrawer) }, false},
		{"vault payout recorded", func() bool { return d.Pay("k2", 50, sourceVault) }, true},
		{"vault payout once", func() bool { return d.Pay("k2", 50, sourceVault) }, false},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("%s: got %v, want %v", s.name, got, s.want)
		}
	}
	st := d.State()
	if st != (drawerState{Cash: 300, Reserved: 0, PaidOut: 750, Refilled: 1000}) {
		t.Errorf("state = %+v, want cash 300, nothing reserved, 750 paid out, 1000 refilled", st)
	}
	if src, ok := d.PaidBy("k2"); !ok || src != sourceVault {
		t.Errorf("PaidBy(k2) = %q %v, want vault", src, ok)
	}
	if got := d.RefillAmount(); got != 700 {
		t.Errorf("refill below the low mark = %d, want 700 (to capacity)", got)
	}
	off := newDrawer(false, 1000, 400)
	if off.Reserve(1) || off.RefillAmount() != 0 {
		t.Error("a disabled drawer reserved cash or asked for a refill")
	}
}

func TestVoids(t *testing.T) {
	l := newLedger(1, 1000)
	l.Debit("acct-0", 100, "cash:a")
	tests := []struct {
		name         string
		key          string
		wantReturned bool
		wantTotal    int64
	}{
		{"applied debit is credited back", "cash:a", true, 1000},
		{"second void does nothing", "cash:a", false, 1000},
		{"void of a debit never seen closes the key", "cash:b", false, 1000},
	}
	for _, tt := range tests {
		if ret, out := l.Void("acct-0", 100, tt.key); out.status != 200 || ret != tt.wantReturned || l.Total().Total != tt.wantTotal {
			t.Errorf("%s: returned %v status %d total %d; want %v 200 %d", tt.name, ret, out.status, l.Total().Total, tt.wantReturned, tt.wantTotal)
		}
	}
	if out := l.Debit("acct-0", 100, "cash:b"); out.status != 409 || out.reason != reasonReversed {
		t.Errorf("late debit with a voided key: %d %s, want 409 reversed", out.status, out.reason)
	}
	if got := l.Total().NetDebits["cash"]; got != 0 {
		t.Errorf("net cash debits = %d, want 0", got)
	}
	if _, out := l.Void("acct-0", 999, "cash:a"); out.status != 422 {
		t.Errorf("void with another amount: %d, want 422 mismatch", out.status)
	}

	v := newVault(1000)
	v.Withdraw(300, "w1")
	if ret, _ := v.Void(300, "w1"); !ret || v.Total().Cash != 1000 || v.Total().Withdrawn != 0 {
		t.Errorf("void of a paid withdrawal: returned %v, %+v; want the cash back", ret, v.Total())
	}
	if ret, _ := v.Void(300, "w1"); ret || v.Total().Cash != 1000 {
		t.Errorf("second void: returned %v, cash %d; want nothing", ret, v.Total().Cash)
	}
	v.Void(50, "w2")
	if out := v.Withdraw(50, "w2"); out.status != 409 || v.Total().Cash != 1000 {
		t.Errorf("late withdrawal with a voided key: %d, cash %d; want 409 and nothing paid", out.status, v.Total().Cash)
	}
}

func TestLedgerHistorySeeded(t *testing.T) {
	l := newLedgerWithHistory(2, 1000, 25)
	entries, more, ok := l.Page("acct-1", 2)
	if !ok || more || len(entries) != 5 {
		t.Fatalf("page 2 of 25 opening entries: %d entries, more %v; want 5, false", len(entries), more)
	}
	var sum int64
	for p := range 3 {
		es, _, _ := l.Page("acct-1", p)
		for _, e := range es {
			sum += e.Amount
		}
	}
	if sum != 1000 || l.Total().Total != 2000 || len(l.Total().NetDebits) != 0 {
		t.Errorf("opening entries sum to %d (want 1000), total %+v (want 2000, no movements)", sum, l.Total())
	}
}
