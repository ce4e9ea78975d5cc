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
	s := &Starter{Name: "shop", Scenario: "version: 1\n", ScriptName: "shop.js", Script: "export default () => {}\n"}
	out := filepath.Join(t.TempDir(), "new")
	sp, jp, err := s.Write(out, false)
	if err != nil || sp != filepath.Join(out, "shop.yaml") || jp != filepath.Join(out, "shop.js") {
		t.Fatalf("Write = %q, %q, %v", sp, jp, err)
	}
	if b, _ := os.ReadFile(sp); string(b) != s.Scenario {
		t.Errorf("scenario file holds %q", b)
	}
	s.Scenario = "version: 2\n"
	_, _, err = s.Write(out, false)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), sp+" exists (--force overwrites it)") {
		t.Errorf("second write: %v, want one saying %s exists", err, sp)
	}
	if b, _ := os.ReadFile(sp); string(b) != "version: 1\n" {
		t.Errorf("a refused write changed the file: %q", b)
	}
	if _, _, err := s.Write(out, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(sp); string(b) != s.Scenario {
		t.Errorf("forced write left %q", b)
	}
}
