package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed/httpstage"
)

func TestHTTPFaultNew(t *testing.T) {
	tox := func(v float64) *float64 { return &v }
	tests := []struct {
		name      string
		spec      scenario.Fault
		wantDesc  string
		wantAttrs string
		wantErr   string
	}{
		{name: "error default", spec: scenario.Fault{Name: "e", Kind: "http_error", Edge: "a->b"},
			wantDesc: "http_error 503 on a->b", wantAttrs: "map[status:503]"},
		{name: "429 retry-after on one API", spec: scenario.Fault{Name: "e", Kind: "http_error", Edge: "a->b", Toxicity: tox(0.2),
			Attributes: map[string]float64{"status": 429, "retry_after": 2},
			Match:      &scenario.Match{Method: "post", Path: "/transact/cash", Header: map[string]string{"X-Caller": "rogue*"}}},
			wantDesc:  "http_error 429 Retry-After 2s on a->b for POST /transact/cash X-Caller: rogue*, 0.2 of them",
			wantAttrs: "map[header:map[X-Caller:rogue*] method:post path:/transact/cash retry_after:2 status:429]"},
		{name: "latency uniform", spec: scenario.Fault{Name: "l", Kind: "http_latency", Edge: "a->b", Attributes: map[string]float64{"latency": 200, "jitter": 50}},
			wantDesc: "http_latency 200ms ±50ms uniform per request on a->b", wantAttrs: "map[jitter:50 latency:200]"},
		{name: "latency lognormal on a key range", spec: scenario.Fault{Name: "l", Kind: "http_latency", Edge: "a->b",
			Attributes: map[string]float64{"latency": 20, "p99": 400}, Match: &scenario.Match{PathRegex: "^/kv/user1"}},
			wantDesc: "http_latency lognormal median 20ms p99 400ms per request on a->b for ~^/kv/user1", wantAttrs: "map[latency:20 p99:400 path_regex:^/kv/user1]"},
		{name: "both shapes", spec: scenario.Fault{Name: "l", Kind: "http_latency", Edge: "a->b", Attributes: map[string]float64{"latency": 20, "p99": 400, "jitter": 1}},
			wantErr: "exclude each other"},
		{name: "p99 under median", spec: scenario.Fault{Name: "l", Kind: "http_latency", Edge: "a->b", Attributes: map[string]float64{"latency": 20, "p99": 10}},
			wantErr: `"p99" must exceed`},
		{name: "status range", spec: scenario.Fault{Name: "e", Kind: "http_error", Edge: "a->b", Attributes: map[string]float64{"status": 100}},
			wantErr: `attribute "status": 100 HTTP status is out of range (allowed: 200..599 HTTP status)`},
		{name: "latency required", spec: scenario.Fault{Name: "l", Kind: "http_latency", Edge: "a->b"},
			wantErr: `attribute "latency": missing required attribute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Describe(); got != tt.wantDesc {
				t.Errorf("Describe = %q, want %q", got, tt.wantDesc)
			}
			api := newFakeAPI()
			env := &fakeEnv{edges: map[string][]string{"a->b": {"a->b.0", "a->b.1"}}, api: api}
			if err := f.Apply(context.Background(), env); err != nil {
				t.Fatal(err)
			}
			if len(api.calls) != 2 || !strings.Contains(api.calls[0], tt.spec.Kind+" upstream") || !strings.HasSuffix(api.calls[0], tt.wantAttrs) {
				t.Errorf("calls %q, want an %s toxic on each proxy with %s", api.calls, tt.spec.Kind, tt.wantAttrs)
			}
			if err := f.Revert(context.Background(), env); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHTTPFaultsThroughStage runs http faults on a schedule against a real
// Toxiproxy server with HTTP stages and a real HTTP server, and checks the
// counts on the revert events.
func TestHTTPFaultsThroughStage(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	stages := httpstage.NewAPI(srv.Routes(), "127.0.0.1", 11)
	hs := httptest.NewServer(stages)
	defer func() { hs.Close(); stages.Close(); srv.Collection.Clear() }()
	body := `{"name":"bank->vault","listen":"127.0.0.1:0","upstream":"` + up.Listener.Addr().String() + `","enabled":true}`
	resp, err := http.Post(hs.URL+"/proxies", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Listen string }
	json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()

	specs := []scenario.Fault{
		{Name: "cash-503", Kind: "http_error", Edge: "bank->vault", Start: 0, Duration: scenario.Duration(time.Hour),
			Toxicity: func(v float64) *float64 { return &v }(0.5), Match: &scenario.Match{Path: "/transact/cash"}},
		{Name: "slow-check", Kind: "http_latency", Edge: "bank->vault", Start: 0, Duration: scenario.Duration(time.Hour),
			Attributes: map[string]float64{"latency": 1}, Match: &scenario.Match{Method: "GET", Path: "/transact/check"}},
	}
	env := &fakeEnv{edges: map[string][]string{"bank->vault": {"bank->vault"}}, api: NewToxiproxyAPI(hs.URL), native: true}
	clk := clock.NewFake(time.Unix(0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	var events []record.FaultEvent
	done := make(chan error, 1)
	applied := make(chan struct{}, 2)
	go func() {
		done <- Run(ctx, clk, clk.Now(), specs, env, func(ev record.FaultEvent) {
			events = append(events, ev)
			if ev.Action == record.Applied {
				applied <- struct{}{}
			}
		})
	}()
	<-applied
	<-applied
	errs := 0
	for i := range 400 {
		path := "/transact/cash"
		if i%2 == 1 {
			path = "/transact/check"
		}
		resp, err := http.Get("http://" + p.Listen + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 503 {
			errs++
		}
	}
	cancel() // the schedule reverts what is in force
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run = %v", err)
	}
	got := map[string]map[string]int64{}
	for _, ev := range events {
		if ev.Action == record.Reverted {
			got[ev.Fault] = ev.Counts
			t.Logf("%s: %s", ev.Fault, ev.Detail)
		}
	}
	want := map[string]map[string]int64{
		"cash-503":   {"seen": 400, "matched": 200, "affected": int64(errs)},
		"slow-check": {"seen": 400, "matched": 200, "affected": 200},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if errs < 70 || errs > 130 {
		t.Errorf("%d 503s of 200 matched at toxicity 0.5", errs)
	}
}
