// Package buildinfo is what a chaosrun binary knows of its own build:
// version, commit, Go, and the versions of what it embeds or builds.
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/chaosrun/chaosrun/workloads/k6build"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// Release builds set these with -ldflags "-X $PKG.releaseVersion=v1.2.3
// -X $PKG.releaseCommit=SHA -X $PKG.releaseDate=RFC3339", $PKG being
// github.com/chaosrun/chaosrun/internal/buildinfo (see
// .goreleaser.yaml); other builds leave them empty and the Go toolchain's
// build information (module version, VCS stamp) serves.
var releaseVersion, releaseCommit, releaseDate string

// Info is what this binary knows of its own build.
type Info struct {
	Version   string // v1.2.3, a pseudo-version, or "dev"
	Commit    string // VCS revision; "" when not recorded
	Modified  bool   // built from a working tree with uncommitted changes
	Time      string // commit (or release) time; "" when not recorded
	Module    string // module path and version
	Go        string
	Toxiproxy string // the embedded Toxiproxy's module version
}

// Read reads the ldflags values and debug.ReadBuildInfo.
func Read() Info { return fromBuildInfo(debug.ReadBuildInfo()) }

// fromBuildInfo is what the Go toolchain's build information bi says
// (ok: there is some), with the ldflags values over it.
func fromBuildInfo(bi *debug.BuildInfo, ok bool) Info {
	b := Info{Version: "dev", Go: runtime.Version(), Toxiproxy: "unknown"}
	if ok && bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
		b.Module = bi.Main.Path + " " + bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "vcs.time":
				b.Time = s.Value
			}
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/Shopify/toxiproxy/v2" {
				b.Toxiproxy = d.Version
			}
		}
	}
	for dst, v := range map[*string]string{&b.Version: releaseVersion, &b.Commit: releaseCommit, &b.Time: releaseDate} {
		if v != "" {
			*dst = v
		}
	}
	return b
}

// Version is this build's version, as run records carry it.
func Version() string { return Read().Version }

// Print writes the version report, as `chaosrun version` prints it.
func (b Info) Print(w io.Writer) {
	commit := "not recorded (a module build: its version names the source)"
	if b.Version == "dev" {
		commit = "not recorded (built with -buildvcs=false, in a go.work workspace, or outside git)"
	}
	if b.Commit != "" {
		commit = b.Commit
		if b.Modified {
			commit += " (modified: uncommitted changes)"
		}
	}
	fmt.Fprintf(w, "chaosrun %s\n", b.Version)
	rows := [][2]string{
		{"commit", commit},
		{"built", b.Time},
		{"module", b.Module},
		{"go", b.Go + " " + runtime.GOOS + "/" + runtime.GOARCH},
		{"load", native.Version + " (the native engine, built in: the default)"},
		{"k6", k6build.K6Version + " with xk6-resilience, for engine: k6 (a separate program, built on first use)"},
		{"toxiproxy", b.Toxiproxy + " (embedded)"},
	}
	for _, r := range rows {
		if r[1] != "" {
			fmt.Fprintf(w, "  %-10s %s\n", r[0], r[1])
		}
	}
}
