package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/workloads/k6build"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// Release builds set these with -ldflags "-X main.releaseVersion=v1.2.3
// -X main.releaseCommit=SHA -X main.releaseDate=RFC3339" (see
// .goreleaser.yaml); other builds leave them empty and the Go toolchain's
// build information (module version, VCS stamp) serves.
var releaseVersion, releaseCommit, releaseDate string

// buildInfo is what this binary knows of its own build.
type buildInfo struct {
	Version   string // v1.2.3, a pseudo-version, or "dev"
	Commit    string // VCS revision; "" when not recorded
	Modified  bool   // built from a working tree with uncommitted changes
	Time      string // commit (or release) time; "" when not recorded
	Module    string // module path and version
	Go        string
	Toxiproxy string // the embedded Toxiproxy's module version
}

// readBuildInfo reads the ldflags values and debug.ReadBuildInfo.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: "dev", Go: runtime.Version(), Toxiproxy: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if ok {
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

// version is this build's version, as run records carry it.
func version() string { return readBuildInfo().Version }

// print writes the version report.
func (b buildInfo) print(st *State) {
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
	fmt.Fprintf(st.Stdout, "chaosrun %s\n", b.Version)
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
			fmt.Fprintf(st.Stdout, "  %-10s %s\n", r[0], r[1])
		}
	}
}

func newVersionCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print chaosrun's version and commit, and the versions of k6 and Toxiproxy",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { readBuildInfo().print(st) },
	}
}
