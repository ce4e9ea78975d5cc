package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReliabilityCommandServiceChildrenDie: a command: service whose
// program starts a child of its own. SIGKILL the harness mid-start-up: the
// program and its child die with it (the parent-death signal alone reaches
// only the program). About 5 s once k6 is built.
func TestReliabilityCommandServiceChildrenDie(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "bg.pid")
	file := filepath.Join(dir, "own-children.yaml")
	body := fmt.Sprintf(`version: 1
name: own-children
services:
  ledger:
    command: [sh, -c, "sleep 300 & echo $! > %s; exec %s serve ledger --listen 127.0.0.1:{port}"]
workload: {script: bank.js, duration: 30s, targets: [ledger]}
`, pidFile, chaosrunBinary(t))
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	bg := startChaosrun(t, "run", "--quiet", "--out-dir", t.TempDir(), file)
	var child int
	for deadline := time.Now().Add(5 * time.Minute); child == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if !running(bg.cmd.Process.Pid) {
			t.Fatalf("the run ended before its service started\n%s", bg.stderr.String())
		}
	}
	if child == 0 {
		t.Fatal("the service's program never started its child")
	}
	kids := descendants(bg.cmd.Process.Pid)
	kids[child] = "the program's own child"
	bg.cmd.Process.Kill() //nolint:errcheck
	<-bg.done
	assertAllEnd(t, kids, 5*time.Second)
}
