package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

func TestWriteAll(t *testing.T) {
	r := recorded(t, "base1")
	dir := t.TempDir()
	if err := WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range allFiles {
		if fi, err := os.Stat(filepath.Join(dir, f.name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f.name, err)
		}
	}
	back, err := record.ReadJSON(context.Background(), filepath.Join(dir, "run.json"))
	if err != nil || back.Scenario != r.Scenario {
		t.Errorf("run.json does not read back: %v", err)
	}
	// A folder that is a file: every write fails, and each says so.
	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = WriteAll(blocked, r)
	if err == nil {
		t.Fatal("WriteAll into a file: no error")
	}
	if n := len(strings.Split(err.Error(), "\n")); n != len(allFiles) {
		t.Errorf("want one failure per file, got %d:\n%v", n, err)
	}
}
