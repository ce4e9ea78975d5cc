package docker

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/chaosrun/chaosrun/scenario"
)

// composeScenario is a Compose-like topology: app and worker reach their
// dependencies by name, cache and db listen on the same port.
func composeScenario() *scenario.Scenario {
	im := func() *scenario.Imported { return &scenario.Imported{File: "compose.yaml"} }
	return &scenario.Scenario{Name: "x", Order: []string{"db", "cache", "app", "worker", "bank", "api"}, Services: map[string]*scenario.Service{
		"db":     {Image: "db:1", Port: 5432, Imported: im()},
		"cache":  {Image: "cache:1", Port: 5432, Imported: im()},
		"app":    {Image: "app:1", Port: 8080, DependsOn: []string{"db", "cache"}, Imported: im(), Env: map[string]string{"DB": "db:5432", "T": "{{port}"}},
		"worker": {Image: "worker:1", Port: 9000, DependsOn: []string{"app"}, Imported: im()},
		"bank":   {Run: "bankservice", DependsOn: []string{"app"}},
		"api":    {External: "127.0.0.1:7070"},
	}}
}

func TestPlanWiring(t *testing.T) {
	sc := composeScenario()
	w := planWiring(sc, "r1", sc.Edges())
	got := fmt.Sprint(w.toxi)
	want := "[{chaosrun-r1 [toxiproxy]} {chaosrun-r1-db []} {chaosrun-r1-cache []} {chaosrun-r1-app [db]} {chaosrun-r1-app-1 [cache]} {chaosrun-r1-worker [app]}]"
	if got != want {
		t.Errorf("toxiproxy's networks\n got %s\nwant %s", got, want)
	}
	if d := w.depNet["app"]; d["db"] != "chaosrun-r1-app" || d["cache"] != "chaosrun-r1-app-1" {
		t.Errorf("app's dependencies on %v: two on port 5432 need two networks", d)
	}
	if got := fmt.Sprint(w.attach("app", "app")); got != "[{chaosrun-r1-app []} {chaosrun-r1-app-1 []}]" {
		t.Errorf("app attaches to %s", got)
	}
	if got := fmt.Sprint(w.attach("bank", "bank")); got != "[{chaosrun-r1 [bank]}]" {
		t.Errorf("bank attaches to %s", got)
	}
	for _, c := range []struct{ svc, want string }{
		{"db", "chaosrun-r1-db:5432"}, {"bank", "bank:8080"}, {"api", "host.docker.internal:7070"},
	} {
		if got := w.upstream(sc, "r1", c.svc, 0); got != c.want {
			t.Errorf("upstream(%s) = %s, want %s", c.svc, got, c.want)
		}
	}
	if w.front["api"] != proxyBasePort+len(sc.Edges()) {
		t.Errorf("front port of api = %d", w.front["api"])
	}
	for in, want := range map[string]string{"10.1.2.3:80": "10.1.2.3:80", "localhost:9": "host.docker.internal:9", "[::1]:5": "host.docker.internal:5"} {
		if got := containerSide(in); got != want {
			t.Errorf("containerSide(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestComposeServiceSpec: a Compose service runs as its file says, with
// its environment as it is: no CHAOSRUN_* variables, no templates.
func TestComposeServiceSpec(t *testing.T) {
	sc := composeScenario()
	sc.Services["app"].Imported.Entrypoint = []string{"/app"}
	sc.Services["app"].Imported.Args = []string{"-v"}
	sc.Services["app"].Health = scenario.Health{Command: []string{"/app", "-check", "{port}"}}
	tb := &Testbed{Image: "chaosrun-local:abc"}
	s, err := tb.serviceSpec(sc, "app", 0, map[string][]string{"db": {"db:5432"}, "cache": {"cache:5432"}}, "tok")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.entrypoint, []string{"/app"}) || !slices.Equal(s.cmd, []string{"-v"}) || fmt.Sprint(s.env) != "map[DB:db:5432 T:{port}]" {
		t.Errorf("spec = %+v", s)
	}
	if !slices.Equal(s.health.Command, []string{"/app", "-check", "8080"}) || dockerHealth(s.health).Test[0] != "CMD" {
		t.Errorf("health = %v", s.health)
	}
}

func TestDepNamesFollowComposeNames(t *testing.T) {
	yml := `services:
  app:
    image: app:dev
    networks: [backend]
  db:
    image: postgres-local:15-bookworm
    container_name: items-db
    networks:
      backend:
        aliases: [database, pg]
      other:
        aliases: [not-shared]
networks: {backend: {}, other: {}}
`
	sc := projectScenario(t, yml, "app", "db")
	got := depNames(sc, "app", "db")
	want := []string{"db", "database", "items-db", "pg"}
	if !slices.Equal(got, want) {
		t.Errorf("depNames = %v, want %v", got, want)
	}
}

// projectScenario is a scenario of the named services of a Compose file
// (yml), loaded by compose-go as the import loads it.
func projectScenario(t *testing.T, yml string, names ...string) *scenario.Scenario {
	t.Helper()
	dir := t.TempDir()
	proj, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(dir, "compose.yaml"), Content: []byte(yml)}},
	}, func(o *loader.Options) { o.SetProjectName("items", true) })
	if err != nil {
		t.Fatal(err)
	}
	sc := &scenario.Scenario{Services: map[string]*scenario.Service{}}
	for _, n := range names {
		sc.Services[n] = &scenario.Service{Image: proj.Services[n].Image, Imported: &scenario.Imported{Project: proj}}
	}
	return sc
}

func TestReplicatedDependencyByNameIsRelayed(t *testing.T) {
	yml := `services:
  web:
    image: nginx-local:1.22-bookworm
    depends_on: [api]
  api:
    image: api:dev
    deploy: {replicas: 3}
`
	sc := projectScenario(t, yml, "web", "api")
	sc.Services["web"].DependsOn = []string{"api"}
	for _, tc := range []struct {
		replicas int
		want     string
	}{
		{3, "[{chaosrun-r [toxiproxy]} {chaosrun-r-api []} {chaosrun-r-web []}]"}, // relays hold "api"
		{1, "[{chaosrun-r [toxiproxy]} {chaosrun-r-api []} {chaosrun-r-web [api]}]"},
	} {
		sc.Services["api"].Replicas = tc.replicas
		w := planWiring(sc, "r", sc.Edges())
		if got := fmt.Sprint(w.toxi); got != tc.want {
			t.Errorf("%d replicas: toxiproxy's networks %s, want %s", tc.replicas, got, tc.want)
		}
	}
}
