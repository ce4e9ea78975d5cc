package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/moby/moby/client"
)

// HostProgram is a program installed on this machine (from a Debian
// package) packed into a FROM scratch image with the shared libraries ldd
// names: a third-party service for bring-your-own-service scenarios, built
// here, never pulled.
type HostProgram struct {
	// Ref is the image reference scenarios name ("chaosrun-redis:local").
	Ref string
	// Binary is the program's path on this machine.
	Binary string
	// Package is the Debian package that installs it, for error messages.
	Package string
	// Entrypoint and Cmd are the image's.
	Entrypoint, Cmd []string
	// Port is the port the program listens on in its container.
	Port int
	// Dirs are empty folders the program needs (mode 1777).
	Dirs []string
}

// HostPrograms are the third-party images `chaosrun images` builds and the
// Docker testbed builds on demand when a scenario names them.
var HostPrograms = []HostProgram{{
	Ref:        "chaosrun-redis:local",
	Binary:     "/usr/bin/redis-server",
	Package:    "redis-server",
	Entrypoint: []string{"/usr/bin/redis-server"},
	Cmd:        []string{"--port", "6379", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no", "--dir", "/data"},
	Port:       6379,
	Dirs:       []string{"data", "tmp"},
}}

// FindHostProgram returns the host program image named ref.
func FindHostProgram(ref string) (HostProgram, bool) {
	for _, p := range HostPrograms {
		if p.Ref == ref {
			return p, true
		}
	}
	return HostProgram{}, false
}

var lddLine = regexp.MustCompile(`(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)`)

// sharedLibs lists the files the dynamic loader maps for binary (the
// loader itself included), as ldd reports them.
func sharedLibs(ctx context.Context, binary string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "ldd", binary).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", binary, err)
	}
	return parseLdd(string(out)), nil
}

// parseLdd extracts the library paths from ldd's output, sorted.
func parseLdd(out string) []string {
	seen := map[string]bool{}
	var libs []string
	for _, line := range strings.Split(out, "\n") {
		m := lddLine.FindStringSubmatch(line)
		if m == nil || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		libs = append(libs, m[1])
	}
	sort.Strings(libs)
	return libs
}

// Ensure returns the program's image, building it when it is missing or
// was built from other files.
func (p HostProgram) Ensure(ctx context.Context, cli *client.Client, progress io.Writer) (Image, error) {
	if _, err := exec.LookPath(p.Binary); err != nil {
		return Image{}, fmt.Errorf("docker: image %s needs %s on this machine (apt-get install %s): %w", p.Ref, p.Binary, p.Package, err)
	}
	libs, err := sharedLibs(ctx, p.Binary)
	if err != nil {
		return Image{}, fmt.Errorf("docker: image %s: %w", p.Ref, err)
	}
	files := map[string]string{"rootfs" + p.Binary: p.Binary}
	for _, l := range libs {
		files["rootfs"+l] = l // os.Open follows symlinks: the real file lands at the path the loader asks for
	}
	hash, err := fileHash(files)
	if err != nil {
		return Image{}, err
	}
	ep, _ := json.Marshal(p.Entrypoint)
	cmd, _ := json.Marshal(p.Cmd)
	df := fmt.Sprintf("FROM scratch\nCOPY rootfs/ /\nEXPOSE %d/tcp\nENTRYPOINT %s\nCMD %s\n", p.Port, ep, cmd)
	var dirs []string
	for _, d := range p.Dirs {
		dirs = append(dirs, filepath.Join("rootfs", d))
	}
	sum := sha256.Sum256([]byte(hash + "\x00" + df))
	hash = hex.EncodeToString(sum[:])[:12]
	return ensureImage(ctx, cli, buildSpec{ref: p.Ref, kind: "host:" + filepath.Base(p.Binary), hash: hash, files: files, dirs: dirs, dockerfile: df}, progress)
}
