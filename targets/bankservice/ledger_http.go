package bankservice

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// router is where a service adds its routes: *server.Server or *http.ServeMux.
type router interface {
	Handle(pattern string, h http.Handler)
}

// ledgerAPI serves a Ledger over HTTP, with simulated service time per call.
type ledgerAPI struct {
	Ledger      *ledgerBook
	ServiceTime time.Duration
	// PageTime is the simulated work of a page read (a scan); 0: ServiceTime.
	PageTime time.Duration
}

// Register adds the ledger routes:
// POST /ledger/debit, POST /ledger/credit, POST /ledger/void,
// GET /ledger/transactions, GET /ledger/total.
func (a *ledgerAPI) Register(r router) {
	r.Handle("POST /ledger/debit", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.op(w, r, a.Ledger.Debit) }))
	r.Handle("POST /ledger/credit", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.op(w, r, a.Ledger.Credit) }))
	r.Handle("POST /ledger/void", http.HandlerFunc(a.void))
	r.Handle("GET /ledger/transactions", http.HandlerFunc(a.transactions))
	r.Handle("GET /ledger/total", http.HandlerFunc(a.total))
}

func (a *ledgerAPI) op(w http.ResponseWriter, r *http.Request, apply func(string, int64, string) outcome) {
	var in ledgerOp
	if err := platform.DecodeJSON(w, r, &in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest,
			fmt.Sprintf("%s %s: %v; fields: account, amount, idempotency_key", r.Method, r.URL.Path, err))
		return
	}
	if err := validate(in.Account, true, in.Amount); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest, err.Error())
		return
	}
	work(r.Context(), a.ServiceTime)
	out := apply(in.Account, in.Amount, in.IdempotencyKey)
	if out.status != http.StatusOK {
		platform.WriteError(w, out.status, out.reason, out.msg)
		return
	}
	platform.WriteJSON(w, http.StatusOK, balanceAnswer{Account: in.Account, Balance: out.balance, Replayed: out.replayed})
}

func (a *ledgerAPI) transactions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account := q.Get("account")
	if account == "" {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest, `query parameter "account" is required`)
		return
	}
	page := 0
	if s := q.Get("page"); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil || p < 0 {
			platform.WriteError(w, http.StatusBadRequest, reasonBadRequest,
				fmt.Sprintf(`query parameter "page" must be a whole number >= 0 (0 = newest), got %q`, s))
			return
		}
		page = p
	}
	pt := a.PageTime
	if pt == 0 {
		pt = a.ServiceTime
	}
	work(r.Context(), pt)
	entries, more, ok := a.Ledger.Page(account, page)
	if !ok {
		platform.WriteError(w, http.StatusNotFound, reasonUnknownAccount, fmt.Sprintf("account %q does not exist", account))
		return
	}
	platform.WriteJSON(w, http.StatusOK, ledgerPage{Account: account, Page: page, Entries: entries, More: more})
}

func (a *ledgerAPI) total(w http.ResponseWriter, _ *http.Request) {
	platform.WriteJSON(w, http.StatusOK, a.Ledger.Total())
}

// void is POST /ledger/void: cancel a debit (see Ledger.Void); it answers
// VoidAnswer with Cash as the account's balance.
func (a *ledgerAPI) void(w http.ResponseWriter, r *http.Request) {
	var in ledgerOp
	if err := platform.DecodeJSON(w, r, &in); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest,
			fmt.Sprintf("POST /ledger/void: %v; fields: account, amount, idempotency_key", err))
		return
	}
	if err := validate(in.Account, true, in.Amount); err != nil {
		platform.WriteError(w, http.StatusBadRequest, reasonBadRequest, err.Error())
		return
	}
	work(r.Context(), a.ServiceTime)
	returned, out := a.Ledger.Void(in.Account, in.Amount, in.IdempotencyKey)
	if out.status != http.StatusOK {
		platform.WriteError(w, out.status, out.reason, out.msg)
		return
	}
	platform.WriteJSON(w, http.StatusOK, voidAnswer{Returned: returned, Cash: out.balance})
}
