package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordedRun copies a trimmed recorded run of bank-slow-vault from the
// report package's testdata into dir/name/run.json and returns that path.
func recordedRun(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "report", "testdata", "runs", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name, "run.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiffCommandLines(t *testing.T) {
	dir := t.TempDir()
	base1, base3 := recordedRun(t, dir, "base1"), recordedRun(t, dir, "base3")
	halved := recordedRun(t, dir, "halved1")
	baseDir, headDir := filepath.Join(dir, "bases"), filepath.Join(dir, "heads")
	recordedRun(t, baseDir, "base1")
	recordedRun(t, baseDir, "base2")
	recordedRun(t, headDir, "base4")
	recordedRun(t, headDir, "base5")
	jsonOut, mdOut := filepath.Join(dir, "d.json"), filepath.Join(dir, "d.md")
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"same code", []string{base1, base3}, exitOK, "no significant regression: 26 figures compared", ""},
		{"halved bulkhead", []string{"--json", jsonOut, "--markdown", mdOut, base1, halved}, exitBreach, "REGRESSION: 1 of 26 figures significantly worse", ""},
		{"halved bulkhead, assertions only", []string{"--assertions-only", base1, halved}, exitOK, "2 figures compared", ""},
		{"folders of repeated runs", []string{baseDir, headDir}, exitOK, "no significant regression", ""},
		{"no args", nil, exitUsage, "", "usage: chaosrun diff"},
		{"bad confidence", []string{"--confidence", "1.5", base1, base3}, exitUsage, "", "--confidence 1.5: allowed 0.5 to 0.9999"},
		{"missing record", []string{base1, filepath.Join(dir, "nope.json")}, exitRunError, "", "head: report: stat"},
		{"empty folder", []string{base1, t.TempDir()}, exitRunError, "", "no run.json below this folder"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"diff"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, want %d; stdout want %q:\n%s\nstderr want %q:\n%s", code, tc.code, tc.out, stdout, tc.err, stderr)
			}
		})
	}
	for _, f := range []string{jsonOut, mdOut} {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), "goodput TransactCash") {
			t.Errorf("%s: %v\n%s", f, err, b)
		}
	}
}
