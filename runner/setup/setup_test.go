package setup

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// TestPrepareNeedsK6OnlyForK6 settles what a run needs outside a
// repository and with an empty cache: native scenarios need no k6 (nothing
// is built, the cache stays empty); a k6 scenario among them does.
func TestPrepareNeedsK6OnlyForK6(t *testing.T) {
	cache, notRepo, wd := t.TempDir(), t.TempDir(), t.TempDir()
	env := map[string]string{"CHAOSRUN_CACHE": cache, "CHAOSRUN_ROOT": notRepo}
	k6 := k6build.Options{Getenv: func(k string) string { return env[k] }, Dir: wd}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	l := scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: here}, K6: k6}
	load := func(file string) *scenario.Scenario {
		sc, err := l.Load(context.Background(), file, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	o := Options{K6: k6, Testbed: "local", Shards: 1}
	nat := load("../../scenarios/bank-slow-vault.yaml")
	s, err := Prepare(context.Background(), o, []*scenario.Scenario{nat})
	if err != nil || s.k6.Path != "" {
		t.Fatalf("native only: setup %+v, err %v; want no k6 and no error", s, err)
	}
	if ents, _ := os.ReadDir(cache); len(ents) > 0 {
		t.Errorf("native only: the cache holds %v, want nothing", ents)
	}
	if v := s.Versions(nat); v["engine"] != "native" || v["k6"] != "" || v["native"] == "" || v["chaosrun"] == "" {
		t.Errorf("versions of a native run %v", v)
	}
	k6sc := load("../../scenarios/k6/bank-slow-vault.yaml")
	if !NeedsK6([]*scenario.Scenario{nat, k6sc}) || NeedsK6([]*scenario.Scenario{nat}) {
		t.Error("NeedsK6 does not tell a k6 workload from a native one")
	}
	_, err = Prepare(context.Background(), o, []*scenario.Scenario{nat, k6sc})
	if err == nil || !strings.Contains(err.Error(), "engine: k6 needs k6") {
		t.Errorf("with a k6 scenario outside the repository: err = %v, want one saying k6 is needed", err)
	}
}
