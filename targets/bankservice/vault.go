package bankservice

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// Vault holds the bank's cash. Withdrawals are idempotent by key.
type Vault struct {
	mu        sync.Mutex
	cash      int64
	withdrawn int64
	done      *memory
}

// NewVault returns a vault holding cash cents.
func NewVault(cash int64) *Vault { return &Vault{cash: cash, done: newMemory()} }

// Withdraw hands out amount once per key (a replayed key returns the first outcome;
// a key reused for another amount is refused). An empty key is not deduplicated.
func (v *Vault) Withdraw(amount int64, key string) outcome {
	v.mu.Lock()
	defer v.mu.Unlock()
	fp := fmt.Sprintf("withdraw %d", amount)
	if key != "" {
		if r, ok := v.done.get(key); ok {
			if r.fingerprint != fp {
				return outcome{status: http.StatusUnprocessableEntity, reason: ReasonIdempotencyMismatch,
					msg: fmt.Sprintf("idempotency_key %q was used for %q, not %q", key, r.fingerprint, fp)}
			}
			out := r.out
			out.replayed = true
			return out
		}
	}
	var out outcome
	if v.cash < amount {
		out = outcome{status: http.StatusConflict, reason: ReasonInsufficientCash, balance: v.cash,
			msg: fmt.Sprintf("vault holds %d cents; withdrawal of %d refused", v.cash, amount)}
	} else {
		v.cash -= amount
		v.withdrawn += amount
		out = outcome{status: http.StatusOK, balance: v.cash}
	}
	if key != "" {
		v.done.put(key, fp, out)
	}
	return out
}

// Total returns the cash left and the total withdrawn.
func (v *Vault) Total() VaultTotal {
	v.mu.Lock()
	defer v.mu.Unlock()
	return VaultTotal{Cash: v.cash, Withdrawn: v.withdrawn}
}

// VaultAPI serves a Vault over HTTP, with simulated service time per call.
type VaultAPI struct {
	Vault       *Vault
	ServiceTime time.Duration
}

// Register adds the vault routes: POST /vault/withdraw, GET /vault/total.
func (a *VaultAPI) Register(r Router) {
	r.Handle("POST /vault/withdraw", http.HandlerFunc(a.withdraw))
	r.Handle("GET /vault/total", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		platform.WriteJSON(w, http.StatusOK, a.Vault.Total())
	}))
}

func (a *VaultAPI) withdraw(w http.ResponseWriter, r *http.Request) {
	var in Withdrawal
	if err := platform.DecodeJSON(w, r, &in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, ReasonBadRequest,
			fmt.Sprintf("POST /vault/withdraw: %v; fields: amount, idempotency_key", err))
		return
	}
	if err := validate("", false, in.Amount); err != nil {
		platform.WriteError(w, http.StatusBadRequest, ReasonBadRequest, err.Error())
		return
	}
	work(r.Context(), a.ServiceTime)
	out := a.Vault.Withdraw(in.Amount, in.IdempotencyKey)
	if out.status != http.StatusOK {
		platform.WriteError(w, out.status, out.reason, out.msg)
		return
	}
	t := a.Vault.Total()
	platform.WriteJSON(w, http.StatusOK, VaultTotal{Cash: out.balance, Withdrawn: t.Withdrawn})
}
