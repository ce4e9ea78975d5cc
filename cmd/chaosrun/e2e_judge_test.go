package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/testbed"
)

// judgeScenario is bank-slow-vault, 15 s of native load, with checks
// that hold and one that breaches (cash calls that reach the slow vault
// are slow), firm enough to give the same verdicts run after run; no end
// check (the judge has no testbed to ask).
const judgeScenario = `version: 1
name: judge-e2e
seed: 7
services:
  ledger: {run: ledger}
  vault: {run: vault}
  bank:
    run: bankservice
    depends_on: [ledger, vault]
    config: {bulkheads: "on", vault-limit: "8", workers: "64", drawer: "off"}
workload:
  duration: 15s
  streams:
    check: &transact
      target: bank
      method: POST
      path: /transact/check
      body: '{"account":"{account}","amount":100,"idempotency_key":"C-{seed}-{seq}"}'
      headers: {Content-Type: application/json}
      timeout: 10s
      tags: {api: TransactCheck, name: TransactCheck}
      arrival: {rate: 100}
      keys:
        account: {kind: uniform, n: 1000, prefix: acct-}
    cash:
      <<: *transact
      path: /transact/cash
      body: '{"account":"{account}","amount":100,"idempotency_key":"K-{seed}-{seq}"}'
      tags: {api: TransactCash, name: TransactCash}
      arrival: {rate: 40}
faults:
  - {name: slow-vault, kind: latency, edge: bank->vault, start: 5s, duration: 6s, attributes: {latency: 2000}}
assertions:
  - name: check-errors-isolated
    metric: http_req_failed{api:TransactCheck}
    window: during slow-vault
    checks: ["rate < 0.01"]
  - name: check-fast
    metric: http_req_duration{api:TransactCheck}
    window: during slow-vault
    checks: ["p(99) < 500ms"]
  - name: cash-fails-fast
    metric: http_req_duration{api:TransactCash,status:503}
    window: during slow-vault
    settle: 2s
    checks: ["count > 50"]
  - name: cash-through-vault-fast
    metric: http_req_duration{api:TransactCash,status:200}
    window: during slow-vault
    settle: 2s
    checks: ["p(99) < 1s"]
  - name: check-load
    metric: http_reqs{api:TransactCheck}
    window: all
    checks: ["count >= 1400"]
`

// writeJudgeScenario writes judgeScenario into a folder of its own.
func writeJudgeScenario(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "judge-e2e.yaml")
	if err := os.WriteFile(file, []byte(judgeScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// outcomes are "assertion check: pass|FAIL" of a record's verdicts.
func outcomes(r *record.Run) []string {
	var out []string
	for _, v := range r.Verdicts {
		res := "pass"
		if !v.Pass {
			res = "FAIL"
		}
		out = append(out, fmt.Sprintf("%s %s: %s", v.Assertion, v.Check, res))
	}
	return out
}

// TestJudgeE2E: a run with two load shards keeps each shard's stream;
// `chaosrun judge` over those files and the run record's timeline gives
// the run's verdicts exactly; a receive-only judge of the same scenario —
// two `chaosrun load` shards started as separate processes against a
// testbed, `fault apply --report-to` — gives the same verdicts; a killed
// shard fails the judge's verdict by name, a stream with a wrong token is
// refused.
func TestJudgeE2E(t *testing.T) {
	skipShort(t)
	file := writeJudgeScenario(t)
	res := runChaosrun(t, 3*time.Minute, "--quiet", "--load-shards", "2", file)
	if res.code != exitBreach {
		t.Fatalf("run: exit %d, want %d (one check breaches)\n%s\n%s", res.code, exitBreach, res.stdout, res.stderr)
	}
	dir := filepath.Join(res.outDir, "judge-e2e")
	ran := readRecord(t, filepath.Join(dir, "run.json"))
	want := outcomes(ran)
	t.Logf("run --load-shards 2: %v", want)
	if !strings.Contains(strings.Join(want, ";"), "cash-through-vault-fast p(99) < 1s: FAIL") || len(want) != 5 {
		t.Fatalf("run's verdicts %v: want 5, cash-through-vault-fast failing", want)
	}

	t.Run("files", func(t *testing.T) { judgeFiles(t, file, dir, ran, exitBreach) })
	t.Run("receive", func(t *testing.T) { judgeReceive(t, file, want) })
	t.Run("dead shard", func(t *testing.T) { judgeDeadShard(t, file) })
}

// judgeFiles judges the run's kept streams (logs/results*.jsonl in dir)
// with its record's timeline: verdict for verdict what the run decided,
// with its exit code; a file cut in the middle is refused.
func judgeFiles(t *testing.T, file, dir string, ran *record.Run, code int) {
	out := t.TempDir()
	results, err := filepath.Glob(filepath.Join(dir, "logs", "results*.jsonl"))
	if err != nil || len(results) == 0 {
		t.Fatalf("no results file kept in %s: %v", dir, err)
	}
	bg := startChaosrun(t, append(append([]string{"judge", "--out-dir", out, file}, results...), "--faults", filepath.Join(dir, "run.json"))...)
	bg.wait(t, time.Minute)
	if got := bg.cmd.ProcessState.ExitCode(); got != code {
		t.Fatalf("judge: exit %d, want %d\n%s", got, code, bg.stderr)
	}
	got := readRecord(t, filepath.Join(out, ran.Scenario, "run.json"))
	if len(got.Verdicts) != len(ran.Verdicts) {
		t.Fatalf("judge: %v\nrun:   %v", outcomes(got), outcomes(ran))
	}
	for i, v := range ran.Verdicts {
		g := got.Verdicts[i]
		if g.Assertion != v.Assertion || g.Check != v.Check || g.Source != v.Source || g.Pass != v.Pass || g.Observed != v.Observed ||
			g.Bound != v.Bound || g.Samples != v.Samples || g.Window != v.Window || g.Error != v.Error {
			t.Errorf("verdict %d: judge %+v\nrun %+v", i, g, v)
		}
	}
	// Cut in the middle: refused, naming the file and line.
	b, err := os.ReadFile(results[0])
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	bg = startChaosrun(t, "judge", "--out-dir", t.TempDir(), file, cut)
	bg.wait(t, time.Minute)
	if code, msg := bg.cmd.ProcessState.ExitCode(), bg.stderr.String(); code != exitUsage || !strings.Contains(msg, "cut.jsonl:") || !strings.Contains(msg, "no end marker") {
		t.Errorf("cut file: exit %d, want %d, naming file:line\n%s", code, exitUsage, msg)
	}
}

// judgeBed stands the scenario's services and Toxiproxy up, as a cluster
// would run them, for a receive-only judge.
func judgeBed(t *testing.T, file string) *testbed.Topology {
	t.Helper()
	st := NewState()
	sc, err := st.scenarios().Load(context.Background(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb := &testbed.Local{Binary: chaosrunBinary(t), LogDir: t.TempDir(), Seed: 7}
	topo, err := tb.Up(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tb.Down(ctx) //nolint:errcheck // best effort in a test
	})
	return topo
}

// freePorts finds a free port P with P+1 free too (streams, events).
func freePorts(t *testing.T) int {
	t.Helper()
	for range 50 {
		a, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := a.Addr().(*net.TCPAddr).Port
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		a.Close()
		if err == nil {
			b.Close()
			return p
		}
	}
	t.Fatal("no two free ports side by side")
	return 0
}

// startShard starts `chaosrun load` shard i/n of file against bank,
// streaming to addr with token.
func startShard(t *testing.T, file, bank, addr, token string, i, n int) *background {
	t.Helper()
	return startChaosrunWith(t, func(c *exec.Cmd) { c.Env = append(os.Environ(), resultsTokenEnv+"="+token) },
		"load", file, "--shard", fmt.Sprintf("%d/%d", i, n), "--target", "bank="+bank, "--results", "tcp://"+addr)
}

// nativeShards starts `chaosrun load` shards of file against its bank.
func nativeShards(t *testing.T, file string) func(topo *testbed.Topology, addr, token string, i int) *background {
	return func(topo *testbed.Topology, addr, token string, i int) *background {
		bank, err := topo.TargetURL("bank")
		if err != nil {
			t.Fatal(err)
		}
		return startShard(t, file, bank, addr, token, i, 2)
	}
}

// receiveOpts say how receiveRun runs a receive-only judge of two shards.
type receiveOpts struct {
	// shard starts shard i of 2, streaming to addr with token.
	shard func(topo *testbed.Topology, addr, token string, i int) *background
	// faults runs `fault apply --report-to` the judge.
	faults bool
	// margin, when set, is the judge's --margin; kill, when set, kills
	// shard 1/2 that long after the shards started.
	margin string
	kill   time.Duration
	// before, when set, runs once the judge listens on addr, before the
	// shards start.
	before func(topo *testbed.Topology, addr string)
}

// receiveRun stands file's services up as a cluster would run them and
// runs a receive-only judge of two shards started as separate processes
// (with fault apply as o says), waits for them all, and returns the judge
// and its out dir. The shards not killed must exit 0.
func receiveRun(t *testing.T, file string, o receiveOpts) (*background, string) {
	t.Helper()
	topo := judgeBed(t, file)
	port, token, out := freePorts(t), "judge-e2e-token", t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := []string{"judge", "--listen", addr, "--shards", "2", "--token", token, "--out-dir", out, file}
	if o.margin != "" {
		args = append(args, "--margin", o.margin)
	}
	j := startChaosrun(t, args...)
	time.Sleep(time.Second)
	var fa *background
	if o.faults {
		fa = startChaosrun(t, "fault", "apply", "--toxiproxy", topo.ToxiproxyURL, "--report-to", "http://127.0.0.1:"+strconv.Itoa(port+1),
			"--report-token", token, file)
	}
	if o.before != nil {
		o.before(topo, addr)
	}
	shards := []*background{o.shard(topo, addr, token, 0), o.shard(topo, addr, token, 1)}
	if o.kill > 0 {
		time.Sleep(o.kill)
		if err := syscall.Kill(shards[1].cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	j.wait(t, 2*time.Minute)
	if fa != nil {
		fa.wait(t, 30*time.Second)
	}
	for i, s := range shards {
		s.wait(t, 30*time.Second)
		if code := s.cmd.ProcessState.ExitCode(); code != 0 && (o.kill == 0 || i == 0) {
			t.Errorf("shard %d/2: exit %d\n%s", i, code, s.stderr)
		}
	}
	if fa != nil && fa.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("fault apply: exit %d\n%s", fa.cmd.ProcessState.ExitCode(), fa.stderr)
	}
	return j, out
}

func judgeReceive(t *testing.T, file string, want []string) {
	j, out := receiveRun(t, file, receiveOpts{shard: nativeShards(t, file), faults: true})
	if code := j.cmd.ProcessState.ExitCode(); code != exitBreach {
		t.Fatalf("judge: exit %d, want %d\n%s", code, exitBreach, j.stderr)
	}
	got := outcomes(readRecord(t, filepath.Join(out, "judge-e2e", "run.json")))
	t.Logf("judge --listen --shards 2: %v", got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("receive-only judge: %v\nrun --load-shards 2: %v", got, want)
	}
	if !strings.Contains(j.stderr.String(), "2 of 2 shard(s) connected") {
		t.Errorf("no progress line naming the shards:\n%s", j.stderr)
	}
}

// judgeDeadShard kills shard 1/2 mid-run and sends a stream with a wrong
// token: the judge refuses the stranger and fails naming the dead shard.
func judgeDeadShard(t *testing.T, file string) {
	stranger := func(topo *testbed.Topology, addr string) {
		bank, err := topo.TargetURL("bank")
		if err != nil {
			t.Fatal(err)
		}
		s := startShard(t, file, bank, addr, "wrong-token", 0, 2)
		s.wait(t, 30*time.Second)
		if code, msg := s.cmd.ProcessState.ExitCode(), s.stderr.String(); code != exitRunError || !strings.Contains(msg, "wrong token") {
			t.Errorf("stream with a wrong token: exit %d, want %d and the reason\n%s", code, exitRunError, msg)
		}
	}
	j, out := receiveRun(t, file, receiveOpts{shard: nativeShards(t, file), margin: "3s", kill: 5 * time.Second, before: stranger})
	msg := j.stderr.String()
	checkDeadShard(t, j, filepath.Join(out, "judge-e2e", "run.json"))
	if !strings.Contains(msg, "wrong token") {
		t.Errorf("the judge did not print the refused stream:\n%s", msg)
	}
}

// checkDeadShard checks that the judge failed (exit 3) naming shard 1/2
// and its record is incomplete with the shard's failing verdict.
func checkDeadShard(t *testing.T, j *background, record string) {
	t.Helper()
	msg := j.stderr.String()
	if code := j.cmd.ProcessState.ExitCode(); code != exitRunError || !strings.Contains(msg, "shard 1/2: its stream ended without its end marker") {
		t.Fatalf("judge: exit %d, want %d naming shard 1/2\n%s", code, exitRunError, msg)
	}
	r := readRecord(t, record)
	if !r.Incomplete || !strings.Contains(strings.Join(outcomes(r), ";"), "shard 1/2 streamed its results to their end: FAIL") {
		t.Errorf("record: incomplete %v, verdicts %v", r.Incomplete, outcomes(r))
	}
}

// TestFaultPlaneWantsTheRunsToken: the local testbed's Toxiproxy answers
// only the run (its URL carries the run's token): another process of the
// machine, at the address the record names, can neither list nor remove
// toxics.
func TestFaultPlaneWantsTheRunsToken(t *testing.T) {
	skipShort(t)
	topo := judgeBed(t, writeJudgeScenario(t))
	u, err := url.Parse(topo.ToxiproxyURL)
	if err != nil || u.User == nil {
		t.Fatalf("Toxiproxy URL %q carries no token", topo.ToxiproxyURL)
	}
	for _, tc := range []struct {
		method, base string
		want         int
	}{
		{http.MethodGet, "http://" + u.Host, http.StatusUnauthorized},
		{http.MethodDelete, "http://" + u.Host, http.StatusUnauthorized},
		{http.MethodGet, topo.ToxiproxyURL, http.StatusOK},
	} {
		path := "/proxies"
		if tc.method == http.MethodDelete {
			path = "/proxies/bank-%3Evault/toxics/latency"
		}
		req, err := http.NewRequest(tc.method, tc.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s%s: %d, want %d", tc.method, u.Host, path, resp.StatusCode, tc.want)
		}
	}
}
