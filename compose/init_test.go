package compose

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

// TestInit: init's command line, from its flags to its exit code: the
// starter is written and the next steps said; no --compose, a Compose
// file it cannot start from and files that exist exit 2.
func TestInit(t *testing.T) {
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	wd := workdir.FS{FS: os.DirFS("/"), Dir: here}
	out := t.TempDir()
	tests := []struct {
		name   string
		f      InitFlags
		code   int
		stdout string
		msg    string
	}{
		{"writes", InitFlags{File: "testdata/shop.yaml", Out: out}, exitcode.OK, "next: chaosrun validate " + out, ""},
		{"files exist", InitFlags{File: "testdata/shop.yaml", Out: out}, exitcode.Usage, "", "exists (--force overwrites it)"},
		{"forced", InitFlags{File: "testdata/shop.yaml", Out: out, Force: true}, exitcode.OK, "wrote " + out, ""},
		{"no --compose", InitFlags{Out: out}, exitcode.Usage, "", "--compose FILE is required"},
		{"no image", InitFlags{File: "testdata/no-image.yaml", Out: t.TempDir()}, exitcode.Usage, "", "no-image.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := tt.f.Init(wd, &stdout)
			code, msg := exitcode.OK, ""
			if ee, ok := exitcode.As(err); ok {
				code, msg = ee.Code, ee.Err.Error()
			}
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(msg, tt.msg) {
				t.Fatalf("exit %d %q, stdout %q; want %d %q, %q", code, msg, stdout.String(), tt.code, tt.msg, tt.stdout)
			}
		})
	}
	if ents, _ := os.ReadDir(out); len(ents) != 2 || filepath.Ext(ents[0].Name()) != ".js" {
		t.Errorf("%s holds %v, want the scenario and its script", out, ents)
	}
}
