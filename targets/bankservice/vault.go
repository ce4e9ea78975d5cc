package bankservice

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// cashVault holds the bank's cash. Withdrawals are idempotent by key.
type cashVault struct {
	mu        sync.Mutex
	cash      int64
	withdrawn int64
	initial   int64
	done      *memory
}

// newVault returns a vault holding cash cents.
func newVault(cash int64) *cashVault { return &cashVault{cash: cash, initial: cash, done: newMemory()} }

// Withdraw hands out amount once per key (a replayed key returns the first outcome;
// a key reused for another amount is refused). An empty key is not deduplicated.
func (v *cashVault) Withdraw(amount int64, key string) outcome {
	v.mu.Lock()
	defer v.mu.Unlock()
	fp := fmt.Sprintf("withdraw %d", amount)
	if key != "" {
		if r, ok := v.done.get(key); ok {
			if r.fingerprint != fp {
				return outcome{status: http.StatusUnprocessableEntity, reason: reasonIdempotencyMismatch,
					msg: fmt.Sprintf("idempotency_key %q was used for %q, not %q", key, r.fingerprint, fp)}
			}
			out := r.out
			out.replayed = true
			return out
		}
	}
	var out outcome
	if v.cash < amount {
		out = outcome{status: http.StatusConflict, reason: reasonInsufficientCash, balance: v.cash,
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

// Void cancels the withdrawal with key: if it was paid, its cash returns to
// the vault; either way the key is closed, so a withdrawal with it arriving
// later (a delayed or retried request) is refused with 409 reversed. A void of
// an already voided key does nothing. It is how the bank settles a withdrawal
// whose outcome it does not know before it refunds the account.
func (v *cashVault) Void(amount int64, key string) (returned bool, out outcome) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fp := fmt.Sprintf("withdraw %d", amount)
	reversed := outcome{status: http.StatusConflict, reason: reasonReversed,
		msg: fmt.Sprintf("withdrawal with idempotency_key %q was voided; use a new key", key)}
	if r, ok := v.done.get(key); ok {
		if r.fingerprint != fp {
			return false, outcome{status: http.StatusUnprocessableEntity, reason: reasonIdempotencyMismatch,
				msg: fmt.Sprintf("idempotency_key %q was used for %q, not %q", key, r.fingerprint, fp)}
		}
		if r.out.status == http.StatusOK {
			v.cash += amount
			v.withdrawn -= amount
			returned = true
		}
		reversed.balance = v.cash
		v.done.byKey[key] = remembered{fingerprint: fp, out: reversed}
		return returned, outcome{status: http.StatusOK, balance: v.cash}
	}
	reversed.balance = v.cash
	v.done.put(key, fp, reversed)
	return false, outcome{status: http.StatusOK, balance: v.cash}
}

// Total returns the cash left and the total withdrawn.
func (v *cashVault) Total() vaultTotal {
	v.mu.Lock()
	defer v.mu.Unlock()
	return vaultTotal{Cash: v.cash, Withdrawn: v.withdrawn, Initial: v.initial}
}

// vaultAPI serves a Vault over HTTP, with simulated service time per call.
type vaultAPI struct {
	Vault       *cashVault
	ServiceTime time.Duration
}

// Register adds the vault routes: POST /vault/withdraw, POST /vault/void,
// GET /vault/total.
func (a *vaultAPI) Register(r router) {
	r.Handle("POST /vault/withdraw", http.HandlerFunc(a.withdraw))
	r.Handle("POST /vault/void", http.HandlerFunc(a.void))
	r.Handle("GET /vault/total", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		platform.WriteJSON(w, http.StatusOK, a.Vault.Total())
	}))
}

func (a *vaultAPI) withdraw(w http.ResponseWriter, r *http.Request) {
	var in withdrawal
	if err := platform.DecodeJSON(w, r, &in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest,
			fmt.Sprintf("POST /vault/withdraw: %v; fields: amount, idempotency_key", err))
		return
	}
	if err := validate("", false, in.Amount); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest, err.Error())
		return
	}
	work(r.Context(), a.ServiceTime)
	out := a.Vault.Withdraw(in.Amount, in.IdempotencyKey)
	if out.status != http.StatusOK {
		platform.WriteError(w, out.status, out.reason, out.msg)
		return
	}
	t := a.Vault.Total()
	platform.WriteJSON(w, http.StatusOK, vaultTotal{Cash: out.balance, Withdrawn: t.Withdrawn})
}

func (a *vaultAPI) void(w http.ResponseWriter, r *http.Request) {
	var in void
	if err := platform.DecodeJSON(w, r, &in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest,
			fmt.Sprintf("POST /vault/void: %v; fields: amount, idempotency_key", err))
		return
	}
	if err := validate("", false, in.Amount); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest, err.Error())
		return
	}
	if in.IdempotencyKey == "" {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest, `field "idempotency_key" is required: it names the withdrawal to void`)
		return
	}
	work(r.Context(), a.ServiceTime)
	returned, out := a.Vault.Void(in.Amount, in.IdempotencyKey)
	if out.status != http.StatusOK {
		platform.WriteError(w, out.status, out.reason, out.msg)
		return
	}
	platform.WriteJSON(w, http.StatusOK, voidAnswer{Returned: returned, Cash: out.balance})
}
