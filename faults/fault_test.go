package faults

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

func TestKinds(t *testing.T) {
	want := []string{"bandwidth", "grpc_error", "grpc_latency", "grpc_reset", "host_disconnect", "host_kill", "host_pause", "host_stop", "http_error", "http_latency", "latency", "limit_data", "proxy_down", "reset_peer", "slow_close", "timeout"}
	if got := Kinds(); !slices.Equal(got, want) {
		t.Errorf("Kinds() = %v, want %v", got, want)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		kind  string
		attrs map[string]float64
		want  string // "" = no error
	}{
		{"latency ok", "latency", map[string]float64{"latency": 2000, "jitter": 100}, ""},
		{"latency no jitter", "latency", map[string]float64{"latency": 0}, ""},
		{"proxy_down ok", "proxy_down", nil, ""},
		{"timeout blackhole", "timeout", map[string]float64{"timeout": 0}, ""},
		{"reset_peer default", "reset_peer", nil, ""},
		{"unknown kind", "latnecy", nil,
			`unknown fault kind "latnecy" (allowed: bandwidth, grpc_error, grpc_latency, grpc_reset, host_disconnect, host_kill, host_pause, host_stop, http_error, http_latency, latency, limit_data, proxy_down, reset_peer, slow_close, timeout)`},
		{"unknown attr", "latency", map[string]float64{"latency": 1, "delay": 5},
			`latency: attribute "delay": unknown attribute (allowed: latency (ms, 0..3600000, required); jitter (ms, 0..3600000))`},
		{"missing attr", "bandwidth", map[string]float64{},
			`bandwidth: attribute "rate": missing required attribute (allowed: rate (KB/s, 0..10000000, required))`},
		{"negative", "slow_close", map[string]float64{"delay": -1},
			`slow_close: attribute "delay": -1 ms is out of range (allowed: 0..3600000 ms)`},
		{"too big", "latency", map[string]float64{"latency": 3600001},
			`latency: attribute "latency": 3600001 ms is out of range (allowed: 0..3600000 ms)`},
		{"fraction", "limit_data", map[string]float64{"bytes": 1.5},
			`limit_data: attribute "bytes": 1.5 is not a whole number of bytes (allowed: whole numbers)`},
		{"attr on proxy_down", "proxy_down", map[string]float64{"latency": 1},
			`proxy_down: attribute "latency": unknown attribute (allowed: no attributes)`},
		{"two problems", "latency", map[string]float64{"jitter": -2},
			`latency: attribute "jitter": -2 ms is out of range (allowed: 0..3600000 ms)` + "\n" +
				`latency: attribute "latency": missing required attribute (allowed: latency (ms, 0..3600000, required); jitter (ms, 0..3600000))`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.kind, tc.attrs)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Check(%q, %v)\n got: %s\nwant: %s", tc.kind, tc.attrs, got, tc.want)
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }

func TestNewDescribesAndValidates(t *testing.T) {
	tests := []struct {
		name    string
		spec    scenario.Fault
		want    string // Describe(), or the error's substring when wantErr
		wantErr bool
	}{
		{"latency", scenario.Fault{Name: "f", Kind: "latency", Edge: "a->b", Attributes: map[string]float64{"latency": 2000, "jitter": 100}},
			"latency 2000ms ±100ms downstream on a->b", false},
		{"upstream with toxicity", scenario.Fault{Name: "f", Kind: "bandwidth", Edge: "a->b", Direction: "upstream", Toxicity: ptr(0.5), Attributes: map[string]float64{"rate": 10}},
			"bandwidth 10KB/s upstream on a->b, toxicity 0.5", false},
		{"blackhole", scenario.Fault{Name: "f", Kind: "timeout", Edge: "a->b", Attributes: map[string]float64{"timeout": 0}},
			"timeout blackhole downstream on a->b", false},
		{"proxy_down", scenario.Fault{Name: "f", Kind: "proxy_down", Edge: "a->b"}, "proxy_down on a->b", false},
		{"bad direction", scenario.Fault{Name: "f", Kind: "proxy_down", Edge: "a->b", Direction: "sideways"},
			`direction "sideways" is not known (allowed: downstream, upstream)`, true},
		{"bad toxicity", scenario.Fault{Name: "f", Kind: "proxy_down", Edge: "a->b", Toxicity: ptr(1.5)},
			"toxicity 1.5 is out of range (allowed: 0..1)", true},
		{"no edge", scenario.Fault{Name: "f", Kind: "proxy_down"}, "empty edge", true},
		{"no name", scenario.Fault{Kind: "proxy_down", Edge: "a->b"}, "empty name", true},
		{"bad attrs", scenario.Fault{Name: "f", Kind: "latency", Edge: "a->b"}, "missing required attribute", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := New(tc.spec)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("New() error = %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			if got := f.Describe(); got != tc.want {
				t.Errorf("Describe() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestToxicFaultApplyRollsBackAndRevertSaysGone(t *testing.T) {
	api := newFakeAPI()
	env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b.0", "a->b.1", "a->b.2"}}, api: api}
	f, err := New(scenario.Fault{Name: "slow", Kind: "latency", Edge: "a->b", Attributes: map[string]float64{"latency": 300}})
	if err != nil {
		t.Fatal(err)
	}
	api.failOn["add a->b.2"] = true
	if err := f.Apply(context.Background(), env); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("Apply error = %v, want the injected failure", err)
	}
	if n := api.Remaining(); n != 0 {
		t.Errorf("after a failed apply %d toxics remain, want 0 (calls: %v)", n, api.Calls())
	}
	delete(api.failOn, "add a->b.2")
	if err := f.Apply(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if n := api.Remaining(); n != 3 {
		t.Errorf("after apply %d toxics, want 3", n)
	}
	if err := f.Revert(context.Background(), env); err != nil {
		t.Fatalf("Revert: %v", err)
	}
	// A second revert finds nothing: removed all the same, but it says the
	// toxic was gone (something outside the run removed it), naming it.
	if err := f.Revert(context.Background(), env); !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "chaosrun-slow on a->b.0, a->b.1, a->b.2") {
		t.Fatalf("second Revert: %v, want ErrGone naming the toxic and proxies", err)
	}
	if n := api.Remaining(); n != 0 {
		t.Errorf("after revert %d toxics remain", n)
	}
	want := "add a->b.0 chaosrun-slow latency downstream 1 map[latency:300]"
	if got := api.Calls()[0]; got != want {
		t.Errorf("first call = %q, want %q", got, want)
	}
}

// TestStageOf: the HTTP and gRPC kinds declare the HTTP stage, every
// other kind the connection's, and an unknown kind none.
func TestStageOf(t *testing.T) {
	for _, k := range Kinds() {
		want := scenario.StageTCP
		if k == KindHTTPError || k == KindHTTPLatency || strings.HasPrefix(k, "grpc_") {
			want = scenario.StageHTTP
		}
		if got := StageOf(k); got != want {
			t.Errorf("StageOf(%q) = %q, want %q", k, got, want)
		}
	}
	if got := StageOf("nosuch"); got != "" {
		t.Errorf("StageOf of an unknown kind = %q", got)
	}
}
