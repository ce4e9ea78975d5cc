package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/export/k8s"
)

func TestExportCommandLines(t *testing.T) {
	const slow = "../../scenarios/bank-slow-vault.yaml"
	out := t.TempDir()
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{"manifests on stdout", []string{"export", "k8s", "--parallelism", "3", "--results-addr", "harness.example:7000", slow}, exitOK,
			[]string{"completionMode: Indexed", "parallelism: 3", "$(JOB_COMPLETION_INDEX)/3", "tcp://harness.example:7000", "name: chaosrun-load", "name: chaosrun-faults"}, []string{"results stream token: "}},
		{"a k6 workload as a TestRun", []string{"export", "k8s", "--parallelism", "3", "--results-addr", "harness.example:7000", "../../scenarios/k6/bank-slow-vault.yaml"}, exitOK,
			[]string{"kind: TestRun", "parallelism: 3", "--out resilience=tcp://harness.example:7000", "kind: Job", "needs the k6-operator"}, nil},
		{"flags after the scenario", []string{"export", "k8s", slow, "--image", "registry.example/chaosrun:1", "--results-addr", "h:7000", "--results-token", "t0k"}, exitOK,
			[]string{"image: registry.example/chaosrun:1", "results-token: t0k"}, nil},
		{"without a results address, a judge", []string{"export", "k8s", "--parallelism", "2", slow}, exitOK,
			[]string{"name: chaosrun-judge", "tcp://chaosrun-judge:7000", "http://chaosrun-judge:7001", "- --shards\n        - \"2\""}, []string{"Job chaosrun-judge judges the run"}},
		{"into a folder", []string{"export", "k8s", "--out", out, slow}, exitOK, []string{"wrote " + filepath.Join(out, "bank-slow-vault.yaml")}, nil},
		{"unknown scenario", []string{"export", "k8s", "no-such-scenario.yaml"}, exitUsage, nil, []string{"no-such-scenario.yaml"}},
		{"bad parallelism", []string{"export", "k8s", "--parallelism", "0", slow}, exitUsage, nil, []string{"parallelism 0 out of range (allowed: 1 to 1000)"}},
		{"parallelism not a number", []string{"export", "k8s", "--parallelism", "many", slow}, exitUsage, nil, []string{`invalid argument "many" for "--parallelism"`}},
		{"host faults", []string{"export", "k8s", "../../scenarios/bank-outlier-pause.yaml"}, exitUsage, nil, []string{"edge faults only"}},
		{"missing CA file", []string{"export", "k8s", "--results-addr", "h:1", "--results-ca", "/nonexistent/ca.pem", slow}, exitUsage, nil, []string{"--results-ca"}},
		{"two scenarios", []string{"export", "k8s", slow, slow}, exitUsage, nil, []string{"accepts 1 arg(s), received 2", "usage: chaosrun export k8s"}},
		{"no target", []string{"export"}, exitUsage, nil, []string{"Available Commands:", "k8s"}},
		{"unknown target", []string{"export", "helm", slow}, exitUsage, nil, []string{`unknown command "helm" (allowed: k8s)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, so, se := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %.500s\nstderr: %s", code, tc.wantCode, so, se)
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(so, w) {
					t.Errorf("stdout does not contain %q", w)
				}
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(se, w) {
					t.Errorf("stderr %q does not contain %q", se, w)
				}
			}
		})
	}
	// The file written holds the Secret: only its owner reads it.
	path := filepath.Join(out, "bank-slow-vault.yaml")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	m, err := k8s.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Check(m); err != nil {
		t.Fatal(err)
	}
}
