package compose

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./compose -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// importFor is ImportFor as the scenario model calls it.
func importFor(file string, names []string) ([]scenario.Named, error) {
	return ImportFor(context.Background(), file, names, Options{Env: []string{}})
}

func TestImport(t *testing.T) {
	data, err := os.ReadFile("testdata/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ImportBytes("testdata/shop.yaml", data, []string{"CACHE_TIMEOUT=80ms"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, n := range got {
		s := n.Service
		fmt.Fprintf(&b, "%s: image=%s port=%d depends_on=%v health=%q at %s:%d:%d\n", n.Name, s.Image, s.Port, s.DependsOn, s.Health.String(),
			s.Imported.File, s.Imported.Line, s.Imported.Col)
		fmt.Fprintf(&b, "  entrypoint=%q args=%q\n", s.Imported.Entrypoint, s.Imported.Args)
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  env %s=%s\n", k, s.Env[k])
		}
	}
	golden(t, "testdata/shop.out", []byte(b.String()))
}

func TestImportErrors(t *testing.T) {
	for _, f := range []string{"testdata/unsupported.yaml", "testdata/bad-values.yaml", "testdata/no-image.yaml"} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ImportBytes(f, data, nil)
			var errs scenario.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %v (%T), want scenario.Errors", err, err)
			}
			for _, e := range errs {
				if e.Line == 0 || e.Field == "" {
					t.Errorf("error without a position or key: %v", e)
				}
			}
			golden(t, strings.TrimSuffix(f, ".yaml")+".err", []byte(err.Error()+"\n"))
		})
	}
}

// TestScenarioWithCompose loads scenarios that name a Compose file: its
// services join under their names, refined by the scenario; what a
// scenario may not change of them, or gets wrong, is named with its place.
func TestScenarioWithCompose(t *testing.T) {
	opts := scenario.Options{Compose: importFor}
	sc, err := scenario.Load("testdata/shop-scenario.yaml", opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"redis", "app", "worker", "front"}; !slices.Equal(sc.Order, want) {
		t.Errorf("order %v, want %v", sc.Order, want)
	}
	app := sc.Services["app"]
	if !app.ByName() || app.Env["CACHE_TIMEOUT"] != "0s" || app.Env["REDIS_ADDR"] != "redis:6379" || app.Metrics.Path != "/internal/metrics" {
		t.Errorf("app = %+v, env %v", app, app.Env)
	}
	if err := scenario.Apply(sc, []string{"app.env.CACHE_TIMEOUT=50ms"}); err != nil {
		t.Fatal(err)
	}
	if err := scenario.Validate(sc, opts); err != nil {
		t.Fatal(err)
	}
	if got := sc.Services["app"].Env["CACHE_TIMEOUT"]; got != "50ms" {
		t.Errorf("--set app.env.CACHE_TIMEOUT: %q", got)
	}
	if px, err := sc.ProxiesFor("app->redis"); err != nil || !slices.Equal(px, []string{"app->redis"}) {
		t.Errorf("ProxiesFor(app->redis) = %v, %v", px, err)
	}

	_, err = scenario.Load("testdata/bad-scenario.yaml", opts)
	if err == nil {
		t.Fatal("a bad scenario loaded")
	}
	golden(t, "testdata/bad-scenario.err", []byte(err.Error()+"\n"))
}

// TestStarter: the scaffold of a Compose project is a scenario that loads
// as it is, with load on the entry service and a fault on its first edge.
func TestStarter(t *testing.T) {
	st, err := NewStarter(context.Background(), []string{"testdata/shop.yaml"}, []string{"shop.yaml"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/starter.out", []byte(st.Scenario))
	file := filepath.Join("testdata", st.Name+".yaml")
	sc, err := scenario.Parse(file, []byte(st.Scenario), scenario.Options{Compose: importFor})
	if err != nil {
		t.Fatalf("the starter does not load:\n%v\n%s", err, st.Scenario)
	}
	if !slices.Equal(sc.Workload.Targets, []string{"worker"}) || sc.Workload.EngineName() != scenario.EngineNative || sc.Faults[0].Edge != "worker->redis" {
		t.Errorf("targets %v, fault edge %s", sc.Workload.Targets, sc.Faults[0].Edge)
	}
}
