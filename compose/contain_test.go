package compose

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

// TestContainment: a scenario's compose: and a Compose file's env_file
// stay inside their folders (the scenario's; the Compose file's), symbolic
// links followed, as a workload script does; env files must be small
// regular files. Each refusal is at the file, line and column of the key,
// says what is allowed, and comes before anything is read.
func TestContainment(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	compose := func(envFile string) string {
		return "services:\n  app:\n    image: app:dev\n    expose: [\"80\"]\n    env_file: " + envFile + "\n"
	}
	write("compose.yaml", compose("[]"))
	write("secret.env", "TOKEN=x\n")
	write("proj/ok.env", "A=1\n")
	write("proj/big.env", strings.Repeat("A=1\n", MaxSize/4+1))
	if err := os.Symlink(filepath.Join(root, "secret.env"), filepath.Join(proj, "link.env")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "compose.yaml"), filepath.Join(proj, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo.env"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, compose, envFile, want string
	}{
		{"inside, with an env file", "c.yaml", "ok.env", ""},
		{"compose: above the folder", "../compose.yaml", "", "s.yaml:2:10: compose: " + root + "/compose.yaml is outside the scenario's folder " + proj + " (allowed: a Compose file, or a list of them, inside the scenario's folder)"},
		{"compose: absolute, elsewhere", root + "/compose.yaml", "", "s.yaml:2:10: compose: " + root + "/compose.yaml is outside the scenario's folder"},
		{"compose: a link out", "link.yaml", "", "s.yaml:2:10: compose: " + proj + "/link.yaml is outside the scenario's folder"},
		{"env_file above the folder", "c.yaml", "../secret.env", "c.yaml:5:15: services.app.env_file: " + root + "/secret.env is outside the project's folder " + proj + " (allowed: a regular file inside the project's folder, at most 1 MiB)"},
		{"env_file in a list, a link out", "c.yaml", "[ok.env, link.env]", "c.yaml:5:24: services.app.env_file: " + proj + "/link.env is outside the project's folder"},
		{"env_file long form, absolute", "c.yaml", "[{path: " + root + "/secret.env, required: true}]", "c.yaml:5:23: services.app.env_file: " + root + "/secret.env is outside"},
		{"env_file a FIFO", "c.yaml", "fifo.env", "c.yaml:5:15: services.app.env_file: " + proj + "/fifo.env is not a regular file"},
		{"env_file too large", "c.yaml", "big.env", "c.yaml:5:15: services.app.env_file: " + proj + "/big.env is larger than 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.envFile
			if env == "" {
				env = "[]"
			}
			write("proj/c.yaml", compose(env))
			write("proj/s.yaml", "version: 1\ncompose: "+tc.compose+"\nname: s\nservices: {app: {env: {B: \"2\"}}}\nworkload: {script: app.js, duration: 5s, targets: [app]}\n")
			data, _ := os.ReadFile(filepath.Join(proj, "s.yaml"))
			sc, err := scenario.Parse(filepath.Join(proj, "s.yaml"), data, scenario.Options{Compose: importFor})
			if tc.want == "" {
				if err != nil || sc.Services["app"] == nil || sc.Services["app"].Env["A"] != "1" {
					t.Fatalf("got %v; want app imported with A=1 from ok.env", err)
				}
				return
			}
			// Its first problem; the scenario's own entry for app, left
			// unrefined, has its own.
			if err == nil || !strings.HasPrefix(strings.TrimPrefix(err.Error(), proj+"/"), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
	// A catalog scenario has no folder to hold a Compose file.
	if _, err := ImportFor(context.Background(), "catalog:x", []string{"c.yaml"}, Options{}); err == nil || !strings.Contains(err.Error(), "no folder of its own") {
		t.Errorf("a catalog scenario's compose: %v", err)
	}
}

// TestFileErrorsPlaced: problems of the whole file, of its YAML, and
// those compose-go reports without a position are placed at a line and
// a key, as every problem of a Compose file is (FuzzImport checks it for
// any input); a recursive alias, which compose-go would walk for ever,
// is refused.
func TestFileErrorsPlaced(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "c.yaml:1:1: services: the Compose file is empty"},
		{"not a mapping", "- a\n", "c.yaml:1:1: services: a Compose file is a mapping with services:"},
		{"YAML with a line", "services:\n  a: [\n", "c.yaml:2:1: a: invalid YAML: did not find expected node content"},
		{"a control character", "services:\n  a:\n    image: \x01x\n", `c.yaml:3:12: image: invalid YAML: control characters are not allowed`},
		{"not UTF-8", "name: \xff\n", "c.yaml:1:7: name: invalid YAML: invalid leading UTF-8 octet"},
		{"recursive alias", "x-a: &a\n  b: [*a]\nservices: {}\n", "c.yaml:2:7: x-a.b[0]: alias *a is inside the value its anchor names"},
		{"dependency cycle", "services:\n  a: {image: x, expose: [\"1\"], depends_on: [a]}\n", "c.yaml:2:32: services.a.depends_on: Compose: dependency cycle detected: a -> a"},
		{"a typo", "services:\n  a:\n    image: x\n    enviroment: [A=1]\n", `c.yaml:4:5: services.a.enviroment: Compose key "enviroment" is not in the Compose specification`},
		{"an empty key", "\"\": 1\nservices: {}\n", `c.yaml:1:1: "": Compose key "" is not in the Compose specification`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ImportBytes("c.yaml", []byte(tc.in), nil)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestProjectContainment: what a project reaches of the host stays in its
// folder: extends files, bind mounts, secret and config files; inside it
// they are honoured. Each refusal names the file, line and column.
func TestProjectContainment(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := "services:\n  base:\n    image: base:1\n    expose: [\"80\"]\n"
	os.WriteFile(filepath.Join(root, "base.yaml"), []byte(base), 0o644)
	os.WriteFile(filepath.Join(proj, "base.yaml"), []byte(base), 0o644)
	for _, tc := range []struct{ name, svc, top, want string }{
		{"extends inside", "    extends: {file: base.yaml, service: base}\n", "", ""},
		{"extends outside", "    extends: {file: ../base.yaml, service: base}\n", "", "c.yaml:4:21: services.app.extends.file: " + root + "/base.yaml is outside the project's folder"},
		{"extends with a variable", "    extends: {file: \"${DIR}/base.yaml\", service: base}\n", "", "c.yaml:4:21: services.app.extends.file: ${DIR}/base.yaml: chaosrun reads extends files before interpolation"},
		{"bind mount inside", "    image: a:1\n    volumes: [./conf:/etc/app:ro, data:/data]\n", "volumes: {data: {}}\n", ""},
		{"bind mount outside", "    image: a:1\n    volumes: [/etc:/host-etc:ro]\n", "", "c.yaml:5:5: services.app.volumes: bind mount of /etc is outside the project's folder"},
		{"secret file outside", "    image: a:1\n    secrets: [s]\n", "secrets: {s: {file: ../base.yaml}}\n", "c.yaml:6:15: secrets.s.file: " + root + "/base.yaml is outside the project's folder"},
		{"config file inside", "    image: a:1\n    configs: [c]\n", "configs: {c: {file: ./base.yaml}}\n", ""},
		{"network_mode service", "    image: a:1\n    network_mode: \"service:db\"\n  db: {image: db:1}\n", "", "c.yaml:5:5: services.app.network_mode: network_mode \"service:db\" shares another network stack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := "services:\n  app:\n    expose: [\"80\"]\n" + tc.svc + tc.top
			p := filepath.Join(proj, "c.yaml")
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := Import(context.Background(), []string{p}, Options{Env: []string{}})
			switch {
			case tc.want == "" && (err != nil || len(got) != 1):
				t.Errorf("%v\n%s", err, body)
			case tc.want != "" && (err == nil || !strings.HasPrefix(strings.TrimPrefix(err.Error(), proj+"/"), tc.want)):
				t.Errorf("got %v\nwant %s\n%s", err, tc.want, body)
			}
		})
	}
}
