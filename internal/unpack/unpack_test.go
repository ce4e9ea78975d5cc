package unpack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func tree(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, body := range files {
		m[name] = &fstest.MapFile{Data: []byte(body), Mode: 0o644}
	}
	return m
}

func TestTreeWritesOnceAndReuses(t *testing.T) {
	parent := t.TempDir()
	src := tree(map[string]string{"a.js": "a", "sub/b/c.go": "package c\n"})
	dir, err := Tree(src, parent, "scripts")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(dir), "scripts-") || len(filepath.Base(dir)) != len("scripts-")+12 {
		t.Errorf("folder %s: want scripts-<12 hex digits>", dir)
	}
	for name, want := range map[string]string{"a.js": "a", "sub/b/c.go": "package c\n"} {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	// A second call reuses the folder: a file changed in it stays changed.
	marker := filepath.Join(dir, "a.js")
	if err := os.WriteFile(marker, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Tree(src, parent, "scripts")
	if err != nil || again != dir {
		t.Fatalf("second call: %s, %v; want %s", again, err, dir)
	}
	if b, _ := os.ReadFile(marker); string(b) != "kept" {
		t.Error("second call rewrote the tree")
	}
	// Other content, other folder; no temporary folder is left.
	other, err := Tree(tree(map[string]string{"a.js": "changed"}), parent, "scripts")
	if err != nil || other == dir {
		t.Fatalf("changed tree: %s, %v; want a new folder", other, err)
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 2 {
		t.Errorf("parent holds %d entries, want the two trees only", len(ents))
	}
}

func TestHash(t *testing.T) {
	ref, err := Hash(tree(map[string]string{"a": "1", "b/c": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		change bool
	}{
		{"same", map[string]string{"a": "1", "b/c": "2"}, false},
		{"content", map[string]string{"a": "1", "b/c": "3"}, true},
		{"renamed", map[string]string{"a": "1", "b/d": "2"}, true},
		{"bytes moved between files", map[string]string{"a": "12", "b/c": ""}, true},
		{"added", map[string]string{"a": "1", "b/c": "2", "d": ""}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Hash(tree(tc.files))
			if err != nil {
				t.Fatal(err)
			}
			if (got != ref) != tc.change {
				t.Errorf("hash %s vs %s: want changed=%v", got, ref, tc.change)
			}
		})
	}
	if _, err := Hash(fstest.MapFS{}); err == nil {
		t.Error("empty tree: want an error")
	}
}

func TestTreeErrors(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(parent, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Tree(tree(map[string]string{"a": "1"}), parent, "x"); err == nil || !strings.Contains(err.Error(), "unpack") {
		t.Errorf("parent is a file: got %v, want an unpack error", err)
	}
}
