package compose

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
)

// wildProject is a Compose project under testdata/wild, in a shape public
// example projects use, and a few facts its import must give.
type wildProject struct {
	dir      string
	files    []string // default compose.yaml
	profiles []string
	services []string          // in the files' order
	edges    []string          // from->to, sorted
	ports    map[string][]int  // Imported.Ports of some services
	replicas map[string]int    // of some services
	images   map[string]string // of some services
}

var wildProjects = []wildProject{
	{dir: "nginx-golang-postgres", services: []string{"backend", "db", "proxy"}, edges: []string{"backend->db", "proxy->backend"},
		ports: map[string][]int{"db": {5432}, "proxy": {80}, "backend": nil}, images: map[string]string{"backend": "nginx-golang-postgres-backend", "db": "postgres-local"}},
	{dir: "django", services: []string{"web", "db", "cache"}, edges: []string{"web->cache", "web->db"},
		ports: map[string][]int{"web": {8000}, "db": nil}, images: map[string]string{"web": "django-web"}},
	{dir: "wordpress-mysql", services: []string{"db", "wordpress"}, edges: []string{"wordpress->db"},
		ports: map[string][]int{"db": {3306, 33060}, "wordpress": {80}}},
	{dir: "react-express-mongo", services: []string{"frontend", "backend", "mongo"}, edges: []string{"backend->mongo", "frontend->backend"},
		ports: map[string][]int{"frontend": {3000}, "backend": {3000}, "mongo": {27017}}},
	{dir: "nginx-replicas", services: []string{"nginx", "api", "cache"}, edges: []string{"api->cache", "nginx->api"},
		ports: map[string][]int{"nginx": {80}, "api": {5000}, "cache": nil}, replicas: map[string]int{"api": 3, "nginx": 1}},
	{dir: "celery-rabbitmq", services: []string{"rabbitmq", "redis", "api", "worker"}, edges: []string{"api->rabbitmq", "api->redis", "worker->rabbitmq", "worker->redis"},
		ports: map[string][]int{"rabbitmq": {15672, 5672}, "worker": nil}, replicas: map[string]int{"worker": 2}},
	{dir: "prometheus-grafana", services: []string{"prometheus", "node-exporter", "grafana"}, edges: []string{"grafana->prometheus", "prometheus->node-exporter"},
		ports: map[string][]int{"grafana": {3000}, "node-exporter": {9100}}},
	// The migration job is no edge: api waits for it to exit 0.
	{dir: "migrate-job", services: []string{"db", "migrate", "api"}, edges: []string{"api->db", "migrate->db"},
		ports: map[string][]int{"api": {8080}}, images: map[string]string{"api": "billing-api"}},
	// compose.override.yaml beside compose.yaml is merged: web is built
	// and both publish ports.
	{dir: "override", services: []string{"web", "api", "db"}, edges: []string{"api->db", "web->api"},
		ports: map[string][]int{"web": {3000}, "api": {8080}}, images: map[string]string{"web": "registry.example.com/shop/web:latest"}},
	{dir: "profiles", services: []string{"app", "db"}, edges: []string{"app->db"}},
	{dir: "profiles", profiles: []string{"dev", "debug"}, services: []string{"app", "db", "adminer", "mailhog"},
		edges: []string{"adminer->db", "app->db", "app->mailhog"}, ports: map[string][]int{"mailhog": {8025, 1025}}},
	{dir: "extends", services: []string{"gateway", "payments", "ledger", "collector"},
		edges: []string{"gateway->ledger", "gateway->payments", "ledger->collector", "payments->collector", "payments->ledger"},
		ports: map[string][]int{"gateway": {10000}}},
	{dir: "secrets-configs", services: []string{"proxy", "app", "db"}, edges: []string{"app->db", "proxy->app"},
		ports: map[string][]int{"proxy": {443}, "app": {8443}}},
	{dir: "two-networks", services: []string{"web", "catalog", "search", "database"},
		edges: []string{"catalog->database", "search->database", "web->catalog", "web->search"}, ports: map[string][]int{"web": {8080}}},
	{dir: "several-files", files: []string{"compose.yaml", "compose.prod.yaml"}, services: []string{"frontend", "backend", "queue"},
		edges: []string{"backend->queue", "frontend->backend"}, ports: map[string][]int{"queue": {8222, 4222}}, replicas: map[string]int{"backend": 2}},
}

func (w wildProject) name() string {
	return strings.Join(append([]string{w.dir}, w.profiles...), "+")
}

func (w wildProject) paths(dir string) []string {
	files := w.files
	if files == nil {
		files = []string{"compose.yaml"}
	}
	var out []string
	for _, f := range files {
		out = append(out, filepath.Join(dir, f))
	}
	return out
}

// TestWildProjects imports each project and checks its facts: services
// (profiles applied), dependency edges, ports, replicas, images; every
// service carries the whole project.
func TestWildProjects(t *testing.T) {
	for _, w := range wildProjects {
		t.Run(w.name(), func(t *testing.T) {
			got, err := Import(context.Background(), w.paths(filepath.Join("testdata/wild", w.dir)), Options{Profiles: w.profiles, Env: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			var names, edges []string
			byName := map[string]*scenario.Service{}
			for _, n := range got {
				names = append(names, n.Name)
				byName[n.Name] = n.Service
				for _, d := range n.Service.DependsOn {
					edges = append(edges, n.Name+"->"+d)
				}
				if p, ok := n.Service.Imported.Project.(*types.Project); !ok || p != got[0].Service.Imported.Project || len(p.Services) != len(got) {
					t.Errorf("%s: project %T not shared whole", n.Name, n.Service.Imported.Project)
				}
			}
			slices.Sort(edges)
			if !slices.Equal(names, w.services) || !slices.Equal(edges, w.edges) {
				t.Errorf("services %v, edges %v; want %v, %v", names, edges, w.services, w.edges)
			}
			for svc, want := range w.ports {
				if s := byName[svc]; s == nil || !slices.Equal(s.Imported.Ports, want) || s.Port != append(want, 0)[0] {
					t.Errorf("%s ports %v; want %v", svc, s.Imported.Ports, want)
				}
			}
			for svc, want := range w.replicas {
				if s := byName[svc]; s == nil || s.Replicas != want {
					t.Errorf("%s replicas %d; want %d", svc, s.Replicas, want)
				}
			}
			for svc, want := range w.images {
				if s := byName[svc]; s == nil || s.Image != want {
					t.Errorf("%s image %q; want %q", svc, s.Image, want)
				}
			}
		})
	}
}

// TestWildInit runs init on each project (a copy) and loads the starter
// it writes: load on the services nobody depends on, on the native
// engine.
func TestWildInit(t *testing.T) {
	for _, w := range wildProjects {
		t.Run(w.name(), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata/wild", w.dir))); err != nil {
				t.Fatal(err)
			}
			f := InitFlags{Files: w.files, Profiles: w.profiles, Out: "."}
			if f.Files == nil {
				f.Files = []string{"compose.yaml"}
			}
			var stdout bytes.Buffer
			if err := f.Init(context.Background(), workdir.FS{FS: os.DirFS("/"), Dir: dir}, &stdout); err != nil {
				t.Fatal(err)
			}
			file := strings.TrimPrefix(strings.Fields(stdout.String())[1], "")
			opts := scenario.Options{Compose: func(sf string, names []string) ([]scenario.Named, error) {
				return ImportFor(context.Background(), sf, names, Options{Profiles: w.profiles, Env: []string{}})
			}}
			sc, err := scenario.Load(file, opts)
			if err != nil {
				b, _ := os.ReadFile(file)
				t.Fatalf("%v\n%s", err, b)
			}
			if sc.Workload.EngineName() != scenario.EngineNative || len(sc.Workload.Targets) == 0 {
				t.Errorf("engine %s, targets %v", sc.Workload.EngineName(), sc.Workload.Targets)
			}
		})
	}
}
