package resilience

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestVersionHasOneSource: Version is a release version, written where
// `make extension-tags` reads it, and everything the README says of the
// version agrees with it; go.mod builds by version as it builds here (no
// replace, which a module built by version ignores).
func TestVersionHasOneSource(t *testing.T) {
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(Version) {
		t.Fatalf("Version %q is not vMAJOR.MINOR.PATCH: the tag xk6-resilience/%s would not be a Go module version", Version, Version)
	}
	src, err := os.ReadFile("resilience.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "\nconst Version = \""+Version+"\"\n") {
		t.Error(`resilience.go must declare const Version = "vX.Y.Z" on one line: make extension-tags reads it`)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`"extension":"(v[^"]*)"`),
		regexp.MustCompile(`xk6-resilience@(v[0-9][^\s]*)`),
	} {
		found := re.FindAllStringSubmatch(string(readme), -1)
		if len(found) == 0 {
			t.Errorf("README.md has no %s", re)
		}
		for _, m := range found {
			if m[1] != Version {
				t.Errorf("README.md says %s; the extension's Version is %s", m[0], Version)
			}
		}
	}
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s*replace\b`).Match(mod) {
		t.Error("go.mod has a replace directive: built by version it would build something else; use a go.work")
	}
	// A go.work that points the models module at the repository's copy
	// names the version go.mod requires: the one to tag models/vA.B.C.
	work, err := os.ReadFile("go.work")
	if err != nil {
		return
	}
	required := regexp.MustCompile(`github\.com/chaosrun/chaosrun/models (v\S+)`).FindSubmatch(mod)
	for _, m := range regexp.MustCompile(`replace github\.com/chaosrun/chaosrun/models (v\S+) =>`).FindAllSubmatch(work, -1) {
		if required == nil || string(m[1]) != string(required[1]) {
			t.Errorf("go.work replaces models %s; go.mod requires %q", m[1], required)
		}
	}
}
