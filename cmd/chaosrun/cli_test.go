package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testState is a state with buffers, the test's working directory, the
// real filesystem and no environment but the repository's root (where the
// bundled scripts are, whatever the working directory).
func testState(t *testing.T) (*State, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var so, se bytes.Buffer
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return &State{Stdin: strings.NewReader(""), Stdout: &so, Stderr: &se, Dir: wd, FS: os.DirFS("/"),
		Env: map[string]string{"CHAOSRUN_ROOT": root}}, &so, &se
}

// runCLI runs one command line against buffers, as the real process would.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	st, so, se := testState(t)
	code = Execute(context.Background(), st, args)
	return code, so.String(), se.String()
}

func writeScenario(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodScenario = `version: 1
name: tiny
services:
  ledger: {run: ledger}
  bank:
    run: bankservice
    depends_on: [ledger]
workload:
  script: bank.js
  duration: 10s
  targets: [bank]
faults:
  - name: slow-ledger
    kind: latency
    edge: bank->ledger
    start: 2s
    duration: 3s
    attributes: {latency: 100}
assertions:
  - name: fast
    metric: http_req_duration{api:TransactCheck}
    window: during slow-ledger
    checks: ["p(99) < 2 * baseline"]
`

func TestCommandLines(t *testing.T) {
	good := writeScenario(t, goodScenario)
	// The error sits on line 15: a fault on an edge that does not exist.
	badEdge := writeScenario(t, strings.Replace(goodScenario, "edge: bank->ledger", "edge: bank->vault", 1))
	badCheck := writeScenario(t, strings.Replace(goodScenario, `"p(99) < 2 * baseline"`, `"p(99) <<< 2"`, 1))
	outside := writeScenario(t, strings.Replace(goodScenario, "  targets: [bank]\n", "  targets: [bank]\n  params: {UPSTREAM: \"http://10.9.8.7:80/\"}\n", 1))
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr []string
	}{
		{"no args", nil, exitUsage, "", []string{"Usage:", "Available Commands:"}},
		{"help", []string{"help"}, exitOK, "Available Commands:", nil},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", []string{`unknown command "frobnicate"`, "allowed: "}},
		{"validate good", []string{"validate", good}, exitOK, "ok (tiny: 2 services, 1 faults, 1 assertions)", nil},
		{"validate bad edge names its line", []string{"validate", badEdge}, exitUsage, "", []string{badEdge + ":15:11:", "faults[0].edge", "bank->ledger"}},
		{"validate bad check", []string{"validate", badCheck}, exitUsage, "", []string{badCheck + ":23:", "assertions[0].checks[0]"}},
		{"validate override", []string{"validate", "--set", "bank.replicas=99", good}, exitUsage, "", []string{"--set bank.replicas=99", "1 to 16"}},
		{"validate typo in a target's flag", []string{"validate", "--set", "bank.bulkhead=off", "catalog:bank-slow-vault"}, exitUsage, "",
			[]string{"--set bank.bulkhead=off", `bankservice has no flag "bulkhead"; did you mean "bulkheads"?`}},
		{"run typo in a target's flag", []string{"run", "--set", "bank.bulkhead=off", "catalog:bank-slow-vault"}, exitUsage, "",
			[]string{`did you mean "bulkheads"?`}},
		{"a typo in a command", []string{"valdate", good}, exitUsage, "", []string{`unknown command "valdate"`, "did you mean validate?"}},
		{"a typo in a flag", []string{"run", "--tesbed", "docker", good}, exitUsage, "", []string{"unknown flag: --tesbed; did you mean --testbed?"}},
		{"a typo in a catalog name", []string{"validate", "catalog:bank-slow-vaul"}, exitUsage, "", []string{`no catalog scenario "bank-slow-vaul"; did you mean "bank-slow-vault"?`}},
		{"validate missing file", []string{"validate", "nope.yaml"}, exitUsage, "", []string{"nope.yaml"}},
		{"run bad scenario exits 2", []string{"run", badEdge}, exitUsage, "", []string{":15:11:"}},
		{"run bad flag", []string{"run", "--bogus", good}, exitUsage, "", []string{"bogus"}},
		{"run unknown testbed", []string{"run", "--testbed", "moon", good}, exitUsage, "", []string{`"moon"`, "allowed: "}},
		{"run refuses a target outside the blast radius", []string{"run", outside}, exitUsage, "", []string{"workload.params.UPSTREAM: points at 10.9.8.7,", "--allow-target"}},
		{"run needs a scenario", []string{"run"}, exitUsage, "", []string{"chaosrun run: requires at least 1 arg(s)", "usage: chaosrun run"}},
		{"serve unknown", []string{"serve", "mainframe"}, exitUsage, "", []string{`unknown server "mainframe"`, "bankservice"}},
		{"schema", []string{"schema"}, exitOK, `"$schema"`, nil},
		{"version", []string{"version"}, exitOK, "chaosrun ", nil},
		// A shorter run: the error says how, and what it says validates.
		{"a shorter run says how", []string{"validate", "--set", "workload.duration=30s", "catalog:bank-slow-vault"}, exitUsage, "",
			[]string{"for a shorter run, shorten the fault too: --set faults.slow-vault.start=10s --set faults.slow-vault.duration=10s"}},
		{"a shorter run as it says", []string{"validate", "--set", "workload.duration=30s", "--set", "faults.slow-vault.start=10s", "--set", "faults.slow-vault.duration=10s", "catalog:bank-slow-vault"}, exitOK, "ok (bank-slow-vault", nil},
		// Each command's flags reach its package's options, defaults included.
		{"gameday window", []string{"gameday", "--window", "1s", good}, exitUsage, "", []string{"--window at least 2s"}},
		{"gameday shards", []string{"gameday", "--load-shards", "17", good}, exitUsage, "", []string{"--load-shards 17 out of range"}},
		{"gameday defaults", []string{"gameday", "--help"}, exitOK, "every fault is reverted (default 5s)", nil},
		{"run results listen", []string{"run", "--results-listen", "nope", good}, exitUsage, "", []string{`--results-listen "nope" is not HOST:PORT`}},
		{"judge shards", []string{"judge", "--listen", "127.0.0.1:0", "--shards", "1001", good}, exitUsage, "", []string{"--shards 1001: want 1 to 1000"}},
		{"judge defaults", []string{"judge", "--help"}, exitOK, `(default "chaosrun-results")`, nil},
		{"export parallelism", []string{"export", "k8s", "--parallelism", "0", good}, exitUsage, "", []string{"parallelism 0 out of range"}},
		{"export defaults", []string{"export", "k8s", "--help"}, exitOK, `the native load (default "chaosrun:latest")`, nil},
		{"fault apply wait", []string{"fault", "apply", "--wait", "0s", good}, exitUsage, "", []string{"--wait 0s: want --delay >= 0 and --wait > 0"}},
		{"fault apply defaults", []string{"fault", "apply", "--help"}, exitOK, `(default "http://127.0.0.1:8474")`, nil},
		{"fault list needs a game day", []string{"fault", "list"}, exitUsage, "", []string{"--gameday URL is required"}},
		{"fault add needs a kind", []string{"fault", "add", "--gameday", "http://127.0.0.1:1", "--host", "bank"}, exitUsage, "", []string{"needs --kind and exactly one of --edge or --host"}},
		{"init needs a Compose file", []string{"init", "--out", t.TempDir()}, exitUsage, "", []string{"--compose FILE or --url URL is required"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, so, se := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, so, se)
			}
			if tc.wantStdout != "" && !strings.Contains(so, tc.wantStdout) {
				t.Errorf("stdout %q does not contain %q", so, tc.wantStdout)
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(se, w) {
					t.Errorf("stderr %q does not contain %q", se, w)
				}
			}
		})
	}
}

func TestCatalogValidates(t *testing.T) {
	code, so, se := runCLI(t, "validate", "../../scenarios", "../../scenarios/examples")
	if code != exitOK {
		t.Fatalf("catalog does not validate (exit %d):\n%s%s", code, so, se)
	}
}
