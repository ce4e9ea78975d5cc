package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// omissionScenario runs testdata/k6/SCRIPT against origin, a server
// started elsewhere (external:), whose edge from the load turns 600 ms
// slow from 4 s to 9 s of 12 s; its latency check during the fault holds
// either way.
func omissionScenario(t *testing.T, name, script, origin string) string {
	t.Helper()
	dir := scriptDir(t, script)
	yaml := fmt.Sprintf(`version: 1
name: %s
services:
  origin: {external: "%s", health: /healthz}
workload:
  script: %s
  duration: 12s
  targets: [origin]
faults:
  - {name: slow-origin, kind: latency, edge: workload->origin, start: 4s, duration: 5s, attributes: {latency: 600}}
assertions:
  - name: fast-enough
    metric: http_req_duration
    window: during slow-origin
    checks: ["p(95) < 5000"]
`, name, origin, script)
	file := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestCoordinatedOmissionE2E: on the real k6, k6's thresholds example
// (one VU in a loop, the closed model) sends far fewer requests while its
// origin is slow, and its p(95) threshold over the run still holds; the run says so, naming k6's default executor and the
// open-model one, and marks the fault window's latency understated in the
// table and the record. The same load sent on a schedule
// (constant-arrival-rate) is not flagged (A/B).
func TestCoordinatedOmissionE2E(t *testing.T) {
	skipShort(t)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(origin.Close) // after the parallel subtests
	tests := []struct {
		name, script string
		flagged      bool
	}{
		{"closed-model", "thresholds-example.js", true},
		{"open-model", "arrival-rate.js", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // with the other robust end-to-end runs, after the timing-sensitive ones
			file := omissionScenario(t, tc.name, tc.script, origin.Listener.Addr().String())
			res := runChaosrun(t, 3*time.Minute, "--quiet", file)
			if res.code != exitOK {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, exitOK, res.stdout, res.stderr)
			}
			r := readRecord(t, filepath.Join(res.outDir, tc.name, "run.json"))
			problems := strings.Join(r.Problems, "\n")
			t.Logf("problems:\n%s\nstdout:\n%s", problems, res.stdout)
			said := strings.Contains(problems, "coordinated omission: the load sent") &&
				strings.Contains(problems, "k6 runs its VUs in a closed loop (constant-vus)") &&
				strings.Contains(problems, "executor: 'constant-arrival-rate'")
			marked := len(r.Verdicts) > 0 && r.Verdicts[0].Understated != "" && strings.Contains(res.stdout, "≥")
			if said != tc.flagged || marked != tc.flagged {
				t.Errorf("flagged: said %v, marked %v; want %v\nproblems:\n%s\nstdout:\n%s", said, marked, tc.flagged, problems, res.stdout)
			}
			assertNothingLeft(t, r)
		})
	}
}
