package docker

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

func TestServeArgsAndAliases(t *testing.T) {
	svc := &scenario.Service{Run: "bankservice", Config: map[string]string{"workers": "8", "bulkheads": "off"}}
	got := serveArgs(svc, map[string][]string{"vault": {"toxiproxy:20001"}, "ledger": {"toxiproxy:20000", "toxiproxy:20002"}})
	want := []string{"serve", "bankservice", "--listen", "0.0.0.0:8080",
		"--dep", "ledger=toxiproxy:20000,toxiproxy:20002", "--dep", "vault=toxiproxy:20001",
		"--bulkheads=off", "--workers=8"}
	if !slices.Equal(got, want) {
		t.Errorf("serveArgs =\n %v\nwant\n %v", got, want)
	}
	for in, want := range map[string]string{"ledger": "ledger", "ledger.2": "ledger-2"} {
		if got := alias(in); got != want {
			t.Errorf("alias(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOwnImageSpec(t *testing.T) {
	sc := &scenario.Scenario{Name: "x", Services: map[string]*scenario.Service{
		"cache": {Image: "my-cache:dev", Port: 6379, Health: scenario.Health{Check: "tcp"}, Config: map[string]string{"max-memory": "64mb"}},
	}}
	tb := &Testbed{Image: "chaosrun-local:abc"}
	s, err := tb.serviceSpec(sc, "cache", 0, map[string][]string{"store": {"toxiproxy:20000"}}, "tok")
	if err != nil {
		t.Fatal(err)
	}
	if s.image != "my-cache:dev" || s.port != 6379 || s.health.Check != "tcp" || s.cmd != nil {
		t.Errorf("spec = %+v: want the user's image, its port and health, and its own command", s)
	}
	for k, v := range map[string]string{"CHAOSRUN_PORT": "6379", "CHAOSRUN_DEP_STORE": "toxiproxy:20000", "CHAOSRUN_CONFIG_MAX_MEMORY": "64mb", "CHAOSRUN_INSTANCE": "cache"} {
		if s.env[k] != v {
			t.Errorf("env %s = %q, want %q", k, s.env[k], v)
		}
	}
}

// hostEnv is the fault environment a runner gives the schedule.
type hostEnv struct {
	sc *scenario.Scenario
	tb *Testbed
}

func (e hostEnv) ProxiesFor(edge string) ([]string, error)   { return e.sc.ProxiesFor(edge) }
func (e hostEnv) Toxics() faults.ToxicAPI                    { return nil }
func (e hostEnv) Hosts() faults.HostAPI                      { return e.tb.Hosts() }
func (e hostEnv) InstancesFor(host string) ([]string, error) { return e.sc.InstancesFor(host) }

func bankScenario(t *testing.T) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("docker-test.yaml", []byte(`
version: 1
name: docker-host-faults
services:
  ledger: {run: ledger}
  vault: {run: vault}
  bank: {run: bankservice, depends_on: [ledger, vault], config: {dep-timeout: 1s}}
workload: {script: bank.js, duration: 60s, targets: [bank]}
`), scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// probe asks url with a short timeout and reports whether it answered 200.
func probe(method, url string) bool {
	hc := &http.Client{Timeout: 700 * time.Millisecond}
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(fmt.Sprintf(`{"account":"acct-1","amount":1,"idempotency_key":"probe-%d"}`, time.Now().UnixNano()))
	} else {
		body = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, url, body)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// eventually waits up to d for cond.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return cond()
}

// TestHostFaultsOnRealContainers stands the bank topology up in containers
// and applies each host fault kind through the fault layer, as the schedule
// does: the instance stops answering, then answers again after revert, at
// the same address, and the bank reaches it again by its alias. Then a
// container killed behind the testbed's back is reported, and teardown
// leaves nothing labelled with the run.
func TestHostFaultsOnRealContainers(t *testing.T) {
	cli := requireDocker(t)
	img := testImage(t, cli)
	sc := bankScenario(t)
	tb := &Testbed{Image: img, LogDir: t.TempDir(), Seed: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	topo, err := tb.Up(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stack start-up: %s", time.Since(t0).Round(time.Millisecond))
	downed := false
	t.Cleanup(func() {
		if !downed {
			tb.Down(context.Background()) //nolint:errcheck
		}
	})
	addr := map[string]string{}
	for _, in := range topo.Instances {
		addr[in.Name] = in.Address
	}
	bank := "http://" + addr["bank"] + "/transact/check"
	if !eventually(10*time.Second, func() bool { return probe(http.MethodPost, bank) }) {
		t.Fatal("bank does not serve TransactCheck before any fault")
	}
	env := hostEnv{sc: sc, tb: tb}
	for _, tc := range []struct{ kind, host string }{
		{"host_pause", "ledger"},
		{"host_stop", "ledger"},
		{"host_kill", "vault"},
		{"host_disconnect", "ledger"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			f, err := faults.New(scenario.Fault{Name: "f-" + tc.kind, Kind: tc.kind, Host: tc.host, Start: 1, Duration: 1})
			if err != nil {
				t.Fatal(err)
			}
			health := "http://" + addr[tc.host] + "/healthz"
			if err := f.Apply(ctx, env); err != nil {
				t.Fatalf("apply: %v", err)
			}
			if !eventually(5*time.Second, func() bool { return !probe(http.MethodGet, health) }) {
				t.Errorf("%s still answers at %s while %s is in force", tc.host, health, tc.kind)
			}
			if tc.kind == "host_pause" {
				res, err := cli.ContainerInspect(ctx, tb.byName[tc.host].id, client.ContainerInspectOptions{})
				if err != nil || !res.Container.State.Paused {
					t.Errorf("container of %s is not paused: %v", tc.host, err)
				}
			}
			if err := f.Revert(ctx, env); err != nil {
				t.Fatalf("revert: %v", err)
			}
			if err := f.Revert(ctx, env); err != nil {
				t.Errorf("a second revert is not a no-op: %v", err)
			}
			if !eventually(15*time.Second, func() bool { return probe(http.MethodGet, health) }) {
				t.Errorf("%s does not answer at %s after %s was reverted", tc.host, health, tc.kind)
			}
			if !eventually(15*time.Second, func() bool { return probe(http.MethodPost, bank) }) {
				t.Errorf("bank does not reach %s again after %s was reverted", tc.host, tc.kind)
			}
		})
	}
	select {
	case err := <-topo.Died:
		t.Errorf("a deliberate host fault was reported as a death: %v", err)
	default:
	}
	// A container that dies behind the testbed's back is reported.
	if _, err := cli.ContainerKill(ctx, tb.byName["vault"].id, client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-topo.Died:
		if !strings.Contains(err.Error(), "vault") {
			t.Errorf("death report does not name vault: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("vault was killed behind the testbed's back and no death was reported")
	}
	downed = true
	if err := tb.Down(ctx); err != nil {
		t.Fatalf("down: %v", err)
	}
	left, err := Leftovers(ctx, cli, tb.RunID)
	if err != nil || len(left) > 0 {
		t.Errorf("left after teardown: %v %v", left, err)
	}
	for _, n := range []string{"toxiproxy", "ledger", "vault", "bank"} {
		if fi, err := os.Stat(tb.LogDir + "/" + n + ".log"); err != nil || fi.Size() == 0 {
			t.Errorf("log of %s not saved: %v", n, err)
		}
	}
	var _ testbed.Testbed = tb
}
