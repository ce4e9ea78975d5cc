package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/runner/loadtest"
)

// TestReliabilityOversizedScenario: an endless file (/dev/zero) and a
// 10 MB flow list are refused with exit 2 and a positioned error, within
// 2 s and 200 MB of memory (the child's peak RSS), instead of Go's
// out-of-memory crash or a gigabyte and false errors. So is /dev/zero in
// every other file a command reads: run records (diff: exit 3, a record
// that cannot be read; export-results), a fault timeline (judge --faults),
// a results file (judge, which read it for ever), a native spec (load
// --spec); each died of Go's out-of-memory error before. About 2 s.
func TestReliabilityOversizedScenario(t *testing.T) {
	skipShort(t)
	big := filepath.Join(t.TempDir(), "big.yaml")
	var b bytes.Buffer
	b.WriteString("version: 1\nname: big\nallow_targets: [")
	for b.Len() < 10<<20 {
		b.WriteString("a, ")
	}
	b.WriteString("a]\n")
	if err := os.WriteFile(big, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	const sc = "catalog:bank-slow-vault"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"endless", []string{"validate", "/dev/zero"}, exitUsage, "/dev/zero:1:262145: the file goes on past 256 KiB"},
		{"10 MB flow list", []string{"validate", big}, exitUsage, "big.yaml:3:262124: the file goes on past 256 KiB"},
		{"diff", []string{"diff", "/dev/zero", "x.json"}, exitRunError, "base: record: /dev/zero: invalid character"},
		{"export-results", []string{"export-results", "--export-otlp", "http://127.0.0.1:9", "/dev/zero"}, exitUsage, "record: /dev/zero: invalid character"},
		{"judge --faults", []string{"judge", "--faults", "/dev/zero", sc, "r.jsonl"}, exitUsage, "/dev/zero:1:1: byte '\\x00': not a fault timeline"},
		{"judge results", []string{"judge", sc, "/dev/zero"}, exitUsage, "/dev/zero is a device, not a results file"},
		{"load --spec", []string{"load", "--spec", "/dev/zero", "--results", "r.jsonl"}, exitUsage, "/dev/zero: the file goes on past 16 MiB, the most chaosrun reads of it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chaosrunBinary(t) // built before the clock starts
			t0 := time.Now()
			var peakRSS func() int64
			bg := startChaosrunWith(t, func(c *exec.Cmd) { c.Dir = t.TempDir(); peakRSS = measurePeakRSS(t, c) }, tc.args...)
			bg.wait(t, 20*time.Second)
			took := time.Since(t0)
			rss := peakRSS()
			stderr := bg.stderr.String()
			t.Logf("exit %d in %s, peak RSS %d MB: %s", bg.cmd.ProcessState.ExitCode(), took, rss>>20, firstLine(stderr))
			if code := bg.cmd.ProcessState.ExitCode(); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "out of memory") {
				t.Errorf("want an error saying %q, got:\n%s", tc.want, stderr)
			}
			if took > 2*time.Second {
				t.Errorf("took %s, want at most 2s", took)
			}
			if rss > 200<<20 {
				t.Errorf("peak RSS %d MB, want at most 200 MB", rss>>20)
			}
		})
	}
}

// TestReliabilityCommandsCancel: commands reading a FIFO nobody writes to
// end at once on SIGTERM or Ctrl-C (exit 130) instead of waiting forever:
// a scenario (validate, export), run records (diff), results files and a
// fault timeline (judge), a Compose file (init --compose), a native spec
// (load --spec). Under 1 s each.
func TestReliabilityCommandsCancel(t *testing.T) {
	skipShort(t)
	const sc = "catalog:bank-slow-vault"
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
	}{
		{[]string{"validate", "FIFO"}, syscall.SIGTERM},
		{[]string{"validate", "FIFO"}, syscall.SIGINT},
		{[]string{"export", "k8s", "FIFO"}, syscall.SIGTERM},
		{[]string{"diff", "FIFO", "FIFO"}, syscall.SIGINT},
		{[]string{"judge", sc, "FIFO"}, syscall.SIGINT},
		{[]string{"judge", sc, "FIFO"}, syscall.SIGTERM},
		{[]string{"judge", "--faults", "FIFO", sc, "r.jsonl"}, syscall.SIGINT},
		{[]string{"init", "--compose", "FIFO"}, syscall.SIGINT},
		{[]string{"init", "--compose", "FIFO"}, syscall.SIGTERM},
		{[]string{"load", "--spec", "FIFO", "--results", "r.jsonl"}, syscall.SIGINT},
		{[]string{"load", "--spec", "FIFO", "--results", "r.jsonl"}, syscall.SIGTERM},
	} {
		sig := tc.sig
		t.Run(strings.Join(tc.args[:2], " ")+" "+sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "s.yaml")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			args := strings.Fields(strings.ReplaceAll(strings.Join(tc.args, " "), "FIFO", fifo))
			bg := startChaosrunWith(t, func(c *exec.Cmd) { c.Dir = dir }, args...)
			time.Sleep(300 * time.Millisecond) // blocked opening the FIFO
			t0 := time.Now()
			bg.cmd.Process.Signal(sig) //nolint:errcheck // checked by its exit
			bg.wait(t, 10*time.Second)
			if took := time.Since(t0); took > time.Second {
				t.Errorf("%s took %s to end after %s", tc.args[0], took, sig)
			}
			if code := bg.cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Errorf("exit %d after %s, want %d\n%s", code, sig, exitInterrupted, bg.stderr.String())
			}
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestReliabilityRefusedBeforeAnythingStarts: a workload script outside
// the scenario's folder and the bundled scripts, a missing one, and a
// parameter, k6 output or k6 flag holding an address outside the blast
// radius (a bare IP too) are exit 2 from validate and from run, before the
// testbed is stood up.
// In-process, well under 1 s.
func TestReliabilityRefusedBeforeAnythingStarts(t *testing.T) {
	withParams := func(p string) string {
		return strings.Replace(fakeLoadScenario, "  targets: [ledger]\n", "  targets: [ledger]\n  params: {UPSTREAM: \""+p+"\"}\n", 1)
	}
	tests := []struct {
		name, scenario, want string
	}{
		{"script outside", strings.Replace(fakeLoadScenario, "script: bank.js", "script: ../../../../../../etc/passwd", 1), "/etc/passwd is outside"},
		{"script missing", strings.Replace(fakeLoadScenario, "script: bank.js", "script: gone.js", 1), "no such file"},
		{"bare IPv4", withParams("10.0.0.5"), "workload.params.UPSTREAM: points at 10.0.0.5"},
		{"bare IPv6", withParams("fd00::5"), "points at fd00::5"},
		{"host:port", withParams("10.0.0.5:80"), "points at 10.0.0.5"},
		{"URL with an IPv6 host", withParams("http://[2001:db8::1]:8080/x"), "points at 2001:db8::1"},
		{"an IP in a list", withParams("127.0.0.1:80, 192.168.1.9"), "points at 192.168.1.9"},
		{"k6 output", strings.Replace(fakeLoadScenario, "  targets: [ledger]\n", "  targets: [ledger]\n  k6: {outputs: [\"influxdb=http://10.0.0.5:8086\"]}\n", 1), "workload.k6.outputs[0]: k6 output \"influxdb=http://10.0.0.5:8086\" sends to 10.0.0.5"},
		{"k6 flag", strings.Replace(fakeLoadScenario, "  targets: [ledger]\n", "  targets: [ledger]\n  k6: {flags: [\"--local-ips=10.0.0.5\"]}\n", 1), "workload.k6.flags[0]: k6 flag \"--local-ips=10.0.0.5\" points at 10.0.0.5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := writeScenario(t, strings.Replace(tc.scenario, "%s", "5", 1))
			for _, cmd := range []string{"validate", "run"} {
				bed := &loadtest.Testbed{}
				st, _, se := fakeState(t, &loadtest.Load{Windows: tenRequests(), RunFor: 10 * time.Millisecond}, bed)
				args := []string{"validate", file}
				if cmd == "run" {
					args = []string{"run", "--quiet", file}
				}
				code := Execute(context.Background(), st, args)
				if code != exitUsage || !strings.Contains(se.String(), tc.want) || !strings.Contains(se.String(), "s.yaml:") {
					t.Errorf("%s: exit %d, want 2 with a positioned error saying %q:\n%s", cmd, code, tc.want, se)
				}
				if bed.Downs() != 0 {
					t.Errorf("%s stood the testbed up", cmd)
				}
			}
		})
	}
}

// TestReliabilityGamedayInput: the game day refuses fault names a scenario
// would refuse — ".." could never be cleared, 60 KB went to every page
// twice a second — and serving on 127.0.0.2 needs a token like any
// address but 127.0.0.1. In-process, under 1 s.
func TestReliabilityGamedayInput(t *testing.T) {
	file := writeScenario(t, strings.Replace(fakeLoadScenario, "%s", "5", 1))
	load := func() *loadtest.Load { return &loadtest.Load{Windows: tenRequests(), RunFor: time.Hour} }
	bed := &loadtest.Testbed{}
	st, _, se := fakeState(t, load(), bed)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // a game day that starts ends here
	defer cancel()
	if code := Execute(ctx, st, []string{"gameday", "--listen", "127.0.0.2:0", file}); code != exitUsage || !strings.Contains(se.String(), "needs --token") || bed.Downs() != 0 {
		t.Errorf("--listen 127.0.0.2:0 without a token: exit %d, testbed up %d time(s)\n%s", code, bed.Downs(), se)
	}

	st, so, se := fakeState(t, load(), &loadtest.Testbed{})
	done := make(chan int, 1)
	go func() { done <- Execute(context.Background(), st, []string{"gameday", file}) }()
	url := waitPage(t, so, se)
	for _, name := range []string{"..", strings.Repeat("x", 60<<10), "a/../b"} {
		body := `{"name":"` + name + `","kind":"latency","edge":"ledger->ledger","attributes":{"latency":1}}`
		resp, err := http.Post(url+"api/faults", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "allowed: letters, digits") || len(msg) > 1024 {
			t.Errorf("fault named %.20q: %s %.200s", name, resp.Status, msg)
		}
	}
	resp, err := http.Post(url+"api/stop", "application/json", strings.NewReader(`{"by":"tester"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d\n%s", code, se)
	}
}
