package compose

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

// TestInit: init's command line, from its flags to its exit code: the
// starter is written and the next steps said; no --compose, a Compose
// file it cannot start from, files that exist and an --out from which the
// scenario's compose: would lie outside its folder exit 2.
func TestInit(t *testing.T) {
	out := t.TempDir() // the project: its Compose files and the starter
	for _, f := range []string{"shop.yaml", "no-image.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wd := workdir.FS{FS: os.DirFS("/"), Dir: out}
	tests := []struct {
		name   string
		f      InitFlags
		code   int
		stdout string
		msg    string
	}{
		{"elsewhere", InitFlags{Files: []string{"shop.yaml"}, Out: t.TempDir()}, exitcode.Usage, "", "outside its own folder: write it in the Compose file's folder or one above it"},
		{"writes", InitFlags{Files: []string{"shop.yaml"}, Out: out}, exitcode.OK, "next: chaosrun validate " + out, ""},
		{"files exist", InitFlags{Files: []string{"shop.yaml"}, Out: out}, exitcode.Usage, "", "exists (--force overwrites it)"},
		{"forced", InitFlags{Files: []string{"shop.yaml"}, Out: out, Force: true}, exitcode.OK, "wrote " + out, ""},
		{"no --compose", InitFlags{Out: out}, exitcode.Usage, "", "--compose FILE or --url URL is required"},
		{"no image", InitFlags{Files: []string{"no-image.yaml"}, Out: "."}, exitcode.Usage, "", "no-image.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := tt.f.Init(context.Background(), wd, &stdout)
			code, msg := exitcode.OK, ""
			if ee, ok := exitcode.As(err); ok {
				code, msg = ee.Code, ee.Err.Error()
			}
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(msg, tt.msg) {
				t.Fatalf("exit %d %q, stdout %q; want %d %q, %q", code, msg, stdout.String(), tt.code, tt.msg, tt.stdout)
			}
		})
	}
	if ents, _ := os.ReadDir(out); len(ents) != 3 || slices.ContainsFunc(ents, func(e os.DirEntry) bool { return filepath.Ext(e.Name()) == ".js" }) {
		t.Errorf("%s holds %v, want the Compose files and the scenario (no script)", out, ents)
	}
}
