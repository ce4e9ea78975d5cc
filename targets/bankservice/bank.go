package bankservice

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/client"
	"github.com/chaosrun/chaosrun/targets/platform/server"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
)

// maxPages bounds GET /transactions?pages=N.
const maxPages = 100

// bankConfig sets the bank's bulkheads and cash drawer.
type bankConfig struct {
	Bulkheads   bool // off: the per-dependency bulkheads admit everything
	LedgerLimit int  // concurrent ledger calls
	VaultLimit  int  // concurrent vault calls
	// LedgerMode and VaultMode are the dependency bulkheads' modes (hard,
	// shadow, off) while Bulkheads is on.
	LedgerMode, VaultMode server.BulkheadMode

	// ListMode is the ListTransactions API bulkhead's mode (hard, shadow,
	// off); ListLimit its limit of concurrent ListTransactions requests.
	ListMode  server.BulkheadMode
	ListLimit int

	// Drawer switches the cash drawer; DrawerCapacity is the most cash it
	// holds, DrawerLow the level below which it is refilled from the vault.
	Drawer                    bool
	DrawerCapacity, DrawerLow int64

	// LedgerReplicas are the ledger's replica addresses (host:port) that the
	// consistency check reads one by one; empty: one read through the client.
	LedgerReplicas []string
	// VaultAddrs is the vault's address, read the same way.
	VaultAddrs []string
}

// defaultBankConfig returns the defaults documented on BankMain's flags.
func defaultBankConfig() bankConfig {
	return bankConfig{Bulkheads: true, LedgerLimit: 32, VaultLimit: 8, LedgerMode: server.BulkheadHard, VaultMode: server.BulkheadHard,
		ListMode: server.BulkheadHard, ListLimit: 8,
		Drawer: true, DrawerCapacity: 200_000, DrawerLow: 100_000}
}

// depMode is a dependency bulkhead's mode: mode, or off with --bulkheads off.
func (c bankConfig) depMode(mode server.BulkheadMode) server.BulkheadMode {
	if !c.Bulkheads {
		return server.BulkheadOff
	}
	return mode
}

// bank serves TransactCheck, TransactCash and ListTransactions over a ledger
// and a vault, with a cash drawer in front of the vault.
type bank struct {
	cfg               bankConfig
	ledger, vault     *client.Client
	ledgerBH, vaultBH *server.Bulkhead
	listBH            *server.Bulkhead
	drawer            *drawer
	log               *slog.Logger
	instance          string // names this bank's refill keys

	inflight atomic.Int64 // cash transactions in flight
	sf       singleflight.Group

	refillMu sync.Mutex // one refill at a time
	mu       sync.Mutex
	pending  map[string]settlement // refunds not yet settled, by cash key
	refill   *refill               // a refill whose outcome is not known yet
	refillNo int64

	refunds  *prometheus.CounterVec // outcome
	payouts  *prometheus.CounterVec // source
	refillsC *prometheus.CounterVec // outcome
	drawerG  prometheus.GaugeFunc
}

// newBank returns a bank calling ledger and vault. m carries the metrics (bulkheads,
// refunds, drawer); log may be nil. Call Run to keep the drawer filled.
func newBank(cfg bankConfig, ledger, vault *client.Client, m *server.Metrics, log *slog.Logger) *bank {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.ListLimit < 1 {
		cfg.ListLimit = 1
	}
	b := &bank{
		cfg: cfg, ledger: ledger, vault: vault, log: log,
		ledgerBH: server.NewBulkheadMode("ledger", cfg.LedgerLimit, cfg.depMode(cfg.LedgerMode), 0, m),
		vaultBH:  server.NewBulkheadMode("vault", cfg.VaultLimit, cfg.depMode(cfg.VaultMode), 0, m),
		listBH:   server.NewBulkheadMode("list", cfg.ListLimit, cfg.ListMode, 0, m),
		drawer:   newDrawer(cfg.Drawer, cfg.DrawerCapacity, cfg.DrawerLow),
		instance: rand.Text()[:10],
		pending:  map[string]settlement{},
		refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bank_refunds_total", Help: "Refunds of cash the bank did not pay, by outcome (ok, pending, failed).",
		}, []string{"outcome"}),
		payouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bank_cash_payouts_total", Help: "Cash transactions paid, by source (drawer, vault).",
		}, []string{"source"}),
		refillsC: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bank_drawer_refills_total", Help: "Drawer refills from the vault, by outcome (ok, refused, unknown).",
		}, []string{"outcome"}),
	}
	b.drawerG = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "bank_drawer_cash", Help: "Cash in the drawer, in cents.",
	}, func() float64 { return float64(b.drawer.State().Cash) })
	m.Registry().MustRegister(b.refunds, b.payouts, b.refillsC, b.drawerG)
	return b
}

// Drawer returns the bank's cash drawer.
func (b *bank) Drawer() *drawer { return b.drawer }

// routeOptioner is a Router that takes per-API options (*server.Server).
type routeOptioner interface {
	HandleWith(pattern string, h http.Handler, opts server.RouteOptions)
}

// Register adds the bank routes: POST /transact/check, POST /transact/cash,
// GET /transactions (behind the list bulkhead), GET /consistency.
func (b *bank) Register(r router) {
	r.Handle("POST /transact/check", http.HandlerFunc(b.check))
	r.Handle("POST /transact/cash", http.HandlerFunc(b.cash))
	if ro, ok := r.(routeOptioner); ok {
		ro.HandleWith("GET /transactions", http.HandlerFunc(b.transactions), server.RouteOptions{Bulkhead: b.listBH})
	} else {
		r.Handle("GET /transactions", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			release, ok := b.listBH.TryAcquire()
			if !ok {
				b.fail(w, errBulkhead{b.listBH})
				return
			}
			defer release()
			b.transactions(w, r)
		}))
	}
	r.Handle("GET /consistency", http.HandlerFunc(b.consistency))
}

// Run keeps the drawer filled and settles pending refunds until ctx ends.
func (b *bank) Run(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		b.refillOnce(ctx, true)
		b.settleAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (b *bank) decode(w http.ResponseWriter, r *http.Request) (transaction, bool) {
	var in transaction
	if err := platform.DecodeJSON(w, r, &in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest,
			fmt.Sprintf("%s %s: %v; fields: account, amount, idempotency_key", r.Method, r.URL.Path, err))
		return in, false
	}
	if err := validate(in.Account, true, in.Amount); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest, err.Error())
		return in, false
	}
	if in.IdempotencyKey == "" {
		in.IdempotencyKey = rand.Text()
	}
	return in, true
}

// check is TransactCheck: one ledger debit.
func (b *bank) check(w http.ResponseWriter, r *http.Request) {
	in, ok := b.decode(w, r)
	if !ok {
		return
	}
	var ans balanceAnswer
	if err := b.callLedger(r.Context(), "/ledger/debit", ledgerOp{in.Account, in.Amount, "check:" + in.IdempotencyKey}, &ans); err != nil {
		b.fail(w, err)
		return
	}
	platform.WriteJSON(w, http.StatusOK, transactionAnswer{Account: in.Account, Amount: in.Amount, Balance: ans.Balance})
}

// transactions is ListTransactions: N ledger page calls, newest first.
func (b *bank) transactions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account := q.Get("account")
	if account == "" {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest, `query parameter "account" is required`)
		return
	}
	pages := 1
	if s := q.Get("pages"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPages {
			platform.WriteError(w, http.StatusBadRequest, reasonBadRequest,
				fmt.Sprintf(`query parameter "pages" must be a whole number from 1 to %d, got %q`, maxPages, s))
			return
		}
		pages = n
	}
	h := historyAnswer{Account: account, Entries: []entry{}}
	for p := range pages {
		var pg ledgerPage
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

func (b *bank) callLedger(ctx context.Context, path string, op ledgerOp, out any) error {
	release, ok := b.ledgerBH.TryAcquire()
	if !ok {
		return errBulkhead{b.ledgerBH}
	}
	defer release()
	return b.ledger.PostJSON(ctx, path, op, out)
}

func (b *bank) callLedgerGet(ctx context.Context, path string, out any) error {
	release, ok := b.ledgerBH.TryAcquire()
	if !ok {
		return errBulkhead{b.ledgerBH}
	}
	defer release()
	return b.ledger.GetJSON(ctx, path, out)
}
