package workdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWithin: a path is inside a folder once ".." and symbolic links are
// followed, of the folder too; missing parts are taken as written.
func TestWithin(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		root, p string
		want    bool
	}{
		{dir, filepath.Join(dir, "a.yaml"), true},
		{dir, filepath.Join(dir, "sub", "missing", "b.yaml"), true},
		{dir, dir, true},
		{dir, filepath.Join(dir, "..", "a.yaml"), false},
		{dir, filepath.Join(dir, "up", "a.yaml"), false},
		{dir, "/etc/passwd", false},
		{filepath.Join(root, "alias"), filepath.Join(dir, "a.yaml"), true},
		{dir, filepath.Join(dir, "..proj", "a.yaml"), true},
	} {
		if got := Within(tc.root, tc.p); got != tc.want {
			t.Errorf("Within(%s, %s) = %v, want %v", tc.root, tc.p, got, tc.want)
		}
	}
}
