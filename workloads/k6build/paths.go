// Package k6build finds or builds the k6 binary with the xk6-resilience
// extension, caching it by k6 version and extension source hash.
package k6build

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Pinned versions and module paths.
const (
	K6Version       = "v1.8.1"
	XK6Version      = "v0.13.3"
	RootModule      = "github.com/chaosrun/chaosrun"
	ExtensionModule = RootModule + "/xk6-resilience"
	// ModelsModule is the models module the extension requires by version;
	// the build replaces it with the repository's copy.
	ModelsModule = RootModule + "/models"
	// ExtensionDir is the extension's folder under the repository root.
	ExtensionDir = "xk6-resilience"
	// ModelsDir is the models module's folder under the repository root,
	// beside the extension's.
	ModelsDir = "models"
	// XK6ToolsDir is the tools module under the repository root that pins xk6.
	XK6ToolsDir = "tools/xk6"
)

// FindRoot walks up from dir to the folder whose go.mod declares the module
// github.com/chaosrun/chaosrun.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		mod, err := modulePath(filepath.Join(d, "go.mod"))
		if err == nil && mod == RootModule {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod with module %s in %s or any folder above it (set CHAOSRUN_ROOT to the repository root)", RootModule, dir)
		}
		d = parent
	}
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// SourceHash is the first 12 hex digits of a SHA-256 over the sources a
// k6 build takes from the repository: the extension's go.mod, go.sum and
// non-test .go files, and those of the models module beside it (ModelsDir,
// when there is one), each fed as its slash path (the models' under
// "models/"), a NUL, its bytes and a NUL, sorted by path. Testdata and
// hidden folders are left out.
func SourceHash(extDir string) (string, error) {
	files, err := sourceFiles(extDir, "")
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("hash extension sources: no go.mod or .go files in %s", extDir)
	}
	models := filepath.Join(filepath.Dir(extDir), ModelsDir)
	if fi, err := os.Stat(models); err == nil && fi.IsDir() {
		more, err := sourceFiles(models, ModelsDir+"/")
		if err != nil {
			return "", err
		}
		files = append(files, more...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return "", fmt.Errorf("hash extension sources: %w", err)
		}
		h.Write([]byte(f.rel))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// source is one hashed file: its path and the name it is hashed under.
type source struct{ path, rel string }

// sourceFiles lists a module folder's go.mod, go.sum and non-test .go
// files, named prefix + their slash path in it.
func sourceFiles(dir, prefix string) ([]source, error) {
	var files []source
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if name == "go.mod" || name == "go.sum" || (strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			files = append(files, source{path: p, rel: prefix + filepath.ToSlash(rel)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash extension sources in %s: %w", dir, err)
	}
	return files, nil
}

// RepoRoot is the repository root: Root, else CHAOSRUN_ROOT, else the
// go.mod found above Dir.
func (o Options) RepoRoot() (string, error) {
	root := o.Root
	if root == "" {
		root = o.getenv("CHAOSRUN_ROOT")
	}
	if root == "" {
		return FindRoot(o.abs("."))
	}
	abs, err := filepath.Abs(o.abs(root))
	if err != nil {
		return "", err
	}
	if mod, err := modulePath(filepath.Join(abs, "go.mod")); err != nil || mod != RootModule {
		return "", fmt.Errorf("root %s: want a go.mod with module %s there (got %q, %v)", abs, RootModule, mod, err)
	}
	return abs, nil
}

// Cache is the cache folder, created if missing: CacheDir, else
// CHAOSRUN_CACHE, else the user cache folder's chaosrun.
func (o Options) Cache() (string, error) {
	dir := o.CacheDir
	if dir == "" {
		dir = o.getenv("CHAOSRUN_CACHE")
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache folder: set CHAOSRUN_CACHE: %w", err)
		}
		dir = filepath.Join(base, "chaosrun")
	}
	abs, err := filepath.Abs(o.abs(dir))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("cache folder %s: %w", abs, err)
	}
	return abs, nil
}

// CachedK6 is where Ensure keeps the k6 of the repository's current
// extension source, whether it is built yet or not.
func (o Options) CachedK6() (string, error) {
	root, err := o.RepoRoot()
	if err != nil {
		return "", err
	}
	hash, err := SourceHash(filepath.Join(root, ExtensionDir))
	if err != nil {
		return "", err
	}
	cache, err := o.Cache()
	if err != nil {
		return "", err
	}
	return cachedK6(cache, hash), nil
}

func cachedK6(cache, hash string) string {
	return filepath.Join(cache, "k6-"+K6Version+"-"+hash)
}

func (o Options) getenv(key string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(key)
}

// abs resolves p against Dir; with Dir unset p stays as it is.
func (o Options) abs(p string) string {
	if o.Dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(o.Dir, p)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

var errNoExtension = errors.New("k6 binary lacks the xk6-resilience extension")
