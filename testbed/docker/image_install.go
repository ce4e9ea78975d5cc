package docker

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// linuxStatic is the environment of a build of the binary the images run:
// static, for Linux on this machine's architecture (Docker runs Linux
// containers, on macOS too).
var linuxStatic = []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + runtime.GOARCH}

// errNoModuleVersion: the binary is not a `go install …@VERSION` build, so
// there is no published source to build a static copy of it from.
var errNoModuleVersion = errors.New("not built from a published module version")

// installArgs are the go command's arguments that build a static copy of
// the main package path at a module version; errNoModuleVersion for a
// development build (no version, or a pseudo-version of a modified tree).
func installArgs(path, version string) ([]string, error) {
	if path == "" || version == "" || version == "(devel)" || strings.Contains(version, "+") {
		return nil, errNoModuleVersion
	}
	return []string{"install", "-trimpath", path + "@" + version}, nil
}

// installStatic builds a static chaosrun of exe's module version with
// `CGO_ENABLED=0 go install PATH@VERSION` (from the module proxy) into a
// folder of cacheDir, reusing an earlier build: how a chaosrun installed
// with cgo gets its image without a checkout.
func installStatic(ctx context.Context, exe, cacheDir string, progress io.Writer) (string, error) {
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		return "", fmt.Errorf("%w: %s has no Go build information: %v", errNoModuleVersion, exe, err)
	}
	args, err := installArgs(bi.Path, bi.Main.Version)
	if err != nil {
		return "", err
	}
	if runtime.GOOS != "linux" {
		// go install refuses a cross-compiled binary into GOBIN.
		return "", fmt.Errorf("docker: on %s the images need a Linux chaosrun, built from a checkout: run chaosrun from the repository (it cross-builds one)", runtime.GOOS)
	}
	dir := filepath.Join(cacheDir, "chaosrun-"+bi.Main.Version)
	out := filepath.Join(dir, filepath.Base(bi.Path))
	if ok, err := IsStatic(out); err == nil && ok {
		return out, nil
	}
	if progress != nil {
		fmt.Fprintf(progress, "docker: building a static chaosrun %s for the images (CGO_ENABLED=0 go %s)…\n", bi.Main.Version, strings.Join(args, " "))
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = cacheDir
	cmd.Env = append(os.Environ(), append(linuxStatic, "GOBIN="+dir, "GOWORK=off")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("docker: CGO_ENABLED=0 go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return out, nil
}
