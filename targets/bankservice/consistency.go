package bankservice

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// quiesceWait bounds how long GET /consistency waits for cash transactions in
// flight to end and pending refunds and refills to settle.
const quiesceWait = 5 * time.Second

// consistencyClient reads totals straight from each replica.
var consistencyClient = &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 2 * time.Second}

// consistency is GET /consistency, the end-of-run money check: it lets
// transactions in flight end and pending refunds settle, reads the totals of
// every ledger replica, the vault and the drawer, and checks
//
//	ledger_initial - ledger_total == net debits (check + cash + other)
//	vault_cash + drawer_cash + paid_out == vault_initial   (no cash made or lost)
//	ledger_net_cash == paid_out                            (each cash key debited once, paid once)
//
// with every replica agreeing and nothing left pending. It assumes this bank
// is the only one paying cash from the vault and debiting "cash:" keys.
func (b *bank) consistency(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 8*time.Second)
	defer cancel()
	b.quiesce(ctx)
	c := b.check1(ctx)
	platform.WriteJSON(w, http.StatusOK, c)
}

// quiesce waits (up to quiesceWait) until no cash transaction runs and no
// refund or refill is pending, settling them meanwhile.
func (b *bank) quiesce(ctx context.Context) {
	until := time.Now().Add(quiesceWait)
	for {
		b.settleAll(ctx)
		b.refillOnce(ctx, false)
		b.mu.Lock()
		quiet := len(b.pending) == 0 && b.refill == nil
		b.mu.Unlock()
		if (quiet && b.inflight.Load() == 0) || time.Now().After(until) || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// check1 gathers the totals and checks the invariants.
func (b *bank) check1(ctx context.Context) consistency {
	vals := map[string]int64{}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	lt, err := b.ledgerTotals(ctx)
	if err != nil {
		bad("ledger: %v", err)
	}
	var vt vaultTotal
	if len(b.cfg.VaultAddrs) > 0 {
		err = getTotal(ctx, b.cfg.VaultAddrs[0], "/vault/total", &vt)
	} else {
		err = b.vault.GetJSON(ctx, "/vault/total", &vt)
	}
	if err != nil {
		bad("vault: %v", err)
	}
	ds := b.drawer.State()
	b.mu.Lock()
	var pendingCents int64
	for _, s := range b.pending {
		pendingCents += s.amount
	}
	vals["pending_refunds"], vals["pending_refund_cents"] = int64(len(b.pending)), pendingCents
	vals["refill_unknown"] = 0
	if b.refill != nil {
		vals["refill_unknown"] = b.refill.amount
	}
	b.mu.Unlock()
	vals["cash_in_flight"] = b.inflight.Load()
	vals["ledger_total"], vals["ledger_initial"] = lt.Total, lt.Initial
	var net int64
	for _, p := range slices.Sorted(maps.Keys(lt.NetDebits)) {
		vals["ledger_net_"+p] = lt.NetDebits[p]
		net += lt.NetDebits[p]
	}
	vals["vault_cash"], vals["vault_initial"] = vt.Cash, vt.Initial
	vals["drawer_cash"], vals["drawer_reserved"] = ds.Cash, ds.Reserved
	vals["paid_out"], vals["refilled"] = ds.PaidOut, ds.Refilled
	if len(problems) == 0 {
		if got := lt.Initial - lt.Total; got != net {
			bad("ledger: initial - total = %d, but net debits = %d", got, net)
		}
		if got := vt.Cash + ds.Cash + ds.PaidOut; got != vt.Initial {
			bad("cash: vault %d + drawer %d + paid out %d = %d, want vault initial %d (%+d)",
				vt.Cash, ds.Cash, ds.PaidOut, got, vt.Initial, got-vt.Initial)
		}
		if cashNet := lt.NetDebits["cash"]; cashNet != ds.PaidOut {
			bad("cash debited from accounts %d != cash paid out %d (%+d)", cashNet, ds.PaidOut, cashNet-ds.PaidOut)
		}
	}
	if vals["pending_refunds"] > 0 || vals["refill_unknown"] > 0 || vals["cash_in_flight"] > 0 {
		bad("not settled after %s: %d refunds (%d cents) pending, refill of %d cents unknown, %d cash transactions in flight",
			quiesceWait, vals["pending_refunds"], pendingCents, vals["refill_unknown"], vals["cash_in_flight"])
	}
	if len(problems) > 0 {
		return consistency{OK: false, Detail: strings.Join(problems, "; "), Values: vals}
	}
	return consistency{OK: true, Values: vals, Detail: fmt.Sprintf(
		"money conserved: accounts lost %d = checks %d + cash %d; vault %d + drawer %d + paid out %d = %d",
		lt.Initial-lt.Total, lt.NetDebits["check"], lt.NetDebits["cash"], vt.Cash, ds.Cash, ds.PaidOut, vt.Initial)}
}

// ledgerTotals reads GET /ledger/total from every replica (they front one
// store, so they must agree), or once through the client.
func (b *bank) ledgerTotals(ctx context.Context) (ledgerTotal, error) {
	if len(b.cfg.LedgerReplicas) == 0 {
		var lt ledgerTotal
		err := b.ledger.GetJSON(ctx, "/ledger/total", &lt)
		return lt, err
	}
	var first ledgerTotal
	for i, addr := range b.cfg.LedgerReplicas {
		var lt ledgerTotal
		if err := getTotal(ctx, addr, "/ledger/total", &lt); err != nil {
			return first, fmt.Errorf("replica %d: %w", i, err)
		}
		if i == 0 {
			first = lt
			continue
		}
		if lt.Total != first.Total || lt.Initial != first.Initial || !maps.Equal(lt.NetDebits, first.NetDebits) {
			return first, fmt.Errorf("replica %d (%s) disagrees with replica 0: total %d vs %d, net debits %v vs %v",
				i, addr, lt.Total, first.Total, lt.NetDebits, first.NetDebits)
		}
	}
	return first, nil
}

// getTotal GETs http://addr+path into out.
func getTotal(ctx context.Context, addr, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := consistencyClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s%s: %w", addr, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s%s: %s: %.200s", addr, path, resp.Status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s%s: decode %.200q: %w", addr, path, body, err)
	}
	return nil
}
