package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitValidateWild: for each Compose project of compose/testdata/wild
// (shapes of public example projects), `chaosrun init --compose` writes a
// starter that `chaosrun validate` accepts, with the project's files and
// profiles given as docker compose takes them.
func TestInitValidateWild(t *testing.T) {
	for _, tc := range []struct {
		dir   string
		flags []string // init's and validate's
		files []string
	}{
		{dir: "nginx-golang-postgres"}, {dir: "django"}, {dir: "wordpress-mysql"}, {dir: "react-express-mongo"},
		{dir: "nginx-replicas"}, {dir: "celery-rabbitmq"}, {dir: "prometheus-grafana"}, {dir: "migrate-job"},
		{dir: "override"}, {dir: "profiles"}, {dir: "profiles", flags: []string{"--profile", "dev", "--profile", "debug"}},
		{dir: "extends"}, {dir: "secrets-configs"}, {dir: "two-networks"},
		{dir: "several-files", files: []string{"compose.yaml", "compose.prod.yaml"}},
	} {
		t.Run(tc.dir+strings.Join(tc.flags, ""), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("../../compose/testdata/wild", tc.dir))); err != nil {
				t.Fatal(err)
			}
			files := tc.files
			if files == nil {
				files = []string{"compose.yaml"}
			}
			args := append([]string{"init", "--out", dir}, tc.flags...)
			for _, f := range files {
				args = append(args, "--compose", filepath.Join(dir, f))
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("init: exit %d\n%s", code, stderr)
			}
			file := strings.TrimPrefix(strings.SplitN(stdout, "\n", 2)[0], "wrote ")
			code, stdout, stderr = runCLI(t, append(append([]string{"validate"}, tc.flags...), file)...)
			if code != exitOK || !strings.Contains(stdout, ": ok (") {
				b, _ := os.ReadFile(file)
				t.Errorf("validate: exit %d\n%s%s\n%s", code, stdout, stderr, b)
			}
		})
	}
}
