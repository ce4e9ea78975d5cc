package workloads

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

func TestScriptEnv(t *testing.T) {
	sc := &scenario.Scenario{Name: "bank-slow", Workload: scenario.Workload{
		Targets: []string{"bank", "kv-store.eu"},
		Params:  map[string]string{"RATE": "200", "DURATION": "from params"},
	}}
	cases := []struct {
		name    string
		addrs   map[string][]string
		want    map[string]string
		wantErr string
	}{
		{"one and two replicas", map[string][]string{"bank": {"127.0.0.1:1"}, "kv-store.eu": {"127.0.0.1:2", "127.0.0.1:3"}, "ledger": {"127.0.0.1:4"}},
			map[string]string{
				"DURATION": "from params", "CHAOSRUN_SEED": "7", "CHAOSRUN_SCENARIO": "bank-slow", "RATE": "200",
				"TARGET_BANK": "http://127.0.0.1:1", "TARGETS_BANK": "http://127.0.0.1:1",
				"TARGET_KV_STORE_EU": "http://127.0.0.1:2", "TARGETS_KV_STORE_EU": "http://127.0.0.1:2,http://127.0.0.1:3",
			}, ""},
		{"a target without instances", map[string][]string{"bank": {"127.0.0.1:1"}}, nil, `no running instance of service "kv-store.eu"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ScriptEnv(sc, tc.addrs, 7, 30*time.Second)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("env = %v\nwant  %v", got, tc.want)
			}
		})
	}
}

func TestScriptEnvDuration(t *testing.T) {
	got, err := ScriptEnv(&scenario.Scenario{}, nil, 1, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got["DURATION"] != "1m30s" {
		t.Errorf("DURATION = %q, want 1m30s", got["DURATION"])
	}
}
