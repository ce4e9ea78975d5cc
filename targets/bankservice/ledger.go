package bankservice

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxEntries bounds the history kept per account (oldest dropped).
const maxEntries = 1000

// ledgerBook holds accounts in memory. Debits and credits are idempotent by key.
type ledgerBook struct {
	mu       sync.Mutex
	balances map[string]int64
	history  map[string][]entry
	total    int64
	initial  int64
	net      map[string]int64 // debits - credits by purpose (key prefix)
	seq      int64
	done     *memory
	now      func() time.Time
}

// newLedger seeds accounts acct-0..acct-(n-1), each with balance cents.
func newLedger(n int, balance int64) *ledgerBook { return newLedgerWithHistory(n, balance, 0) }

// newLedgerWithHistory is NewLedger with each account's opening balance shown
// as history entries "open" (at most maxEntries), so that ListTransactions has
// long ranges to read from the start. They move no money.
func newLedgerWithHistory(n int, balance int64, history int) *ledgerBook {
	l := &ledgerBook{balances: make(map[string]int64, n), history: map[string][]entry{}, net: map[string]int64{},
		done: newMemory(), now: time.Now}
	history = min(max(history, 0), maxEntries)
	at := l.now()
	for i := range n {
		name := accountName(i)
		l.balances[name] = balance
		if history == 0 {
			continue
		}
		h := make([]entry, 0, history)
		var bal int64
		for j := range history {
			amt := balance / int64(history)
			if j == history-1 {
				amt = balance - bal
			}
			bal += amt
			l.seq++
			h = append(h, entry{Seq: l.seq, Kind: "open", Amount: amt, Balance: bal, Time: at})
		}
		l.history[name] = h
	}
	l.total = int64(n) * balance
	l.initial = l.total
	return l
}

// purpose is the part of an idempotency key before ":", or "other".
func purpose(key string) string {
	if p, _, ok := strings.Cut(key, ":"); ok && p != "" {
		return p
	}
	return "other"
}

// accountName is the name of the i-th seeded account.
func accountName(i int) string { return fmt.Sprintf("acct-%d", i) }

// Debit takes amount from account; see apply.
func (l *ledgerBook) Debit(account string, amount int64, key string) outcome {
	return l.apply("debit", account, amount, key)
}

// Credit adds amount to account; see apply.
func (l *ledgerBook) Credit(account string, amount int64, key string) outcome {
	return l.apply("credit", account, amount, key)
}

// apply moves money once per key: a replayed key returns the first outcome, and a
// key reused for a different request is refused. An empty key is not deduplicated.
func (l *ledgerBook) apply(kind, account string, amount int64, key string) outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	fp := fmt.Sprintf("%s %s %d", kind, account, amount)
	if key != "" {
		if r, ok := l.done.get(kind + ":" + key); ok {
			if r.fingerprint != fp {
				return outcome{status: http.StatusUnprocessableEntity, reason: reasonIdempotencyMismatch,
					msg: fmt.Sprintf("idempotency_key %q was used for %q, not %q", key, r.fingerprint, fp)}
			}
			out := r.out
			out.replayed = true
			return out
		}
	}
	out := l.move(kind, account, amount, key)
	if key != "" {
		l.done.put(kind+":"+key, fp, out)
		if kind == "credit" && out.status == http.StatusOK {
			l.reverse(account, amount, key)
		}
	}
	return out
}

// Void cancels the debit with key (account and amount as debited): if it was
// applied, amount is credited back with the same key and the debit marked
// reversed; if it never arrived, the key is closed so that a debit with it
// arriving later is refused with 409 reversed; a second void does nothing.
// Unlike a credit, a void never adds money that was not taken, so a caller
// that does not know whether its debit was applied can always void it.
func (l *ledgerBook) Void(account string, amount int64, key string) (returned bool, out outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if key == "" {
		return false, outcome{status: http.StatusBadRequest, reason: reasonBadRequest, msg: "a void needs the debit's idempotency_key"}
	}
	fp := fmt.Sprintf("debit %s %d", account, amount)
	reversed := outcome{status: http.StatusConflict, reason: reasonReversed,
		msg: fmt.Sprintf("debit with idempotency_key %q was voided; use a new key", key)}
	r, ok := l.done.get("debit:" + key)
	switch {
	case !ok:
		l.done.put("debit:"+key, fp, reversed)
	case r.fingerprint != fp:
		return false, outcome{status: http.StatusUnprocessableEntity, reason: reasonIdempotencyMismatch,
			msg: fmt.Sprintf("idempotency_key %q was used for %q, not %q", key, r.fingerprint, fp)}
	case r.out.status == http.StatusOK:
		if _, credited := l.done.get("credit:" + key); !credited {
			out := l.move("credit", account, amount, key)
			l.done.put("credit:"+key, fmt.Sprintf("credit %s %d", account, amount), out)
			returned = true
		}
		reversed.balance = l.balances[account]
		l.done.byKey["debit:"+key] = remembered{fingerprint: fp, out: reversed}
	}
	return returned, outcome{status: http.StatusOK, balance: l.balances[account]}
}

// reverse marks the debit with key (same account and amount), if it succeeded, as
// reversed by a credit: replaying that debit now answers 409 reversed, so a
// refunded transaction cannot be paid out by a retry. The caller holds mu.
func (l *ledgerBook) reverse(account string, amount int64, key string) {
	r, ok := l.done.get("debit:" + key)
	if !ok || r.out.status != http.StatusOK || r.fingerprint != fmt.Sprintf("debit %s %d", account, amount) {
		return
	}
	r.out = outcome{status: http.StatusConflict, reason: reasonReversed, balance: r.out.balance,
		msg: fmt.Sprintf("debit with idempotency_key %q was reversed by a credit; use a new key", key)}
	l.done.byKey["debit:"+key] = r
}

// move applies one movement; the caller holds mu.
func (l *ledgerBook) move(kind, account string, amount int64, key string) outcome {
	bal, ok := l.balances[account]
	if !ok {
		return outcome{status: http.StatusNotFound, reason: reasonUnknownAccount,
			msg: fmt.Sprintf("account %q does not exist (accounts are acct-0..acct-%d)", account, len(l.balances)-1)}
	}
	if kind == "debit" {
		if bal < amount {
			return outcome{status: http.StatusConflict, reason: reasonInsufficientFunds, balance: bal,
				msg: fmt.Sprintf("account %s has %d cents; debit of %d refused", account, bal, amount)}
		}
		bal -= amount
		l.total -= amount
		l.net[purpose(key)] += amount
	} else {
		bal += amount
		l.total += amount
		l.net[purpose(key)] -= amount
	}
	l.balances[account] = bal
	l.seq++
	h := append(l.history[account], entry{Seq: l.seq, Kind: kind, Amount: amount, Balance: bal, Key: key, Time: l.now()})
	if len(h) > maxEntries {
		h = append(h[:0:0], h[len(h)-maxEntries:]...)
	}
	l.history[account] = h
	return outcome{status: http.StatusOK, balance: bal}
}

// Page returns page p (0 = newest) of account's history, PageSize entries each.
// ok is false if the account does not exist.
func (l *ledgerBook) Page(account string, p int) (entries []entry, more, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.balances[account]; !ok {
		return nil, false, false
	}
	h := l.history[account]
	end := len(h) - p*pageSize
	if end <= 0 {
		return []entry{}, false, true
	}
	start := max(end-pageSize, 0)
	entries = make([]entry, 0, end-start)
	for i := end - 1; i >= start; i-- {
		entries = append(entries, h[i])
	}
	return entries, start > 0, true
}

// Total is the sum of all balances.
func (l *ledgerBook) Total() ledgerTotal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ledgerTotal{Total: l.total, Accounts: len(l.balances), Initial: l.initial, NetDebits: maps.Clone(l.net)}
}

// Initial is the sum of balances at seeding.
func (l *ledgerBook) Initial() int64 { return l.initial }
