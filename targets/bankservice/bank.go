package bankservice

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/prometheus/client_golang/prometheus"
)

// maxPages bounds GET /transactions?pages=N.
const maxPages = 100

// refundAttempts bounds how often the bank tries to credit a failed cash debit back.
const refundAttempts = 3

// BankConfig sets the bank's bulkheads.
type BankConfig struct {
	Bulkheads   bool // off: the bulkheads admit everything
	LedgerLimit int  // concurrent ledger calls
	VaultLimit  int  // concurrent vault calls
}

// Bank serves TransactCheck, TransactCash and ListTransactions over a ledger and a vault.
type Bank struct {
	ledger, vault     *platform.Client
	ledgerBH, vaultBH *platform.Bulkhead
	log               *slog.Logger
	refunds           *prometheus.CounterVec // outcome
}

// NewBank returns a bank calling ledger and vault. m carries the metrics (bulkheads,
// refunds); log may be nil.
func NewBank(cfg BankConfig, ledger, vault *platform.Client, m *platform.Metrics, log *slog.Logger) *Bank {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bank{
		ledger: ledger, vault: vault, log: log,
		ledgerBH: platform.NewBulkhead("ledger", cfg.LedgerLimit, cfg.Bulkheads, m),
		vaultBH:  platform.NewBulkhead("vault", cfg.VaultLimit, cfg.Bulkheads, m),
		refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bank_refunds_total", Help: "Ledger credits for cash the vault did not pay, by outcome (ok, failed).",
		}, []string{"outcome"}),
	}
	m.Registry().MustRegister(b.refunds)
	return b
}

// Register adds the bank routes: POST /transact/check, POST /transact/cash,
// GET /transactions.
func (b *Bank) Register(r Router) {
	r.Handle("POST /transact/check", http.HandlerFunc(b.check))
	r.Handle("POST /transact/cash", http.HandlerFunc(b.cash))
	r.Handle("GET /transactions", http.HandlerFunc(b.transactions))
}

func (b *Bank) decode(w http.ResponseWriter, r *http.Request) (Transaction, bool) {
	var in Transaction
	if err := platform.DecodeJSON(w, r, &in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, ReasonBadRequest,
			fmt.Sprintf("%s %s: %v; fields: account, amount, idempotency_key", r.Method, r.URL.Path, err))
		return in, false
	}
	if err := validate(in.Account, true, in.Amount); err != nil {
		platform.WriteError(w, http.StatusBadRequest, ReasonBadRequest, err.Error())
		return in, false
	}
	if in.IdempotencyKey == "" {
		in.IdempotencyKey = rand.Text()
	}
	return in, true
}

// check is TransactCheck: one ledger debit.
func (b *Bank) check(w http.ResponseWriter, r *http.Request) {
	in, ok := b.decode(w, r)
	if !ok {
		return
	}
	var ans BalanceAnswer
	if err := b.callLedger(r.Context(), "/ledger/debit", LedgerOp{in.Account, in.Amount, "check:" + in.IdempotencyKey}, &ans); err != nil {
		b.fail(w, err)
		return
	}
	platform.WriteJSON(w, http.StatusOK, TransactionAnswer{Account: in.Account, Amount: in.Amount, Balance: ans.Balance})
}

// cash is TransactCash: take a vault permit (fail fast when full), debit the
// ledger, withdraw from the vault; if the vault does not pay, refund the ledger
// unless the debit was a replay (an earlier attempt may have been paid).
func (b *Bank) cash(w http.ResponseWriter, r *http.Request) {
	in, ok := b.decode(w, r)
	if !ok {
		return
	}
	releaseVault, ok := b.vaultBH.TryAcquire()
	if !ok {
		b.fail(w, errBulkhead{b.vaultBH})
		return
	}
	defer releaseVault()
	key := "cash:" + in.IdempotencyKey
	var ans BalanceAnswer
	if err := b.callLedger(r.Context(), "/ledger/debit", LedgerOp{in.Account, in.Amount, key}, &ans); err != nil {
		b.fail(w, err)
		return
	}
	if err := b.vault.PostJSON(r.Context(), "/vault/withdraw", Withdrawal{in.Amount, key}, nil); err != nil {
		if ans.Replayed {
			// An earlier attempt with this key debited the account and may have been
			// paid: refunding could pay twice. The key stays open for a retry.
			b.fail(w, fmt.Errorf("%w; not refunded: an earlier attempt with this idempotency_key may have been paid, retry with the same key", err))
			return
		}
		if rerr := b.refund(r.Context(), LedgerOp{in.Account, in.Amount, key}); rerr != nil {
			err = fmt.Errorf("%w; refund of %d cents to %s FAILED: %v", err, in.Amount, in.Account, rerr)
		}
		b.fail(w, err)
		return
	}
	platform.WriteJSON(w, http.StatusOK, TransactionAnswer{Account: in.Account, Amount: in.Amount, Balance: ans.Balance})
}

// refund credits op back to the ledger, bypassing the bulkhead and outliving the
// request, a few times if needed (the credit is idempotent).
func (b *Bank) refund(ctx context.Context, op LedgerOp) error {
	ctx = context.WithoutCancel(ctx)
	var err error
	for attempt := range refundAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		}
		if err = b.ledger.PostJSON(ctx, "/ledger/credit", op, nil); err == nil {
			b.refunds.WithLabelValues("ok").Inc()
			return nil
		}
		if platform.KindOf(err) == platform.KindStatus && statusOf(err) < 500 {
			break // the ledger refused it; retrying will not help
		}
	}
	b.refunds.WithLabelValues("failed").Inc()
	b.log.Error("refund failed: money not conserved", "account", op.Account, "amount", op.Amount, "key", op.IdempotencyKey, "err", err)
	return err
}

// transactions is ListTransactions: N ledger page calls, newest first.
func (b *Bank) transactions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account := q.Get("account")
	if account == "" {
		platform.WriteError(w, http.StatusBadRequest, ReasonBadRequest, `query parameter "account" is required`)
		return
	}
	pages := 1
	if s := q.Get("pages"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPages {
			platform.WriteError(w, http.StatusBadRequest, ReasonBadRequest,
				fmt.Sprintf(`query parameter "pages" must be a whole number from 1 to %d, got %q`, maxPages, s))
			return
		}
		pages = n
	}
	h := History{Account: account, Entries: []Entry{}}
	for p := range pages {
		var pg Page
		path := "/ledger/transactions?account=" + url.QueryEscape(account) + "&page=" + strconv.Itoa(p)
		if err := b.callLedgerGet(r.Context(), path, &pg); err != nil {
			b.fail(w, err)
			return
		}
		h.Pages++
		h.Entries = append(h.Entries, pg.Entries...)
		if !pg.More {
			break
		}
	}
	platform.WriteJSON(w, http.StatusOK, h)
}

func (b *Bank) callLedger(ctx context.Context, path string, op LedgerOp, out any) error {
	release, ok := b.ledgerBH.TryAcquire()
	if !ok {
		return errBulkhead{b.ledgerBH}
	}
	defer release()
	return b.ledger.PostJSON(ctx, path, op, out)
}

func (b *Bank) callLedgerGet(ctx context.Context, path string, out any) error {
	release, ok := b.ledgerBH.TryAcquire()
	if !ok {
		return errBulkhead{b.ledgerBH}
	}
	defer release()
	return b.ledger.GetJSON(ctx, path, out)
}
