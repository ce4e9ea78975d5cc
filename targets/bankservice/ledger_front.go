package bankservice

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// ledgerFront is a stateless ledger replica: it serves the ledger routes by
// forwarding them to one primary ledger. Replicas of a ledger service thus
// share one set of accounts, so money is conserved whichever replica a
// caller's load balancer picks, and a retry on another replica replays the
// same idempotency key against the same state. (Partitioning accounts by
// replica would make every replica a single point of failure for its
// accounts, and independent copies would each pay.)
type ledgerFront struct {
	proxy       *httputil.ReverseProxy
	serviceTime time.Duration
}

// newLedgerFront returns a front of the primary ledger at addr (host:port);
// each forwarded call waits at most timeout for the primary's answer and
// first simulates serviceTime of work at the front.
func newLedgerFront(addr string, timeout, serviceTime time.Duration) *ledgerFront {
	target := &url.URL{Scheme: "http", Host: addr}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = addr
		},
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          1024,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: timeout,
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			platform.WriteError(w, http.StatusBadGateway, platform.ReasonDependencyError,
				fmt.Sprintf("ledger front: %s %s at primary %s: %v", r.Method, r.URL.Path, addr, err))
		},
	}
	return &ledgerFront{proxy: p, serviceTime: serviceTime}
}

// Register adds the ledger routes, all forwarded to the primary.
func (f *ledgerFront) Register(r router) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		work(r.Context(), f.serviceTime)
		f.proxy.ServeHTTP(w, r)
	})
	for _, route := range []string{"POST /ledger/debit", "POST /ledger/credit", "POST /ledger/void", "GET /ledger/transactions", "GET /ledger/total"} {
		r.Handle(route, h)
	}
}
