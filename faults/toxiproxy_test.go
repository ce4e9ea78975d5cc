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

// TestTamperingFound: between a fault's apply and its revert, another
// client of the real Toxiproxy changes the fault's toxic and adds one of
// its own; the revert names both (ErrTampered) and still removes the
// fault's toxic. With a load whose script may add toxics, the added one
// is the script's and only the change counts.
func TestTamperingFound(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Toxiproxy server")
	}
	apiURL, _ := startToxiproxy(t, startEcho(t), "a->b")
	other := NewToxiproxyAPI(apiURL) // another process's client
	ctx := context.Background()
	for _, tt := range []struct {
		native bool
		want   []string
	}{
		{true, []string{`timeout toxic "stall" added to a->b by something outside the run`, "toxic chaosrun-slow on a->b changed to latency downstream toxicity 1 map[jitter:0 latency:5]"}},
		{false, []string{"toxic chaosrun-slow on a->b changed"}},
	} {
		env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b"}}, api: NewToxiproxyAPI(apiURL), native: tt.native}
		f, err := New(scenario.Fault{Name: "slow", Kind: "latency", Edge: "a->b", Attributes: map[string]float64{"latency": 300}})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Apply(ctx, env); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(other.RemoveToxic(ctx, "a->b", "chaosrun-slow"),
			other.AddToxic(ctx, "a->b", Toxic{Name: "chaosrun-slow", Type: "latency", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"latency": 5}}),
			other.AddToxic(ctx, "a->b", Toxic{Name: "stall", Type: "timeout", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"timeout": 0}})); err != nil {
			t.Fatal(err)
		}
		err = f.Revert(ctx, env)
		if !errors.Is(err, ErrTampered) {
			t.Fatalf("native %v: Revert = %v, want ErrTampered", tt.native, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("native %v: %v lacks %q", tt.native, err, w)
			}
		}
		if !tt.native && strings.Contains(err.Error(), "stall") {
			t.Errorf("a script's toxic counted as tampering: %v", err)
		}
		left, _ := other.(ToxicLister).ListToxics(ctx, "a->b")
		if len(left) != 1 || left[0].Name != "stall" {
			t.Errorf("left on the proxy: %+v, want only the other client's", left)
		}
		_ = other.RemoveToxic(ctx, "a->b", "stall")
	}
}

// TestSameToxic: a toxic read back is the run's when what the run set is
// there unchanged; an HTTP stage's extra read-back (counters, seed) is not
// a change, an attribute a TCP toxic was not given is.
func TestSameToxic(t *testing.T) {
	httpSet := Toxic{Name: "chaosrun-w", Type: "http_latency", Stream: "upstream", Toxicity: 1,
		Attributes: map[string]any{"latency": int64(2000), "method": "POST", "path": "/vault/withdraw"}}
	tcpSet := Toxic{Name: "chaosrun-s", Type: "latency", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"latency": int64(300)}}
	tests := []struct {
		name     string
		got, set Toxic
		want     bool
	}{
		{"http stage's read-back", Toxic{Name: "chaosrun-w", Type: "http_latency", Stream: "upstream", Toxicity: 1,
			Attributes: map[string]any{"latency": 2000.0, "method": "POST", "p99": 5000.0, "path": "/vault/withdraw", "seed": 2.5362379318193925e+18}}, httpSet, true},
		{"http latency changed", Toxic{Name: "chaosrun-w", Type: "http_latency", Stream: "upstream", Toxicity: 1,
			Attributes: map[string]any{"latency": 1.0, "method": "POST", "path": "/vault/withdraw"}}, httpSet, false},
		{"grpc stage's read-back", Toxic{Name: "chaosrun-g", Type: "grpc_error", Stream: "upstream", Toxicity: 1,
			Attributes: map[string]any{"code": 14.0, "path": "/helloworld.Greeter/*", "pushback_ms": 500.0, "seed": 2.9244522664796063e+18}},
			Toxic{Name: "chaosrun-g", Type: "grpc_error", Stream: "upstream", Toxicity: 1, Attributes: map[string]any{"code": int64(14), "path": "/helloworld.Greeter/*", "pushback_ms": int64(500)}}, true},
		{"grpc code changed", Toxic{Name: "chaosrun-g", Type: "grpc_error", Stream: "upstream", Toxicity: 1,
			Attributes: map[string]any{"code": 4.0, "path": "/helloworld.Greeter/*"}},
			Toxic{Name: "chaosrun-g", Type: "grpc_error", Stream: "upstream", Toxicity: 1, Attributes: map[string]any{"code": int64(14), "path": "/helloworld.Greeter/*"}}, false},
		{"tcp defaults", Toxic{Name: "chaosrun-s", Type: "latency", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"latency": 300.0, "jitter": 0.0}}, tcpSet, true},
		{"tcp jitter added", Toxic{Name: "chaosrun-s", Type: "latency", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"latency": 300.0, "jitter": 500.0}}, tcpSet, false},
		{"toxicity lowered", Toxic{Name: "chaosrun-s", Type: "latency", Stream: "downstream", Toxicity: 0.1, Attributes: map[string]any{"latency": 300.0}}, tcpSet, false},
	}
	for _, tt := range tests {
		if got := sameToxic(tt.got, tt.set); got != tt.want {
			t.Errorf("%s: same %v, want %v", tt.name, got, tt.want)
		}
	}
}
