package main

import (
	"encoding/json"
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
		{"only what changed", []string{base1, halved}, exitBreach, "25 figure(s) unchanged or not compared are not shown (--all shows them)", ""},
		{"all of it", []string{"--all", base1, halved}, exitBreach, "no significant change", ""},
		{"halved bulkhead, assertions only", []string{"--assertions-only", base1, halved}, exitOK, "2 figures compared", ""},
		{"folders of repeated runs", []string{baseDir, headDir}, exitOK, "no significant regression", ""},
		{"no args", nil, exitUsage, "", "usage: chaosrun diff"},
		{"bad confidence", []string{"--confidence", "1.5", base1, base3}, exitUsage, "", "--confidence 1.5: allowed 0.5 to 0.9999"},
		{"missing record", []string{base1, filepath.Join(dir, "nope.json")}, exitRunError, "", "chaosrun diff: head: stat "},
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
	if b, err := os.ReadFile(jsonOut); err == nil {
		if err := checkSchema(diffSchema, b); err != nil {
			t.Errorf("--json: %v", err)
		}
	}
}

// editedRun writes a copy of a recorded run with edit applied to its JSON
// fields, as dir/name/run.json, and returns that path.
func editedRun(t *testing.T, dir, from, name string, edit func(map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "report", "testdata", "runs", from+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
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

// TestReliabilityDiffRefusesWhatItCannotCompare: diff exits 0 only when it
// compared something. Before, records of two scenarios, an incomplete
// record and one without windows all passed with exit 0 ("no significant
// regression: 0 figures compared"). In-process, well under a second.
func TestReliabilityDiffRefusesWhatItCannotCompare(t *testing.T) {
	dir := t.TempDir()
	base := recordedRun(t, dir, "base1")
	other := editedRun(t, dir, "base3", "other", func(m map[string]any) { m["scenario"] = "kv-hot-key-flood" })
	incomplete := editedRun(t, dir, "base3", "incomplete", func(m map[string]any) {
		m["incomplete"], m["problems"] = true, []string{"k6: killed by signal 9"}
	})
	empty := editedRun(t, dir, "base3", "empty", func(m map[string]any) { m["windows"] = []any{} })
	short := editedRun(t, dir, "base3", "short", func(m map[string]any) { m["windows"] = m["windows"].([]any)[:2] })
	mixed := filepath.Join(dir, "mixed")
	recordedRun(t, mixed, "base4")
	editedRun(t, mixed, "base5", "b5", func(m map[string]any) { m["incomplete"] = true })
	tests := []struct {
		name      string
		base      string
		head      string
		code      int
		out, err  string
		extraArgs []string
	}{
		{name: "records of two scenarios", base: base, head: other, code: exitUsage,
			out: "NOTHING COMPARED", err: "no scenario has records on both sides (base: bank-slow-vault; head: kv-hot-key-flood)"},
		{name: "incomplete head", base: base, head: incomplete, code: exitRunError,
			err: "head: " + incomplete + ": record unusable for a comparison: the run of bank-slow-vault is incomplete (k6: killed by signal 9)"},
		{name: "incomplete base", base: incomplete, head: base, code: exitRunError, err: "base: " + incomplete},
		{name: "an incomplete record among repeated runs", base: base, head: mixed, code: exitRunError, err: "is incomplete"},
		{name: "no windows", base: base, head: empty, code: exitRunError, err: "holds no windows"},
		{name: "too short to compare anything", base: base, head: short, code: exitUsage,
			out: "NOTHING COMPARED: none of", err: "too short to tell noise"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append(append([]string{"diff"}, tc.extraArgs...), tc.base, tc.head)...)
			if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, want %d; stdout want %q:\n%s\nstderr want %q:\n%s", code, tc.code, tc.out, stdout, tc.err, stderr)
			}
		})
	}
}
