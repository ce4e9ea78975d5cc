package k8s

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// TestExportCommand: export k8s's command line, from its flags to its
// exit code: the manifests on stdout or in --out's folder; a scenario a
// cluster cannot run, or bad flags, exit 2 and write nothing.
func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file, stdout, msg string
		set                     func(*Flags)
		code                    int
	}{
		{"on stdout", "catalog:bank-slow-vault", "name: chaosrun-load", "Job chaosrun-judge judges the run", nil, exitcode.OK},
		{"into a folder", "catalog:bank-slow-vault", "wrote " + filepath.Join("out", "bank-slow-vault.yaml"), "", func(f *Flags) { f.Out = "out" }, exitcode.OK},
		{"a missing scenario", "missing.yaml", "", "missing.yaml", nil, exitcode.Usage},
		{"host faults", "catalog:bank-outlier-pause", "", "edge faults only", nil, exitcode.Usage},
		{"a missing CA", "catalog:bank-slow-vault", "", "--results-ca", func(f *Flags) { f.ResultsAddr, f.CA = "h:1", "ca.pem" }, exitcode.Usage},
		{"bad parallelism", "catalog:bank-slow-vault", "", "parallelism 0 out of range", func(f *Flags) { f.Parallelism = 0 }, exitcode.Usage},
	}
	getenv := func(string) string { return "" }
	l := scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: dir}, K6: k6build.Options{Getenv: getenv, Dir: dir}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := DefaultFlags()
			if tt.set != nil {
				tt.set(&f)
			}
			var stdout, stderr bytes.Buffer
			err := f.Export(context.Background(), l, &stdout, &stderr, tt.file)
			code, said := exitcode.OK, stderr.String()
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
				if ee.Err != nil {
					said += ee.Err.Error()
				}
			}
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(said, tt.msg) {
				t.Fatalf("exit %d, stdout %.200q, said %q; want %d, %q, %q", code, stdout.String(), said, tt.code, tt.stdout, tt.msg)
			}
			if code != exitcode.OK && stdout.Len() > 0 {
				t.Errorf("a refused export wrote %.200q", stdout.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "bank-slow-vault.yaml")); err != nil {
		t.Error(err)
	}
}
