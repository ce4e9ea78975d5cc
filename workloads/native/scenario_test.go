package native

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

// loadExample loads the catalog's bank-slow-vault (native) with
// overrides, without its assertions (their windows need the whole run).
func loadExample(t *testing.T, sets ...string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load("../../scenarios/bank-slow-vault.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc.Assertions = nil
	if err := scenario.Apply(sc, sets); err != nil {
		t.Fatal(err)
	}
	if err := scenario.Validate(sc, scenario.Options{}); err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestFromScenario runs bank-slow-vault, shortened, against a server
// that plays the bank: the streams, bodies, keys and tags arrive as declared.
func TestFromScenario(t *testing.T) {
	var s seen
	srv := recordingServer(t, &s, nil)
	sc := loadExample(t, "workload.duration=2s", "faults.slow-vault.start=500ms", "faults.slow-vault.duration=1s")
	spec, err := FromScenario(sc, func(service string) ([]string, error) {
		if service != "bank" {
			return nil, errors.New("no such service")
		}
		return []string{srv.URL}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Streams) != 2 || spec.Streams[0].Name != "check" || spec.Streams[1].Name != "cash" || spec.Seed != 7 {
		t.Fatalf("spec streams %+v", spec.Streams)
	}
	if a, b := spec.Streams[0].Keys["account"].Seed, spec.Streams[1].Keys["account"].Seed; a == b {
		t.Errorf("both streams' keys have seed %d", a)
	}
	sum := runToStream(t, spec, Shard{})
	for api, want := range map[string]float64{"TransactCheck": 200, "TransactCash": 80} {
		if _, n := total(sum, "http_reqs", map[string]string{"api": api, "name": api, "method": "POST", "status": "200"}); n != want {
			t.Errorf("%s: %v requests, want %v", api, n, want)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.paths {
		b := s.bodies[i]
		if (p != "/transact/check" && p != "/transact/cash") || !strings.Contains(b, `"account":"acct-`) || !strings.Contains(b, `"idempotency_key":"Transact`) {
			t.Fatalf("request %s %s", p, b)
		}
		if s.headers[i].Get("Content-Type") != "application/json" {
			t.Fatalf("content type %q", s.headers[i].Get("Content-Type"))
		}
	}
	if _, err := FromScenario(sc, func(string) ([]string, error) { return nil, errors.New("down") }); err == nil {
		t.Error("a target without URLs: want an error")
	}
}

// TestFromScenarioK6 refuses a k6 workload.
func TestFromScenarioK6(t *testing.T) {
	sc, err := scenario.Load("../../scenarios/k6/bank-slow-vault.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromScenario(sc, func(string) ([]string, error) { return []string{"http://x"}, nil }); err == nil || !strings.Contains(err.Error(), "engine k6") {
		t.Errorf("err = %v, want one naming engine k6", err)
	}
}

// TestSpecJSON checks that a spec survives JSON, as a harness hands it to
// a load process.
func TestSpecJSON(t *testing.T) {
	sc, err := scenario.Load("../../scenario/testdata/good/native.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := FromScenario(sc, func(s string) ([]string, error) { return []string{"http://" + s + ".test:80"}, nil })
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, spec) {
		t.Errorf("spec changed through JSON:\n%+v\n%+v", back, spec)
	}
	if err := back.Validate(); err != nil {
		t.Error(err)
	}
}

// TestForTargets: the workload goes to the URLs given, with the scenario's
// seed unless one is given; a target the workload does not send to, a bad
// value or a k6 workload is refused, naming what is wrong.
func TestForTargets(t *testing.T) {
	sc := loadExample(t)
	spec, err := ForTargets(sc, []string{"bank=127.0.0.1:8080,127.0.0.1:8081"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Seed != uint64(sc.Seed) || len(spec.Streams) == 0 || !reflect.DeepEqual(spec.Streams[0].Targets, []string{"http://127.0.0.1:8080", "http://127.0.0.1:8081"}) {
		t.Errorf("spec: seed %d (scenario's %d), streams %+v", spec.Seed, sc.Seed, spec.Streams)
	}
	if spec, _ := ForTargets(sc, []string{"bank=127.0.0.1:8080"}, 99); spec.Seed != 99 {
		t.Errorf("seed %d, want the one given", spec.Seed)
	}
	for _, tc := range []struct {
		targets []string
		want    string
	}{
		{[]string{"vault=127.0.0.1:1"}, "--target vault: the workload sends nothing to it (allowed: bank)"},
		{[]string{"bank"}, "--target: target \"bank\": want SERVICE=URL"},
		{nil, sc.File + ": "},
	} {
		if _, err := ForTargets(sc, tc.targets, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("targets %v: err %v, want one saying %q", tc.targets, err, tc.want)
		}
	}
	sc.Workload.Engine, sc.Workload.Script = scenario.EngineK6, "bank.js"
	if _, err := ForTargets(sc, nil, 0); err == nil || !strings.Contains(err.Error(), "runs on engine k6; load runs native workloads") {
		t.Errorf("a k6 workload: %v", err)
	}
}
