package buildinfo

import (
	"bytes"
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
