package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

func TestDiffSettingsOptions(t *testing.T) {
	tests := []struct {
		name    string
		set     func(*DiffSettings)
		wantErr string
	}{
		{"defaults", func(*DiffSettings) {}, ""},
		{"assertions only drops the key figures", func(f *DiffSettings) { f.AssertionsOnly = true }, ""},
		{"too few iterations", func(f *DiffSettings) { f.Iterations = 99 }, "--iterations 99: allowed 100 to 100000"},
		{"confidence too low", func(f *DiffSettings) { f.Confidence = 0.4 }, "--confidence 0.4: allowed 0.5 to 0.9999"},
		{"block too long", func(f *DiffSettings) { f.Block = 61 }, "--block 61: allowed 1 to 60 seconds"},
		{"a negative minimum", func(f *DiffSettings) { f.MinRate = -0.1 }, "--min-* flags must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := DefaultDiffSettings()
			tt.set(&f)
			o, err := f.Options()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Iterations != 2000 || o.Confidence != 0.99 || o.NoKeyFigures != f.AssertionsOnly {
				t.Errorf("options %+v from %+v", o, f)
			}
		})
	}
}

// TestDiffCommand: diff's command line, from its flags to its exit code:
// 0 nothing regressed, 1 a regression (the files still written), 2 bad
// flags, 3 a record that cannot be read.
func TestDiffCommand(t *testing.T) {
	runs, err := filepath.Abs(filepath.Join("testdata", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	wd := workdir.FS{FS: os.DirFS("/"), Dir: runs}
	files := func(out string, f *DiffSettings) {
		f.JSON, f.Markdown = filepath.Join(out, "d.json"), filepath.Join(out, "d.md")
	}
	tests := []struct {
		name       string
		set        func(out string, f *DiffSettings)
		base, head string
		code       int
		stdout     string
	}{
		{"same code", nil, "base1.json", "base3.json", exitcode.OK, "no significant regression: 26 figures compared"},
		{"halved bulkhead", files, "base1.json", "halved1.json", exitcode.Breach, "REGRESSION: 1 of 26 figures significantly worse"},
		{"bad confidence", func(_ string, f *DiffSettings) { f.Confidence = 1.5 }, "base1.json", "base3.json", exitcode.Usage, ""},
		{"a missing record", nil, "base1.json", "nope.json", exitcode.RunError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			f := DefaultDiffSettings()
			if tt.set != nil {
				tt.set(out, &f)
			}
			var stdout bytes.Buffer
			err := f.Diff(context.Background(), wd, &stdout, tt.base, tt.head)
			code := exitcode.OK
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
			}
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) {
				t.Fatalf("exit %d (%v), want %d; stdout %q, want %q", code, err, tt.code, stdout.String(), tt.stdout)
			}
			for _, p := range []string{f.JSON, f.Markdown} {
				if _, err := os.Stat(p); p != "" && err != nil {
					t.Error(err)
				}
			}
		})
	}
}
