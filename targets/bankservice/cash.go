package bankservice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/client"
)

// settleTimeout bounds one settlement (void at the vault, credit at the ledger).
const settleTimeout = 3 * time.Second

// maxPending bounds the refunds waiting for the vault or the ledger to answer.
const maxPending = 100_000

// settlement is a cash transaction to undo: the vault withdrawal voided (when
// its outcome is unknown), then the ledger debit voided (credited back if it
// was applied, its key closed if not).
type settlement struct {
	account string
	amount  int64
	key     string
	void    bool
}

// refill is a drawer refill from the vault, retried with its key until the
// vault answers for sure.
type refill struct {
	key    string
	amount int64
}

// errPending refuses a replay of a transaction whose refund is under way.
var errPending = errors.New("this transaction failed and its refund is under way; use a new idempotency_key")

// cash is TransactCash. Requests with the same key run once at a time.
func (b *bank) cash(w http.ResponseWriter, r *http.Request) {
	in, ok := b.decode(w, r)
	if !ok {
		return
	}
	b.inflight.Add(1)
	defer b.inflight.Add(-1)
	key := "cash:" + in.IdempotencyKey
	v, _, _ := b.sf.Do(key, func() (any, error) {
		ans, err := b.transactCash(r.Context(), in, key)
		return cashResult{ans, err}, nil
	})
	res := v.(cashResult)
	if res.err != nil {
		b.fail(w, res.err)
		return
	}
	platform.WriteJSON(w, http.StatusOK, res.ans)
}

type cashResult struct {
	ans transactionAnswer
	err error
}

// transactCash pays in.Amount from the drawer when it holds it, else from
// the vault (taking a vault permit first: a full vault bulkhead fails fast,
// before any debit). The ledger is debited first; cash the bank then does not
// pay is refunded (see refund). A key the bank has paid is never paid again.
func (b *bank) transactCash(ctx context.Context, in transaction, key string) (transactionAnswer, error) {
	reserved := b.drawer.Reserve(in.Amount)
	if !reserved {
		release, ok := b.vaultBH.TryAcquire()
		if !ok {
			return transactionAnswer{}, errBulkhead{b.vaultBH}
		}
		defer release()
	}
	unreserve := func() {
		if reserved {
			b.drawer.Release(in.Amount)
		}
	}
	var ans balanceAnswer
	if err := b.callLedger(ctx, "/ledger/debit", ledgerOp{in.Account, in.Amount, key}, &ans); err != nil {
		unreserve()
		if mayHaveApplied(err) { // the debit may have been applied: undo it
			if rerr := b.refund(ctx, settlement{account: in.Account, amount: in.Amount, key: key}); rerr != nil {
				err = fmt.Errorf("%w; the void of this debit is pending (%v)", err, rerr)
			}
		}
		return transactionAnswer{}, err
	}
	paid := transactionAnswer{Account: in.Account, Amount: in.Amount, Balance: ans.Balance}
	if b.isPending(key) {
		unreserve()
		return transactionAnswer{}, errPending
	}
	if _, ok := b.drawer.PaidBy(key); ok { // a replay of a paid transaction
		unreserve()
		return paid, nil
	}
	if reserved {
		if b.drawer.Pay(key, in.Amount, sourceDrawer) {
			b.payouts.WithLabelValues(sourceDrawer).Inc()
		}
		return paid, nil
	}
	err := b.vault.PostJSON(ctx, "/vault/withdraw", withdrawal{in.Amount, key}, nil)
	if err == nil {
		if b.drawer.Pay(key, in.Amount, sourceVault) {
			b.payouts.WithLabelValues(sourceVault).Inc()
		}
		return paid, nil
	}
	s := settlement{account: in.Account, amount: in.Amount, key: key, void: !definitive(err)}
	if rerr := b.refund(ctx, s); rerr != nil {
		return transactionAnswer{}, fmt.Errorf("%w; the refund of %d cents to %s is pending (%v)", err, in.Amount, in.Account, rerr)
	}
	return transactionAnswer{}, err
}

// definitive says whether a failed vault call is a sure refusal (a 4xx
// answer: the vault remembers each key's first outcome, so no attempt of the
// call was paid); anything else may have been paid.
func definitive(err error) bool {
	var de *client.DepError
	return errors.As(err, &de) && de.Kind == client.KindStatus && de.Status >= 400 && de.Status < 500
}

// mayHaveApplied says whether a failed call may still have been applied: any
// dependency failure but a 4xx answer (nothing was sent past a full bulkhead).
func mayHaveApplied(err error) bool {
	var de *client.DepError
	return errors.As(err, &de) && !definitive(err)
}

func (b *bank) isPending(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.pending[key]
	return ok
}

// refund settles s now, or leaves it pending for Run to settle once the
// vault and ledger answer; until then a replay of its key is refused.
func (b *bank) refund(ctx context.Context, s settlement) error {
	b.mu.Lock()
	b.pending[s.key] = s // visible to replays while the settlement runs
	b.mu.Unlock()
	err := b.settle(context.WithoutCancel(ctx), s)
	if err == nil {
		b.refunds.WithLabelValues("ok").Inc()
		return nil
	}
	b.refunds.WithLabelValues("pending").Inc()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) > maxPending {
		delete(b.pending, s.key)
		b.refunds.WithLabelValues("failed").Inc()
		b.log.Error("refund dropped: too many pending; money not conserved", "account", s.account, "amount", s.amount, "key", s.key)
	}
	return err
}

// settle voids s at the vault if needed, then at the ledger, and
// forgets s. It returns an error (and keeps s) when either call failed in a
// way that a retry may fix; a refusal is logged and s dropped. Both calls are
// idempotent by key, so two settlements of one key at once do no harm.
func (b *bank) settle(ctx context.Context, s settlement) error {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	done := func() {
		b.mu.Lock()
		delete(b.pending, s.key)
		b.mu.Unlock()
	}
	if s.void {
		var va voidAnswer
		if err := b.vault.PostJSON(ctx, "/vault/void", void{s.amount, s.key}, &va); err != nil {
			if !definitive(err) {
				return fmt.Errorf("void at the vault: %w", err)
			}
			b.refunds.WithLabelValues("failed").Inc()
			b.log.Error("vault refused a void; not refunded", "account", s.account, "amount", s.amount, "key", s.key, "err", err)
			done()
			return nil
		}
		s.void = false
		b.mu.Lock()
		if _, ok := b.pending[s.key]; ok {
			b.pending[s.key] = s // voided: a later pass only credits
		}
		b.mu.Unlock()
	}
	if err := b.ledger.PostJSON(ctx, "/ledger/void", ledgerOp{s.account, s.amount, s.key}, nil); err != nil {
		if !definitive(err) {
			return fmt.Errorf("void at the ledger: %w", err)
		}
		b.refunds.WithLabelValues("failed").Inc()
		b.log.Error("ledger refused a refund; money not conserved", "account", s.account, "amount", s.amount, "key", s.key, "err", err)
	}
	done()
	return nil
}

// settleAll retries the pending refunds, stopping at the first that fails
// (the vault or ledger is still not answering).
func (b *bank) settleAll(ctx context.Context) {
	b.mu.Lock()
	todo := make([]settlement, 0, len(b.pending))
	for _, s := range b.pending {
		todo = append(todo, s)
	}
	b.mu.Unlock()
	for _, s := range todo {
		if ctx.Err() != nil {
			return
		}
		if err := b.settle(ctx, s); err != nil {
			return
		}
		b.refunds.WithLabelValues("ok").Inc()
	}
}

// refillOnce fills the drawer from the vault when it is low, or retries a
// refill whose outcome is unknown with the same key (startNew false: only
// that). A full vault bulkhead postpones it.
func (b *bank) refillOnce(ctx context.Context, startNew bool) {
	b.refillMu.Lock()
	defer b.refillMu.Unlock()
	b.mu.Lock()
	rf := b.refill
	if rf == nil {
		amount := b.drawer.RefillAmount()
		if !startNew || amount <= 0 {
			b.mu.Unlock()
			return
		}
		b.refillNo++
		rf = &refill{key: fmt.Sprintf("refill:%s:%d", b.instance, b.refillNo), amount: amount}
		b.refill = rf
	}
	b.mu.Unlock()
	release, ok := b.vaultBH.TryAcquire()
	if !ok {
		return
	}
	defer release()
	err := b.vault.PostJSON(ctx, "/vault/withdraw", withdrawal{rf.amount, rf.key}, nil)
	switch {
	case err == nil:
		b.drawer.Refill(rf.amount)
		b.refillsC.WithLabelValues("ok").Inc()
	case definitive(err):
		b.refillsC.WithLabelValues("refused").Inc()
		b.log.Warn("vault refused a drawer refill", "amount", rf.amount, "key", rf.key, "err", err)
	default:
		b.refillsC.WithLabelValues("unknown").Inc()
		return // keep it: retried with the same key
	}
	b.mu.Lock()
	b.refill = nil
	b.mu.Unlock()
}
