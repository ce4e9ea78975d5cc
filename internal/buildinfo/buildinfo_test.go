package buildinfo

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

// TestReleaseStamp: the values a release build stamps win over the Go
// toolchain's, and the report shows them.
func TestReleaseStamp(t *testing.T) {
	if b := Read(); b.Version == "" || b.Go == "" {
		t.Fatalf("unstamped build: %+v, want a version (dev at least) and Go", b)
	}
	releaseVersion, releaseCommit, releaseDate = "v9.8.7", "abc123", "2026-01-02T03:04:05Z"
	t.Cleanup(func() { releaseVersion, releaseCommit, releaseDate = "", "", "" })
	b := Read()
	if b.Version != "v9.8.7" || b.Commit != "abc123" || b.Time != "2026-01-02T03:04:05Z" || Version() != "v9.8.7" {
		t.Fatalf("stamped build: %+v", b)
	}
	var out bytes.Buffer
	b.Print(&out)
	for _, want := range []string{"chaosrun v9.8.7\n", "  commit     abc123", "  built      2026-01-02T03:04:05Z", "  toxiproxy "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestFromBuildInfo: what `chaosrun version` says for each kind of build
// the Go toolchain describes: `go install …@v1.2.3` (a module version, no
// VCS stamp), a build in a clone (devel, with vcs.* settings, modified or
// not), one without VCS information, and a binary with no build
// information at all.
func TestFromBuildInfo(t *testing.T) {
	deps := []*debug.Module{{Path: "github.com/Shopify/toxiproxy/v2", Version: "v2.12.0"}}
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-03-04T05:06:07Z"}, {Key: "vcs.modified", Value: modified}}
	}
	main := func(v string) debug.Module { return debug.Module{Path: "github.com/chaosrun/chaosrun", Version: v} }
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want []string // lines of the report
	}{
		{"go install at a version", &debug.BuildInfo{Main: main("v1.2.3"), Deps: deps},
			[]string{"chaosrun v1.2.3", "  commit     not recorded (a module build: its version names the source)", "  module     github.com/chaosrun/chaosrun v1.2.3", "  toxiproxy  v2.12.0 (embedded)"}},
		{"a pseudo-version with its revision", &debug.BuildInfo{Main: main("v0.0.0-20260304050607-0123456789ab"), Deps: deps, Settings: vcs("0123456789abcdef", "false")},
			[]string{"chaosrun v0.0.0-20260304050607-0123456789ab", "  commit     0123456789abcdef", "  built      2026-03-04T05:06:07Z"}},
		{"a clone, modified", &debug.BuildInfo{Main: main("(devel)"), Deps: deps, Settings: vcs("fedcba9876543210", "true")},
			[]string{"chaosrun dev", "  commit     fedcba9876543210 (modified: uncommitted changes)", "  module     github.com/chaosrun/chaosrun (devel)"}},
		{"devel without VCS", &debug.BuildInfo{Main: main("(devel)")},
			[]string{"chaosrun dev", "  commit     not recorded (built with -buildvcs=false, in a go.work workspace, or outside git)", "  toxiproxy  unknown (embedded)"}},
		{"no build information", nil,
			[]string{"chaosrun dev", "  commit     not recorded (built with -buildvcs=false", "  toxiproxy  unknown (embedded)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			fromBuildInfo(tc.bi, tc.bi != nil).Print(&out)
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, out.String())
				}
			}
			if tc.bi == nil && strings.Contains(out.String(), "  module ") {
				t.Errorf("a module line without build information:\n%s", out.String())
			}
		})
	}
}
