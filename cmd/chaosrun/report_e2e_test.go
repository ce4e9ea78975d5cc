package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
)

// shortScenario is bank-slow-vault cut to 12 s of load with the vault slowed
// for 4 s, under another name.
func shortScenario(t *testing.T, dir, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "scenarios", "bank-slow-vault.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, r := range [][2]string{{"name: bank-slow-vault", "name: " + name}, {"duration: 60s", "duration: 12s"},
		{"start: 20s", "start: 4s"}, {"duration: 20s", "duration: 4s"}} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("bank-slow-vault.yaml no longer has %q; update this test", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunFolderCombinedReport runs a folder of two short scenarios and checks
// the per-scenario and combined reports; then the same folder under a total
// time bound that ends the first scenario.
func TestRunFolderCombinedReport(t *testing.T) {
	robustEndToEnd(t)
	dir := t.TempDir()
	shortScenario(t, dir, "combo-a")
	shortScenario(t, dir, "combo-b")

	res := runChaosrun(t, 4*time.Minute, "--quiet", "--total-timeout", "3m", dir)
	// The scenario's p99 bound can breach on a loaded machine: a breach
	// still writes every report.
	if res.code != exitOK && res.code != exitBreach {
		t.Fatalf("exit code %d\nstderr:\n%s", res.code, res.stderr)
	}
	var total int64
	for _, f := range []string{"index.html", "summary.md", "junit.xml",
		"combo-a/run.json", "combo-a/report.html", "combo-a/summary.md", "combo-a/junit.xml",
		"combo-b/run.json", "combo-b/report.html", "combo-b/summary.md", "combo-b/junit.xml"} {
		fi, err := os.Stat(filepath.Join(res.outDir, f))
		if err != nil {
			t.Error(err)
			continue
		}
		total += fi.Size()
	}
	if total > 5<<20 {
		t.Errorf("reports of two 12 s runs take %d bytes; the catalog's must stay under 5 MB", total)
	}
	idx, _ := os.ReadFile(filepath.Join(res.outDir, "index.html"))
	for _, want := range []string{`href="combo-a/report.html"`, `href="combo-b/report.html"`} {
		if !strings.Contains(string(idx), want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(res.outDir, "summary.md"))
	if !strings.HasPrefix(string(sum), "# ") || !strings.Contains(string(sum), "| combo-a |") || !strings.Contains(string(sum), "### Key figures") {
		t.Errorf("combined summary.md:\n%s", sum)
	}
	page, _ := os.ReadFile(filepath.Join(res.outDir, "combo-a", "report.html"))
	if n := strings.Count(string(page), "<svg"); n < 4 {
		t.Errorf("combo-a/report.html has %d plots, want at least 4 (latency per API, rate, rejections)", n)
	}
	xmllint := testenv.Tool(t, "xmllint", "libxml2-utils")
	if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join(repoRoot(t), "report", "testdata", "junit.xsd"),
		filepath.Join(res.outDir, "junit.xml")).CombinedOutput(); err != nil {
		t.Errorf("combined junit.xml does not validate: %v\n%s", err, out)
	}

	// A total bound shorter than one scenario: the first is cut, the second
	// never starts, the exit code is a run error and a combined report lists
	// what ran.
	res = runChaosrun(t, 3*time.Minute, "--quiet", "--total-timeout", "6s", dir)
	if res.code != exitRunError || !strings.Contains(res.stderr, "--total-timeout 6s reached in combo-a") {
		t.Fatalf("exit code %d, want %d and the bound named\nstderr:\n%s", res.code, exitRunError, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(res.outDir, "combo-b")); err == nil {
		t.Error("combo-b ran after the total bound")
	}
	if _, err := os.Stat(filepath.Join(res.outDir, "index.html")); err != nil {
		t.Error(err)
	}
}
