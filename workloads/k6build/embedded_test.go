package k6build

import (
	"archive/zip"
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite source.zip from the repository's sources")

// repoSources reads what source.zip must hold from the repository around
// this package: path → bytes, paths in order.
func repoSources(t *testing.T) ([]string, map[string][]byte) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(root)
	files := map[string][]byte{}
	var names []string
	for _, dir := range []string{ExtensionDir, ModelsDir, XK6ToolsDir} {
		srcs, err := sourceFiles(fsys, dir, dir+"/")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range srcs {
			if files[s.rel], err = fs.ReadFile(fsys, s.path); err != nil {
				t.Fatal(err)
			}
			names = append(names, s.rel)
		}
	}
	slices.Sort(names)
	return names, files
}

// writeSourceZip writes files into source.zip: sorted, no times, so that
// the same sources give the same bytes.
func writeSourceZip(t *testing.T, names []string, files map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("source.zip", buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEmbeddedSources: the sources an installed binary builds k6 from are
// the repository's, file for file, and hash as the checkout's do (so both
// find the same cached k6).
func TestEmbeddedSources(t *testing.T) {
	names, want := repoSources(t)
	if *update {
		writeSourceZip(t, names, want)
		t.Skip("source.zip rewritten; rebuild the binary to embed it")
	}
	fsys, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			got[p], err = fs.ReadFile(fsys, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, n := range names {
		if b, ok := got[n]; !ok {
			stale = append(stale, n+" (missing)")
		} else if !bytes.Equal(b, want[n]) {
			stale = append(stale, n+" (differs)")
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			stale = append(stale, n+" (gone from the repository)")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Fatalf("source.zip is stale: %s\nrewrite it: go test ./workloads/k6build -run TestEmbeddedSources -update", strings.Join(stale, ", "))
	}
	embedded, err := sourceHash(fsys, ExtensionDir, "embedded")
	if err != nil {
		t.Fatal(err)
	}
	if checkout, err := SourceHash("../../" + ExtensionDir); err != nil || embedded != checkout {
		t.Errorf("embedded sources hash %s, the checkout's %s (%v)", embedded, checkout, err)
	}
}

// TestSourcesWithoutACheckout: outside a repository the build's sources
// are the embedded ones, unpacked into the cache with the layout a build
// expects, and the cached k6 is named by their hash; so they are in a
// checkout that holds the same files, and not in one whose differ.
func TestSourcesWithoutACheckout(t *testing.T) {
	cache := t.TempDir()
	o := Options{Dir: t.TempDir(), CacheDir: cache}
	if root, err := o.Checkout(); err != nil || root != "" {
		t.Fatalf("Checkout() outside a repository = %q, %v; want none", root, err)
	}
	src, err := o.Sources()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(src) != cache {
		t.Errorf("sources unpacked to %s, want a folder of the cache %s", src, cache)
	}
	for _, f := range []string{ExtensionDir + "/go.mod", ModelsDir + "/go.mod", XK6ToolsDir + "/go.mod", XK6ToolsDir + "/go.sum"} {
		if _, err := os.Stat(filepath.Join(src, f)); err != nil {
			t.Errorf("unpacked sources lack %s: %v", f, err)
		}
	}
	unpacked, err := SourceHash(filepath.Join(src, ExtensionDir))
	if err != nil {
		t.Fatal(err)
	}
	cached, err := o.CachedK6()
	if err != nil || cached != cachedK6(cache, unpacked) {
		t.Errorf("CachedK6() = %s, %v; want %s (the unpacked sources' hash)", cached, err, cachedK6(cache, unpacked))
	}
	// A checkout with the same sources builds from the embedded ones (the
	// suite's builds prove an installed binary's); one whose sources
	// differ, from its own.
	repo := t.TempDir()
	fsys, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(repo, fsys); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module "+RootModule+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Getenv = func(k string) string {
		if k == "CHAOSRUN_ROOT" {
			return repo
		}
		return ""
	}
	if root, err := o.Sources(); err != nil || root != src {
		t.Errorf("Sources() of a checkout with the embedded sources = %q, %v; want them unpacked, %s", root, err, src)
	}
	for _, change := range []string{ExtensionDir + "/added.go", XK6ToolsDir + "/go.sum", ModelsDir + "/go.mod"} {
		p := filepath.Join(repo, change)
		before, _ := os.ReadFile(p)
		if err := os.WriteFile(p, append(before, "\n// changed\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		if root, err := o.Sources(); err != nil || root != repo {
			t.Errorf("Sources() with %s changed in the checkout = %q, %v; want the checkout %s", change, root, err, repo)
		}
		if before == nil {
			err = os.Remove(p)
		} else {
			err = os.WriteFile(p, before, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
