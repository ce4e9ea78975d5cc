package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

// TestPrepareNeedsK6OnlyForK6 settles what a run needs outside a
// repository and with an empty cache: native scenarios need no k6 (nothing
// is built, the cache stays empty); a k6 scenario among them does.
func TestPrepareNeedsK6OnlyForK6(t *testing.T) {
	st, _, _ := testState(t)
	cache, notRepo := t.TempDir(), t.TempDir()
	st.Env = map[string]string{"CHAOSRUN_CACHE": cache, "CHAOSRUN_ROOT": notRepo}
	load := func(file string) *scenario.Scenario {
		sc, err := loadScenario(context.Background(), st, file, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	nat := load("../../scenarios/bank-slow-vault.yaml")
	e, err := prepare(context.Background(), st, "", "local", []*scenario.Scenario{nat})
	if err != nil || e.k6.Path != "" {
		t.Fatalf("native only: k6 %q, err %v; want no k6 and no error", e.k6.Path, err)
	}
	if ents, _ := os.ReadDir(cache); len(ents) > 0 {
		t.Errorf("native only: the cache holds %v, want nothing", ents)
	}
	if v := e.versions(nat); v["engine"] != "native" || v["k6"] != "" || v["native"] == "" {
		t.Errorf("versions of a native run %v", v)
	}
	k6 := load("../../scenarios/k6/bank-slow-vault.yaml")
	_, err = prepare(context.Background(), st, "", "local", []*scenario.Scenario{nat, k6})
	if err == nil || !strings.Contains(err.Error(), "engine: k6 needs k6") {
		t.Errorf("with a k6 scenario outside the repository: err = %v, want one saying k6 is needed", err)
	}
}
