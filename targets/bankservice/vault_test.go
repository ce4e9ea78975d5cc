package bankservice

import (
	"net/http"
	"testing"
)

func TestVaultWithdraw(t *testing.T) {
	v := newVault(1000)
	if out := v.Withdraw(600, "a"); out.status != 200 || out.balance != 400 {
		t.Fatalf("withdraw 600: %+v, want 200 with 400 left", out)
	}
	if out := v.Withdraw(600, "a"); out.status != 200 || out.balance != 400 {
		t.Errorf("replay: %+v, want the first answer", out)
	}
	if out := v.Withdraw(600, "b"); out.status != http.StatusConflict || out.reason != reasonInsufficientCash {
		t.Errorf("withdraw over the cash left: %+v, want 409 insufficient-cash", out)
	}
	if out := v.Withdraw(1, "a"); out.status != http.StatusUnprocessableEntity {
		t.Errorf("key reused for another amount: %+v, want 422", out)
	}
	if got := v.Total(); got.Cash != 400 || got.Withdrawn != 600 {
		t.Errorf("total = %+v, want 400 cash, 600 withdrawn", got)
	}
}

func TestVaultHTTP(t *testing.T) {
	ts := serve(t, (&vaultAPI{Vault: newVault(100)}).Register, 4, 0)
	if a := post(t, ts.URL+"/vault/withdraw", withdrawal{60, "x"}); a.status != 200 || decode[vaultTotal](t, a).Cash != 40 {
		t.Errorf("withdraw: %d %s, want 200 cash 40", a.status, a.body)
	}
	if a := post(t, ts.URL+"/vault/withdraw", withdrawal{60, "y"}); a.status != 409 || a.err().Reason != reasonInsufficientCash {
		t.Errorf("overdraw: %d %s, want 409 insufficient-cash", a.status, a.body)
	}
	if a := post(t, ts.URL+"/vault/withdraw", map[string]any{"amount": -1}); a.status != 400 {
		t.Errorf("negative amount: %d %s, want 400", a.status, a.body)
	}
	if got := decode[vaultTotal](t, getURL(t, ts.URL+"/vault/total")); got.Cash != 40 || got.Withdrawn != 60 {
		t.Errorf("total = %+v", got)
	}
}
