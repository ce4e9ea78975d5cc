package workdir

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// TestPathsAndErrors: relative paths resolve against Dir, absolute ones
// stay; a missing file's error names the path as given.
func TestPathsAndErrors(t *testing.T) {
	w := FS{FS: fstest.MapFS{"proj/a.yaml": {Data: []byte("a")}, "proj/d/b.yml": {}}, Dir: "/proj"}
	for _, tc := range []struct{ in, path, name string }{
		{"a.yaml", "/proj/a.yaml", "proj/a.yaml"},
		{"/etc/x", "/etc/x", "etc/x"},
		{"", "", "."},
		{"/", "/", "."},
	} {
		if got := w.Path(tc.in); got != tc.path {
			t.Errorf("Path(%q) = %q, want %q", tc.in, got, tc.path)
		}
		if got := w.Name(tc.in); got != tc.name {
			t.Errorf("Name(%q) = %q, want %q", tc.in, got, tc.name)
		}
	}
	if b, err := w.ReadFile(context.Background(), "a.yaml", 1); err != nil || string(b) != "a" {
		t.Errorf("ReadFile: %q, %v", b, err)
	}
	if ents, err := w.ReadDir("d"); err != nil || len(ents) != 1 {
		t.Errorf("ReadDir: %v, %v", ents, err)
	}
	if fi, err := w.Stat("d"); err != nil || !fi.IsDir() {
		t.Errorf("Stat: %v, %v", fi, err)
	}
	_, err := w.ReadFile(context.Background(), "missing.yaml", 1)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "open missing.yaml:") {
		t.Errorf("missing file: %v, want an error naming missing.yaml as given", err)
	}
	if _, err := w.Open("nope"); err == nil || !strings.Contains(err.Error(), " nope:") {
		t.Errorf("Open: %v", err)
	}
}
