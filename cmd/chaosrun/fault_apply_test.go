package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/testbed/toxiserver"
)

// startToxiserver runs `chaosrun serve toxiproxy` in-process with args and
// returns its API's base URL.
func startToxiserver(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- toxiserver.Main(ctx, args, pw, io.Discard); pw.Close() }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("toxiproxy did not start: %v (%v)", err, <-done)
	}
	go io.Copy(io.Discard, pr) //nolint:errcheck
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
}

const applyScenario = `version: 1
name: tiny
services:
  ledger: {run: ledger}
  bank:
    run: bankservice
    depends_on: [ledger]
workload:
  script: bank.js
  duration: 2s
  targets: [bank]
faults:
  - name: slow-ledger
    kind: latency
    edge: bank->ledger
    start: 100ms
    duration: 200ms
    attributes: {latency: 100}
`

func TestFaultApply(t *testing.T) {
	good := writeScenario(t, applyScenario)
	hostFile := writeScenario(t, strings.NewReplacer("    edge: bank->ledger\n", "    host: ledger\n", "kind: latency", "kind: host_pause", "    attributes: {latency: 100}\n", "").Replace(applyScenario))
	api := startToxiserver(t, "--listen", "127.0.0.1:0", "--token", "s3cret", "--proxy", "bank->ledger=127.0.0.1:0=127.0.0.1:9")
	bare := startToxiserver(t, "--listen", "127.0.0.1:0")
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr string
	}{
		{"applies and reverts on time", []string{"fault", "apply", "--toxiproxy", api, "--token", "s3cret", good}, exitOK,
			[]string{"has the 1 proxies of tiny", "applied  slow-ledger at +0.1", "reverted slow-ledger at +0.3", "latency 100ms downstream on bank->ledger"}, ""},
		{"wrong token", []string{"fault", "apply", "--toxiproxy", api, "--token", "nope", "--wait", "300ms", good}, exitRunError, nil, "refused the token"},
		{"proxies missing", []string{"fault", "apply", "--toxiproxy", bare, "--wait", "300ms", good}, exitRunError, nil, "no proxy bank->ledger"},
		{"host faults refused", []string{"fault", "apply", "--toxiproxy", api, hostFile}, exitUsage, nil, "host faults act on containers"},
		{"bad URL", []string{"fault", "apply", "--toxiproxy", "ftp://x", good}, exitUsage, nil, "not an http(s) URL"},
		{"no scenario", []string{"fault", "apply"}, exitUsage, nil, "usage: chaosrun fault apply"},
		{"bad scenario", []string{"fault", "apply", "nope.yaml"}, exitUsage, nil, "nope.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, so, se := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, so, se)
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(so, w) {
					t.Errorf("stdout %q does not contain %q", so, w)
				}
			}
			if !strings.Contains(se, tc.wantStderr) {
				t.Errorf("stderr %q does not contain %q", se, tc.wantStderr)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}
