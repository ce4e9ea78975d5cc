package compose

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStarterWrite: the files go into the folder (made when missing); a
// second write is refused, as fs.ErrExist, and leaves the files alone;
// force overwrites them.
func TestStarterWrite(t *testing.T) {
	s := &Starter{Name: "shop", Scenario: "version: 1\n"}
	out := filepath.Join(t.TempDir(), "new")
	sp, err := s.Write(out, false)
	if err != nil || sp != filepath.Join(out, "shop.yaml") {
		t.Fatalf("Write = %q, %v", sp, err)
	}
	if b, _ := os.ReadFile(sp); string(b) != s.Scenario {
		t.Errorf("scenario file holds %q", b)
	}
	s.Scenario = "version: 2\n"
	_, err = s.Write(out, false)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), sp+" exists (--force overwrites it)") {
		t.Errorf("second write: %v, want one saying %s exists", err, sp)
	}
	if b, _ := os.ReadFile(sp); string(b) != "version: 1\n" {
		t.Errorf("a refused write changed the file: %q", b)
	}
	if _, err := s.Write(out, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(sp); string(b) != s.Scenario {
		t.Errorf("forced write left %q", b)
	}
}
