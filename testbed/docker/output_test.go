package docker

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestRemovedReport: a line per object, "would remove" on a dry run, runs
// left alone named, and a line saying so when nothing was left.
func TestRemovedReport(t *testing.T) {
	var b bytes.Buffer
	Removed{Containers: []string{"c1 (run r1, scenario s)"}, Networks: []string{"n1"}, Skipped: []string{"r2"}}.Report(&b, true)
	want := "would remove container c1 (run r1, scenario s)\nwould remove network n1\nleft run r2 alone: its harness still runs (--all removes it too)\n"
	if b.String() != want {
		t.Errorf("dry run:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	Removed{}.Report(&b, false)
	if b.String() != "nothing left behind by chaosrun runs\n" {
		t.Errorf("nothing to remove: %q", b.String())
	}
}

// TestWriteImages: a header and a row per image, the ID without its
// algorithm and cut to 12 characters, the size in MB.
func TestWriteImages(t *testing.T) {
	var b bytes.Buffer
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	WriteImages(&b, []Image{{Ref: "chaosrun:abc", Kind: "chaosrun", ID: "sha256:0123456789abcdef", Size: 12_300_000, Created: at}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "IMAGE") {
		t.Fatalf("table:\n%s", b.String())
	}
	for _, want := range []string{"chaosrun:abc", "0123456789ab ", "12.3M", "2026-01-02 03:04:05"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q lacks %q", lines[1], want)
		}
	}
}
