package bankservice

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/client"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// fuzzRoutes are the bank's and ledger's request paths the fuzzer mixes
// with arbitrary bodies, queries and headers.
var fuzzRoutes = []struct{ method, path string }{
	{http.MethodPost, "/transact/check"},
	{http.MethodPost, "/transact/cash"},
	{http.MethodGet, "/transactions?"},
	{http.MethodPost, "/ledger/debit"},
	{http.MethodPost, "/ledger/credit"},
	{http.MethodPost, "/ledger/void"},
	{http.MethodGet, "/ledger/transactions?"},
	{http.MethodPost, "/vault/withdraw"},
	{http.MethodPost, "/vault/void"},
}

// FuzzRequests sends malformed requests to the real handlers: they answer
// (never panic, never a 500), and bad input gets a 4xx.
func FuzzRequests(f *testing.F) {
	for i := range fuzzRoutes {
		f.Add(uint8(i), []byte(`{"account":"acct-1","amount":100,"idempotency_key":"k"}`), "account=acct-1&pages=2", "0")
		f.Add(uint8(i), []byte(`{"account":`), "pages=-1", "x")
		f.Add(uint8(i), []byte(`{"amount":1e309,"account":"acct-999999"}`), "page=99999999999999999999", "-5")
		f.Add(uint8(i), []byte(`[]`), "account=%zz", "")
	}
	l, v := newLedger(50, 1_000_000), newVault(1_000_000_000)
	lmux, vmux := http.NewServeMux(), http.NewServeMux()
	(&ledgerAPI{Ledger: l}).Register(lmux)
	(&vaultAPI{Vault: v}).Register(vmux)
	lts, vts := httptest.NewServer(lmux), httptest.NewServer(vmux)
	f.Cleanup(lts.Close)
	f.Cleanup(vts.Close)
	lc, _ := client.New("ledger", []string{strings.TrimPrefix(lts.URL, "http://")}, 2*time.Second)
	vc, _ := client.New("vault", []string{strings.TrimPrefix(vts.URL, "http://")}, 2*time.Second)
	f.Cleanup(lc.Close)
	f.Cleanup(vc.Close)
	bank := http.NewServeMux()
	newBank(defaultBankConfig(), lc, vc, server.NewMetrics(), nil).Register(bank)
	handlers := map[string]http.Handler{"/transact": bank, "/transactions": bank, "/ledger": lmux, "/vault": vmux}

	f.Fuzz(func(t *testing.T, route uint8, body []byte, query, deadline string) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		target := r.path + query
		if !strings.HasSuffix(r.path, "?") {
			target = r.path
		}
		req, err := http.NewRequest(r.method, "http://bank"+target, bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(platform.HeaderDeadline, deadline)
		var h http.Handler
		for prefix, hh := range handlers {
			if strings.HasPrefix(r.path, prefix) {
				h = hh
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s with %q: 500 %s", r.method, target, body, rec.Body)
		}
		if rec.Code == 0 {
			t.Fatalf("%s %s: no answer", r.method, target)
		}
	})
}
