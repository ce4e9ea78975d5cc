package scenarioload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/compose"
)

// writeProject writes a scenario naming compose: files, and the files.
func writeProject(t *testing.T, composeKey string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc := "version: 1\nname: c\ncompose: " + composeKey + "\nservices:\n  web: {}\nworkload:\n  engine: native\n  duration: 5s\n  streams: {get: {target: web, path: /, arrival: {rate: 10}}}\n"
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const (
	webDB   = "services:\n  web:\n    image: web:1\n    ports: [\"8080:80\"]\n    depends_on: [db]\n  db:\n    image: db:1\n"
	extra   = "services:\n  web:\n    deploy: {replicas: 2}\n  admin:\n    image: admin:1\n    profiles: [ops]\n    depends_on: [db]\n"
	noPorts = "services:\n  web:\n    image: web:1\n    depends_on: [db]\n  db:\n    image: db:1\n"
)

// TestComposeProjects: compose: takes a file or a list merged in order;
// profiles come from the loader (--profile) or COMPOSE_PROFILES; an
// imported dependency may leave its port to the image, but load on a
// service with no port anywhere is refused at the stream.
func TestComposeProjects(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		files     map[string]string
		profiles  []string
		env       []string
		want      string // services and web's replicas, or the error
	}{
		{"one file", "compose.yaml", map[string]string{"compose.yaml": webDB}, nil, nil, "[web db] 1"},
		{"two files, a list", "[compose.yaml, extra.yaml]", map[string]string{"compose.yaml": webDB, "extra.yaml": extra}, nil, nil, "[web db] 2"},
		{"a profile", "[compose.yaml, extra.yaml]", map[string]string{"compose.yaml": webDB, "extra.yaml": extra}, []string{"ops"}, nil, "[web db admin] 2"},
		{"COMPOSE_PROFILES", "[compose.yaml, extra.yaml]", map[string]string{"compose.yaml": webDB, "extra.yaml": extra}, nil, []string{"COMPOSE_PROFILES=ops"}, "[web db admin] 2"},
		{"the override beside it", "compose.yaml", map[string]string{"compose.yaml": webDB, "compose.override.yaml": extra}, nil, nil, "[web db] 2"},
		{"no port for load", "compose.yaml", map[string]string{"compose.yaml": noPorts}, nil, nil, "s.yaml:7:3: workload.targets[0]: web declares no port to put load on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeProject(t, tc.key, tc.files)
			l := loader(t, dir)
			l.Compose = compose.Options{Profiles: tc.profiles, Env: append([]string{}, tc.env...)}
			sc, err := l.Load(context.Background(), "s.yaml", nil)
			got := ""
			if err != nil {
				got = strings.TrimPrefix(err.Error(), dir+"/")
			} else {
				got = fmt.Sprint(sc.Order, " ", sc.Services["web"].Replicas)
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestLoadCancels: Load returns within a second of its context's end,
// whatever the input (here a 5,000-service Compose project).
func TestLoadCancels(t *testing.T) {
	var b strings.Builder
	b.WriteString("services:\n  web:\n    image: web:1\n    ports: [\"80\"]\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "  s%d: {image: s:1, depends_on: [web]}\n", i)
	}
	dir := writeProject(t, "compose.yaml", map[string]string{"compose.yaml": b.String()})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := loader(t, dir).Load(ctx, "s.yaml", nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second+100*time.Millisecond {
		t.Errorf("after %s: %v; want the context's end within 1s", time.Since(start), err)
	}
}
