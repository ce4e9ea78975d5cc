package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

func hostPort(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

func TestClientRoundRobinAndJSON(t *testing.T) {
	mk := func(name string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var in map[string]int
			_ = platform.DecodeJSON(w, r, &in)
			platform.WriteJSON(w, 200, map[string]any{"replica": name, "n": in["n"] + 1})
		}))
	}
	a, b := mk("a"), mk("b")
	defer a.Close()
	defer b.Close()
	cfg := DefaultConfig()
	cfg.Balancer = balanceRoundRobin
	c, err := New("dep", []string{hostPort(a), hostPort(b)}, time.Second, WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := map[string]int{}
	for i := range 6 {
		var out struct {
			Replica string `json:"replica"`
			N       int    `json:"n"`
		}
		if err := c.PostJSON(context.Background(), "/x", map[string]int{"n": i}, &out); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if out.N != i+1 {
			t.Errorf("call %d: n = %d, want %d", i, out.N, i+1)
		}
		seen[out.Replica]++
	}
	if seen["a"] != 3 || seen["b"] != 3 {
		t.Errorf("replica use = %v, want 3 each (round-robin)", seen)
	}
}

func TestClientErrorKinds(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	conflict := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		platform.WriteError(w, http.StatusConflict, "insufficient-funds", "not enough money")
	}))
	defer conflict.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := ln.Addr().String()
	ln.Close()

	tests := []struct {
		name   string
		addr   string
		want   ErrKind
		status int
		reason string
	}{
		{"timeout", hostPort(slow), KindTimeout, 0, ""},
		{"status with body", hostPort(conflict), KindStatus, 409, "insufficient-funds"},
		{"refused", closedAddr, KindUnavailable, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := New("dep", []string{tt.addr}, 100*time.Millisecond)
			defer c.Close()
			start := time.Now()
			err := c.GetJSON(context.Background(), "/x", nil)
			if got := KindOf(err); got != tt.want {
				t.Fatalf("kind = %v (err %v), want %v", got, err, tt.want)
			}
			if time.Since(start) > 1500*time.Millisecond {
				t.Errorf("call took %s; the 100ms timeout was not applied", time.Since(start))
			}
			var de *DepError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "dep") {
				t.Fatalf("err %v: want *DepError naming the dependency", err)
			}
			if de.Status != tt.status || de.Body.Reason != tt.reason {
				t.Errorf("status, reason = %d, %q; want %d, %q", de.Status, de.Body.Reason, tt.status, tt.reason)
			}
			if IsTimeout(err) != (tt.want == KindTimeout) {
				t.Errorf("IsTimeout = %v for kind %v", IsTimeout(err), tt.want)
			}
		})
	}
}

func TestClientCallerCanceledOrDeadline(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	c, _ := New("dep", []string{hostPort(slow)}, 5*time.Second)
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if got := KindOf(c.GetJSON(ctx, "/x", nil)); got != KindDeadline {
		t.Errorf("deadline passed during the call: kind = %v, want deadline", got)
	}
	ctx, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel2)
	if got := KindOf(c.GetJSON(ctx, "/x", nil)); got != KindCanceled {
		t.Errorf("caller canceled: kind = %v, want canceled", got)
	}
}

func TestNewClientErrors(t *testing.T) {
	if _, err := New("ledger", nil, time.Second); err == nil || !strings.Contains(err.Error(), "ledger") {
		t.Errorf("no addresses: err = %v, want error naming ledger", err)
	}
}
