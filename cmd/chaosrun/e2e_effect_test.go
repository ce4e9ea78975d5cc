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

// effectScenario loads origin (native, 50 requests a second) beside
// spare, which nothing calls; a 200 ms latency fault with expect_effect
// goes on the load's edge to target.
const effectScenario = `version: 1
name: %s
services:
  origin: {external: "%s", health: /healthz}
  spare: {external: "%s", health: /healthz}
workload:
  engine: native
  duration: 16s
  targets: [origin, spare]
  streams:
    get: {target: origin, path: /, timeout: 5s, tags: {api: get}, arrival: {rate: 50}}
faults:
  - {name: slow, kind: latency, edge: workload->%s, start: 7s, duration: 8s, attributes: {latency: 200}, expect_effect: true}
assertions:
  - name: errors
    metric: http_req_failed
    window: whole
    checks: ["rate < 0.01"]
`

// TestFaultEffectE2E: a fault on the edge the load crosses moves its
// latency, and the record names it; the same fault aimed at an edge no
// request crosses moves nothing, and with expect_effect the run breaches
// saying so (A/B).
func TestFaultEffectE2E(t *testing.T) {
	skipShort(t)
	serve := func() string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
		t.Cleanup(s.Close)
		return s.Listener.Addr().String()
	}
	origin, spare := serve(), serve()
	tests := []struct {
		name, target string
		code         int
		moved        string
	}{
		{"crossed", "origin", exitOK, "http_req_duration{api:get"},
		{"not-crossed", "spare", exitBreach, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // with the other robust end-to-end runs, after the timing-sensitive ones
			file := filepath.Join(t.TempDir(), tc.name+".yaml")
			if err := os.WriteFile(file, fmt.Appendf(nil, effectScenario, tc.name, origin, spare, tc.target), 0o644); err != nil {
				t.Fatal(err)
			}
			res := runChaosrun(t, 2*time.Minute, "--quiet", file)
			t.Logf("stdout:\n%s", res.stdout)
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", res.code, tc.code, res.stderr)
			}
			r := readRecord(t, filepath.Join(res.outDir, tc.name, "run.json"))
			if len(r.FaultEffects) != 1 || r.FaultEffects[0].Compared == 0 {
				t.Fatalf("fault effects %+v", r.FaultEffects)
			}
			moved := strings.Join(r.FaultEffects[0].Moved, "\n")
			v, _ := findVerdict(r, "fault-effect slow")
			if tc.moved != "" && (!strings.Contains(moved, tc.moved) || !v.Pass) {
				t.Errorf("the crossed edge's fault moved %q; verdict %+v", moved, v)
			}
			if tc.moved == "" && (moved != "" || v.Pass || !strings.Contains(res.stderr, "breached: fault-effect slow")) {
				t.Errorf("the fault on an edge nothing crosses moved %q; verdict %+v\n%s", moved, v, res.stderr)
			}
			assertNothingLeft(t, r)
		})
	}
}
