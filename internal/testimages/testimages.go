// Package testimages builds the third-party images the Compose project
// tests run (PostgreSQL, Redis, nginx) from the Debian packages installed
// on this machine, never from a registry: each program is copied with the
// shared libraries ldd names, its data files and a few generated files
// (users, configuration) into a FROM scratch image.
//
// The images carry the tags teams use for such images with a -local
// suffix (postgres-local:15-bookworm, redis-local:7-bookworm,
// nginx-local:1.22-bookworm). They are built on first use and reused while
// their content (keyed by a hash of every file) is unchanged, so tests
// share them; no test removes them. They are labelled as chaosrun's images
// (`chaosrun images --list` shows them): `chaosrun images --prune` removes
// them with every other chaosrun image no container uses, or remove them
// by name (docker rmi with Refs).
package testimages

import (
	"context"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/moby/moby/client"
)

// The images' references.
const (
	PostgresRef = "postgres-local:15-bookworm"
	RedisRef    = "redis-local:7-bookworm"
	NginxRef    = "nginx-local:1.22-bookworm"
)

// Refs are every image this package builds.
var Refs = []string{PostgresRef, RedisRef, NginxRef}

// recipe is one image: host programs (with their libraries), host folders
// copied whole, generated files and a Dockerfile whose context holds them
// all under rootfs/.
type recipe struct {
	ref string
	// pkg names the Debian packages the files come from, for errors.
	pkg string
	// programs are host executables; libs are dlopen'ed libraries. Both
	// are copied at their own path with what ldd names for them.
	programs, libs []string
	// files maps an image path to a host file.
	files map[string]string
	// trees are host folders copied whole at their own path.
	trees []string
	// generated maps an image path to its content.
	generated  map[string]string
	dockerfile string
}

// Ensure builds (or reuses) every image; root is the module's root folder
// (the PostgreSQL image's entrypoint is built from its source there).
func Ensure(ctx context.Context, cli *client.Client, root string, progress io.Writer) ([]docker.Image, error) {
	var out []docker.Image
	for _, build := range []func(context.Context, *client.Client, string, io.Writer) (docker.Image, error){Postgres, Redis, Nginx} {
		img, err := build(ctx, cli, root, progress)
		if err != nil {
			return out, err
		}
		out = append(out, img)
	}
	return out, nil
}

// build packs r into a build context and builds it, or reuses the image
// built from the same content.
func (r recipe) build(ctx context.Context, cli *client.Client, progress io.Writer) (docker.Image, error) {
	tmp, err := os.MkdirTemp("", "testimages-")
	if err != nil {
		return docker.Image{}, err
	}
	defer os.RemoveAll(tmp)
	files, err := r.contextFiles(ctx, tmp)
	if err != nil {
		return docker.Image{}, fmt.Errorf("testimages: %s (from Debian's %s): %w", r.ref, r.pkg, err)
	}
	img, err := docker.LocalImage(ctx, cli, r.ref, files, r.dockerfile, progress)
	if err != nil {
		return docker.Image{}, fmt.Errorf("testimages: %w", err)
	}
	return img, nil
}

// contextFiles maps every build-context path to the host file it copies;
// generated files are written under tmp.
func (r recipe) contextFiles(ctx context.Context, tmp string) (map[string]string, error) {
	files := map[string]string{}
	for dst, src := range r.files {
		files["rootfs"+dst] = src
	}
	needLibs := append([]string(nil), r.programs...)
	needLibs = append(needLibs, r.libs...)
	for _, p := range needLibs {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%w (apt-get install %s)", err, r.pkg)
		}
		files["rootfs"+p] = p
	}
	for _, t := range r.trees {
		if err := addTree(files, t); err != nil {
			return nil, err
		}
	}
	libs, err := sharedLibs(needLibs)
	if err != nil {
		return nil, err
	}
	for _, l := range libs {
		files["rootfs"+l] = l
	}
	for i, dst := range sortedKeys(r.generated) {
		host := filepath.Join(tmp, fmt.Sprintf("gen-%d", i))
		if err := os.WriteFile(host, []byte(r.generated[dst]), 0o644); err != nil {
			return nil, err
		}
		files["rootfs"+dst] = host
	}
	return files, nil
}

// addTree adds every regular file under dir (symlinks followed).
func addTree(files map[string]string, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return nil //nolint:nilerr // a dangling link or a special file is not part of the image
		}
		files["rootfs"+p] = p
		return nil
	})
}

// libDirs are the folders the dynamic loader searches on Debian amd64.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib"}

// sharedLibs lists, sorted, the libraries the dynamic loader maps for each
// of paths, the loader itself included: what ldd reports, read from the
// ELF files (DT_NEEDED, RUNPATH, PT_INTERP) without running them.
func sharedLibs(paths []string) ([]string, error) {
	seen := map[string]bool{}
	queue := append([]string(nil), paths...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		needed, interp, dirs, err := elfDeps(p)
		if err != nil {
			return nil, err
		}
		if interp != "" && !seen[interp] {
			seen[interp] = true
		}
		for _, n := range needed {
			lib := findLib(n, dirs)
			if lib == "" {
				return nil, fmt.Errorf("%s needs %s, found in none of %v", p, n, append(dirs, libDirs...))
			}
			if !seen[lib] {
				seen[lib] = true
				queue = append(queue, lib)
			}
		}
	}
	return sortedKeys(seen), nil
}

// elfDeps reads the libraries path needs, its loader and its RUNPATH.
func elfDeps(path string) (needed []string, interp string, dirs []string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, "", nil, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return nil, "", nil, fmt.Errorf("%s: %w", path, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if needed, err = f.ImportedLibraries(); err != nil {
		return nil, "", nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		vals, _ := f.DynString(tag)
		for _, v := range vals {
			for _, d := range strings.Split(v, ":") {
				dirs = append(dirs, strings.ReplaceAll(d, "$ORIGIN", filepath.Dir(path)))
			}
		}
	}
	return needed, interp, dirs, nil
}

// findLib returns the first file named name in dirs then libDirs.
func findLib(name string, dirs []string) string {
	for _, d := range append(dirs, libDirs...) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
