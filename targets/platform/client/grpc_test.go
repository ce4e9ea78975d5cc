package client

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// grpcServer runs a real platform server on loopback, serving routes that
// answer as the platform does, and returns its address and how many
// requests reached the shedding route.
func grpcServer(t *testing.T) (addr string, shed *atomic.Int64) {
	t.Helper()
	srv := server.New("ledger", server.Config{Listen: "127.0.0.1:0", Workers: 8}, nil, nil)
	srv.HandleFunc("POST /ledger/echo-value", func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if err := platform.DecodeJSON(w, r, &v); err != nil {
			platform.WriteError(w, http.StatusBadRequest, "bad-request", err.Error())
			return
		}
		v["deadline_ms"] = r.Header.Get(platform.HeaderDeadline)
		v["caller"] = r.Header.Get(platform.HeaderCaller)
		platform.WriteJSON(w, http.StatusOK, v)
	})
	srv.HandleFunc("GET /ledger/items", func(w http.ResponseWriter, _ *http.Request) {
		platform.WriteJSON(w, http.StatusOK, []int{1, 2, 3})
	})
	shed = &atomic.Int64{}
	srv.HandleFunc("POST /ledger/shed", func(w http.ResponseWriter, _ *http.Request) {
		shed.Add(1)
		w.Header().Set(platform.HeaderBackpressure, "1")
		w.Header().Set(platform.HeaderRetryAfter, "2")
		platform.WriteError(w, http.StatusServiceUnavailable, platform.ReasonBackpressure, "overloaded; back off")
	})
	srv.HandleFunc("POST /ledger/conflict", func(w http.ResponseWriter, _ *http.Request) {
		platform.WriteError(w, http.StatusUnprocessableEntity, "insufficient-funds", "account 7 has 10 cents")
	})
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, lineWriter(ready)) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case line := <-ready:
		u, ok := server.ParseReadyLine(line)
		if !ok {
			t.Fatalf("ready line %q", line)
		}
		return strings.TrimPrefix(u, "http://"), shed
	case err := <-done:
		t.Fatalf("server: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("server not ready in 5 s")
	}
	return "", nil
}

// lineWriter sends the first line written to it.
type lineWriter chan string

func (l lineWriter) Write(p []byte) (int, error) {
	select {
	case l <- string(p):
	default:
	}
	return len(p), nil
}

// TestGRPCTransport: a platform client with --rpc grpc calls a platform
// server's routes as gRPC methods on its HTTP port, and each answer is
// what the same answer over HTTP gives: the body, the deadline budget and
// caller in headers, back pressure (RESOURCE_EXHAUSTED with pushback) not
// retried by smart clients and retried by naive ones, a 422 with its
// reason, an unknown method.
func TestGRPCTransport(t *testing.T) {
	addr, shed := grpcServer(t)
	newClient := func(mode string) *Client {
		cfg := DefaultConfig()
		cfg.RPC, cfg.RetryMode, cfg.RetryBackoff, cfg.Breaker = rpcGRPC, mode, time.Millisecond, false
		c, err := New("ledger", []string{addr}, 2*time.Second, WithConfig(cfg), WithCaller("bank"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	smart := newClient(retrySmart)
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	var echo map[string]any
	if err := smart.PostJSON(ctx, "/ledger/echo-value", map[string]any{"account": 7, "cents": 1_000_000}, &echo); err != nil {
		t.Fatalf("echo: %v", err)
	}
	budget, _ := strconv.Atoi(echo["deadline_ms"].(string))
	if echo["cents"] != float64(1_000_000) || echo["caller"] != "bank" || budget <= 0 || budget > 800 {
		t.Errorf("echo = %v; want the body back, caller bank and a deadline budget in (0, 800] ms", echo)
	}
	var items []int
	if err := smart.GetJSON(context.Background(), "/ledger/items", &items); err != nil || len(items) != 3 {
		t.Errorf("items = %v, %v; want [1 2 3]", items, err)
	}

	err := smart.PostJSON(context.Background(), "/ledger/shed", map[string]int{}, nil)
	var de *DepError
	if !errors.As(err, &de) || de.Status != 503 || !de.Backpressure || de.RetryAfter != 2*time.Second || de.Body.Reason != platform.ReasonBackpressure || de.Attempts != 1 {
		t.Errorf("smart client on back pressure: %#v; want status 503, back pressure, 2 s, reason %q, one attempt", de, platform.ReasonBackpressure)
	}
	shed.Store(0)
	_ = newClient(retryNaive).PostJSON(context.Background(), "/ledger/shed", map[string]int{}, nil)
	if n := shed.Load(); n != 3 {
		t.Errorf("naive client sent the shed call %d times; want 3 (a try and 2 retries)", n)
	}

	err = smart.PostJSON(context.Background(), "/ledger/conflict", map[string]int{}, nil)
	if !errors.As(err, &de) || de.Kind != KindStatus || de.Status != 422 || de.Body.Reason != "insufficient-funds" || de.Attempts != 1 {
		t.Errorf("conflict: %v; want status 422, reason insufficient-funds, one attempt", err)
	}
	err = smart.PostJSON(context.Background(), "/ledger/nope", map[string]int{}, nil)
	if !errors.As(err, &de) || de.Status != http.StatusNotImplemented || !strings.Contains(de.Body.Error, "/platform.Ledger/Echo") {
		t.Errorf("unknown method: %v; want 501 naming the methods served", err)
	}
}

// TestGRPCUnavailable: a replica nobody listens on is no answer
// (KindUnavailable), retried, as over HTTP.
func TestGRPCUnavailable(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RPC, cfg.Breaker = rpcGRPC, false
	c, err := New("vault", []string{"127.0.0.1:1"}, time.Second, WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.GetJSON(context.Background(), "/vault/total", nil)
	var de *DepError
	if !errors.As(err, &de) || de.Kind != KindUnavailable || de.Attempts != 3 {
		t.Errorf("call to a closed port: %v; want unavailable after 3 attempts", err)
	}
}
