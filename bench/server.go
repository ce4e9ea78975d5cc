package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// serveHTTP is the bench's tiny target (`bench -serve`): a bare net/http
// server on 127.0.0.1 with
//
//	GET  /ok                 "ok"
//	GET  /spread             "ok" after an exponential delay (mean 2 ms, at most 50 ms)
//	POST /admin/stall?ms=N   every request arriving in the next N ms waits until they end
//
// It prints "listening on http://ADDR" and serves until ctx ends.
func serveHTTP(ctx context.Context, stdout io.Writer) error {
	var stallUntil atomic.Int64 // Unix ns
	wait := func() {
		if d := time.Until(time.Unix(0, stallUntil.Load())); d > 0 {
			time.Sleep(d)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {
		wait()
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("GET /spread", func(w http.ResponseWriter, r *http.Request) {
		wait()
		d := min(time.Duration(rand.ExpFloat64()*float64(2*time.Millisecond)), 50*time.Millisecond)
		time.Sleep(d)
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("POST /admin/stall", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 1 || ms > 10000 {
			http.Error(w, "ms: a whole number of milliseconds, 1..10000", http.StatusBadRequest)
			return
		}
		stallUntil.Store(time.Now().Add(time.Duration(ms) * time.Millisecond).UnixNano())
		_, _ = io.WriteString(w, "stalling")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("bench server: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "%s%s\n", readyPrefix, ln.Addr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}
