package bankservice

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

func TestMainsServeAndStop(t *testing.T) {
	ledgerURL, stopLedger := runMain(t, LedgerMain, "--accounts", "5", "--service-time", "0s")
	vaultURL, stopVault := runMain(t, VaultMain, "--cash", "500")
	bankURL, stopBank := runMain(t, BankMain, "--dep", "ledger="+strings.TrimPrefix(ledgerURL, "http://"),
		"--dep", "vault="+strings.TrimPrefix(vaultURL, "http://"))

	for _, base := range []string{ledgerURL, vaultURL, bankURL} {
		if a := getURL(t, base+"/healthz"); a.status != 200 || string(a.body) != "ok" {
			t.Errorf("%s/healthz = %d %q, want 200 ok", base, a.status, a.body)
		}
		if a := getURL(t, base+"/metrics"); a.status != 200 || !strings.Contains(string(a.body), "platform_inflight") {
			t.Errorf("%s/metrics = %d, want 200 with platform_inflight", base, a.status)
		}
	}
	if got := decode[ledgerTotal](t, getURL(t, ledgerURL+"/ledger/total")); got.Accounts != 5 || got.Total != 5*seedBalance {
		t.Errorf("ledger total = %+v, want 5 accounts of %d", got, seedBalance)
	}
	if a := post(t, bankURL+"/transact/cash", transaction{"acct-4", 200, "x"}); a.status != 200 {
		t.Errorf("cash through the processes: %d %s", a.status, a.body)
	}
	if got := decode[vaultTotal](t, getURL(t, vaultURL+"/vault/total")); got.Cash != 300 {
		t.Errorf("vault cash = %d, want 300", got.Cash)
	}
	metrics := string(getURL(t, bankURL+"/metrics").body)
	for _, want := range []string{`platform_bulkhead_inflight{bulkhead="vault"} 0`, `platform_requests_total{code="200",route="POST /transact/cash"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("bank /metrics lacks %q", want)
		}
	}
	for name, stop := range map[string]func() (error, time.Duration){"bank": stopBank, "ledger": stopLedger, "vault": stopVault} {
		err, took := stop()
		if err != nil {
			t.Errorf("%s Main returned %v after cancel, want nil", name, err)
		}
		if took > 2500*time.Millisecond {
			t.Errorf("%s took %s to stop, want within 2s", name, took)
		}
	}
}

func TestMainsFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		main mainFunc
		args []string
		want []string
	}{
		{"unknown flag", LedgerMain, []string{"--acounts", "3"}, []string{"unknown flag -acounts", "--accounts", "--service-time", "--workers"}},
		{"vault unknown flag", VaultMain, []string{"--ledger-limit", "3"}, []string{"unknown flag -ledger-limit", "--cash"}},
		{"bank deps missing", BankMain, nil, []string{"--dep ledger=ADDR is required"}},
		{"bank vault missing", BankMain, []string{"--dep", "ledger=127.0.0.1:1"}, []string{"--dep vault=ADDR is required"}},
		{"bad bulkheads", BankMain, []string{"--bulkheads", "maybe"}, []string{"want on or off", "--bulkheads"}},
		{"ledger takes one dep", LedgerMain, []string{"--dep", "vault=127.0.0.1:1", "--dep", "p=127.0.0.1:2"}, []string{"at most one dependency, its primary"}},
		{"bad history", LedgerMain, []string{"--history", "5000"}, []string{"--history 5000: must be 0..1000"}},
		{"bad list bulkhead", BankMain, []string{"--list-bulkhead", "soft"}, []string{"want hard, shadow or off", "--list-bulkhead"}},
		{"bad retry mode", BankMain, []string{"--retry-mode", "eager"}, []string{"--retry-mode"}},
		{"bad drawer", BankMain, []string{"--dep", "ledger=h:1", "--dep", "vault=h:2", "--drawer-low", "5", "--drawer-capacity", "1"}, []string{"--drawer-capacity 1, --drawer-low 5"}},
		{"bad accounts", LedgerMain, []string{"--accounts", "0"}, []string{"--accounts 0"}},
		{"bad limit", BankMain, []string{"--dep", "ledger=h:1", "--dep", "vault=h:2", "--vault-limit", "0"}, []string{"--vault-limit 0"}},
		{"listen fails", VaultMain, []string{"--listen", "127.0.0.1:x"}, []string{`listen on "127.0.0.1:x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var out strings.Builder
			err := tt.main(ctx, tt.args, &out, io.Discard)
			if err == nil {
				t.Fatalf("no error; want one with %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing on a failed start", out.String())
			}
		})
	}
}
