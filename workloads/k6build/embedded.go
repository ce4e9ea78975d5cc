package k6build

import (
	"archive/zip"
	"bytes"
	_ "embed" // the build's sources
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/chaosrun/chaosrun/internal/unpack"
)

// sourceZip holds what a k6 build takes from the repository, so that an
// installed binary builds k6 without a checkout: the extension
// (ExtensionDir), the models module (ModelsDir) and the tools module that
// pins xk6 (XK6ToolsDir), their go.mod, go.sum and non-test .go files at
// their paths under the repository root. The Go module of the harness
// cannot embed them where they are (each is a module of its own), so this
// copy is kept current by TestEmbeddedSources (-update rewrites it).
//
//go:embed source.zip
var sourceZip []byte

// Embedded is the k6 build's sources as this binary carries them, laid out
// as in the repository.
func Embedded() (fs.FS, error) {
	r, err := zip.NewReader(bytes.NewReader(sourceZip), int64(len(sourceZip)))
	if err != nil {
		return nil, fmt.Errorf("the k6 build's embedded sources: %w", err)
	}
	return r, nil
}

// Checkout is the repository a build takes its sources from: Root, else
// CHAOSRUN_ROOT (an error when it is not the repository), else the one
// found above Dir. It is "" without one (an installed binary): the
// sources embedded in the binary serve then.
func (o Options) Checkout() (string, error) {
	if o.Root != "" || o.getenv("CHAOSRUN_ROOT") != "" {
		return o.RepoRoot()
	}
	if root, err := FindRoot(o.abs(".")); err == nil {
		return root, nil
	}
	return "", nil
}

// Sources is the folder a build takes the extension, the models module and
// the xk6 tools module from: the sources embedded in this binary, unpacked
// once into the cache, when there is no checkout or the checkout holds the
// same files (so that every build, the test suite's too, builds what an
// installed binary builds, at no cost: the cached k6 is named by the same
// hash); the checkout's while they are being changed.
func (o Options) Sources() (string, error) {
	root, err := o.Checkout()
	if err != nil {
		return "", err
	}
	fsys, err := Embedded()
	if err != nil {
		return "", err
	}
	if root != "" && !sameSources(os.DirFS(root), fsys) {
		return root, nil
	}
	cache, err := o.Cache()
	if err != nil {
		return "", err
	}
	return unpack.Tree(fsys, cache, "src")
}

// sameSources reports whether the repository in repo holds exactly the
// build's sources that embedded holds, file for file.
func sameSources(repo, embedded fs.FS) bool {
	n := 0
	for _, dir := range []string{ExtensionDir, ModelsDir, XK6ToolsDir} {
		srcs, err := sourceFiles(repo, dir, dir+"/")
		if err != nil {
			return false
		}
		for _, s := range srcs {
			a, err := fs.ReadFile(repo, s.path)
			if err != nil {
				return false
			}
			if b, err := fs.ReadFile(embedded, s.rel); err != nil || !bytes.Equal(a, b) {
				return false
			}
			n++
		}
	}
	all := 0
	err := fs.WalkDir(embedded, ".", func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			all++
		}
		return err
	})
	return err == nil && all == n
}

// sourceHash is the SourceHash of the sources a build would take: the
// checkout's, else the embedded ones (read in place, not unpacked).
func (o Options) sourceHash() (string, error) {
	root, err := o.Checkout()
	if err != nil {
		return "", err
	}
	if root != "" {
		return SourceHash(filepath.Join(root, ExtensionDir))
	}
	fsys, err := Embedded()
	if err != nil {
		return "", err
	}
	return sourceHash(fsys, ExtensionDir, "the sources embedded in this binary")
}
