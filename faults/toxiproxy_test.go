package faults

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/chaosrun/chaosrun/scenario"
)

// startEcho serves a line echo on 127.0.0.1 until the test ends.
func startEcho(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// startToxiproxy runs a real Toxiproxy server in-process with one proxy per
// name in front of upstream, and returns its API URL and the proxies'
// listen addresses.
func startToxiproxy(t *testing.T, upstream string, names ...string) (string, map[string]string) {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	addrs := map[string]string{}
	for _, n := range names {
		p := toxiproxy.NewProxy(srv, n, "127.0.0.1:0", upstream)
		if err := srv.Collection.Add(p, true); err != nil {
			t.Fatalf("add proxy %s: %v", n, err)
		}
		addrs[n] = p.Listen
	}
	hs := httptest.NewServer(srv.Routes())
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Collection.Clear()
	})
	return hs.URL, addrs
}

// roundTrip sends a line through addr on a new connection and times the echo.
func roundTrip(addr string) (time.Duration, error) {
	begin := time.Now()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, err
	}
	if line != "ping\n" {
		return 0, errors.New("echo returned " + line)
	}
	return time.Since(begin), nil
}

func TestToxiproxyIntegration(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Toxiproxy server")
	}
	echo := startEcho(t)
	apiURL, addrs := startToxiproxy(t, echo, "a->b", "bank->ledger.0")
	api := NewToxiproxyAPI(apiURL)
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}, "bank->ledger": {"bank->ledger.0"}}, api: api}
	ctx := context.Background()

	if d, err := roundTrip(addrs["a->b"]); err != nil || d > 150*time.Millisecond {
		t.Fatalf("before any fault: round trip %v, %v; want < 150ms", d, err)
	}

	t.Run("latency", func(t *testing.T) {
		f, err := New(scenario.Fault{Name: "slow", Kind: "latency", Edge: "a->b", Attributes: map[string]float64{"latency": 300}})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Apply(ctx, env); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		d, err := roundTrip(addrs["a->b"])
		if err != nil || d < 250*time.Millisecond {
			t.Errorf("with 300ms latency: round trip %v, %v; want ≥ 250ms", d, err)
		}
		if err := f.Revert(ctx, env); err != nil {
			t.Fatalf("Revert: %v", err)
		}
		if d, err := roundTrip(addrs["a->b"]); err != nil || d > 150*time.Millisecond {
			t.Errorf("after revert: round trip %v, %v; want < 150ms", d, err)
		}
	})

	t.Run("proxy_down", func(t *testing.T) {
		f, err := New(scenario.Fault{Name: "down", Kind: "proxy_down", Edge: "a->b"})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Apply(ctx, env); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if d, err := roundTrip(addrs["a->b"]); err == nil {
			t.Errorf("proxy down: round trip succeeded in %v, want a failure", d)
		}
		if err := f.Revert(ctx, env); err != nil {
			t.Fatalf("Revert: %v", err)
		}
		if _, err := roundTrip(addrs["a->b"]); err != nil {
			t.Errorf("after revert: %v", err)
		}
	})

	t.Run("names with -> and . survive the URL", func(t *testing.T) {
		f, err := New(scenario.Fault{Name: "slow.ledger", Kind: "latency", Edge: "bank->ledger", Attributes: map[string]float64{"latency": 300}})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Apply(ctx, env); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if d, err := roundTrip(addrs["bank->ledger.0"]); err != nil || d < 250*time.Millisecond {
			t.Errorf("with latency on bank->ledger.0: round trip %v, %v; want ≥ 250ms", d, err)
		}
		// Adding it twice is refused by the server, with names in the error.
		err = api.AddToxic(ctx, "bank->ledger.0", Toxic{Name: ToxicName("slow.ledger"), Type: "latency", Stream: "downstream", Toxicity: 1})
		if err == nil || !strings.Contains(err.Error(), `proxy "bank->ledger.0"`) || !strings.Contains(err.Error(), "HTTP 409") {
			t.Errorf("duplicate toxic error = %v", err)
		}
		if err := f.Revert(ctx, env); err != nil {
			t.Fatalf("Revert: %v", err)
		}
		err = api.RemoveToxic(ctx, "bank->ledger.0", ToxicName("slow.ledger"))
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("removing a removed toxic: %v, want ErrNotFound", err)
		}
	})

	t.Run("unknown proxy", func(t *testing.T) {
		err := api.SetProxyEnabled(ctx, "x->y", false)
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `disable proxy "x->y"`) {
			t.Errorf("error = %v", err)
		}
	})
}

func TestToxiproxyAPIUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	err = NewToxiproxyAPI(addr).AddToxic(context.Background(), "a->b", Toxic{Name: "t", Type: "latency"})
	if err == nil || !strings.Contains(err.Error(), `add latency toxic "t" to proxy "a->b"`) {
		t.Errorf("error = %v", err)
	}
}
