package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Switches of the reference targets (see targets/*/main.go and the
// scenarios' --set keys). "On" is each binary's default, with quotas set
// high enough to be checked on every request but never to refuse one.
var (
	platformOn  = []string{"--quota", "bench=1000000000"}
	platformOff = []string{"--queue", "fifo", "--backpressure", "off", "--deadlines", "off", "--quotas", "off"}
	bankOff     = []string{"--bulkheads", "off", "--list-bulkhead", "off", "--retry-mode", "off", "--breaker", "off",
		"--outlier", "off", "--deadline-propagation", "off", "--retry-budget", "off"}
	// The dispatcher's per-caller bucket cannot be switched off (--ru off
	// makes it count requests): both arms get a quota that never binds.
	kvQuota = []string{"--ru-quota", "1000000000", "--ru-burst", "1000000000"}
	kvOff   = []string{"--ru", "off", "--tiers", "off", "--hotkeys", "off", "--shard-breakers", "off", "--shard-retries", "0"}
)

// wrk scripts: TransactCheck with unique idempotency keys per thread, and
// point reads spread over the seeded key space.
const (
	bankLua = `local id = 0
local n = 0
function setup(thread) id = id + 1; thread:set("id", id) end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Caller"] = "bench"
request = function()
  n = n + 1
  local body = string.format('{"account":"acct-%d","amount":1,"idempotency_key":"wrk-%d-%d"}', n % 1000, id, n)
  return wrk.format(nil, "/transact/check", nil, body)
end
`
	kvLua = `local n = 0
wrk.headers["X-Caller"] = "bench"
request = function()
  n = n + 1
  return wrk.format("GET", string.format("/kv/p%d/r%05d", n % 200, (n * 7) % 200))
end
`
)

// stack is one target with its dependencies, all `chaosrun serve` processes.
type stack struct {
	name  string
	front *proc
	procs []*proc
}

func (s *stack) stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].Stop()
	}
}

// startStack starts deps in order, then the front with a --dep per dep.
func (b *bench) startStack(ctx context.Context, name string, on bool) (*stack, error) {
	st := &stack{name: name}
	serve := func(what string, args ...string) (*proc, error) {
		p, err := startServer(ctx, what, b.chaosrun, append([]string{"serve", what, "--listen", "127.0.0.1:0"}, args...)...)
		if err == nil {
			st.procs = append(st.procs, p)
		}
		return p, err
	}
	plat := platformOff
	if on {
		plat = platformOn
	}
	var err error
	switch name {
	case "bankservice":
		var ledger, vault *proc
		if ledger, err = serve("ledger", plat...); err != nil {
			break
		}
		if vault, err = serve("vault", plat...); err != nil {
			break
		}
		args := append([]string{"--dep", "ledger=" + ledger.Addr, "--dep", "vault=" + vault.Addr}, plat...)
		if !on {
			args = append(args, bankOff...)
		}
		st.front, err = serve("bankservice", args...)
	case "kvdispatcher":
		var shards []string
		for range 2 {
			var p *proc
			if p, err = serve("kvstore", plat...); err != nil {
				break
			}
			shards = append(shards, p.Addr)
		}
		if err != nil {
			break
		}
		args := append(append([]string{"--dep", "kvstore=" + strings.Join(shards, ",")}, plat...), kvQuota...)
		if !on {
			args = append(args, kvOff...)
		}
		st.front, err = serve("kvdispatcher", args...)
	default:
		err = fmt.Errorf("unknown target %q", name)
	}
	if err != nil {
		st.stop()
		return nil, err
	}
	return st, nil
}

// goodput is wrk's rate of 2xx answers.
func goodput(w wrkResult) float64 {
	if w.Requests <= 0 {
		return 0
	}
	return w.PerSec * float64(w.Requests-w.Non2xx) / float64(w.Requests)
}

// targetsSection measures the goodput of each target with every protection
// on and off, and of the bench's bare net/http handler, with wrk (closed
// model, 32 connections). Configurations take turns for two rounds and
// each keeps its best round: the least disturbed by the shared machine.
func (b *bench) targetsSection(ctx context.Context) (Section, error) {
	sec := Section{Name: "targets (goodput under wrk, 32 connections; servers in separate processes)"}
	dir := filepath.Join(b.tmp, "lua")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sec, err
	}
	scripts := map[string]string{"bankservice": filepath.Join(dir, "bank.lua"), "kvdispatcher": filepath.Join(dir, "kv.lua")}
	for k, body := range map[string]string{"bankservice": bankLua, "kvdispatcher": kvLua} {
		if err := os.WriteFile(scripts[k], []byte(body), 0o644); err != nil {
			return sec, err
		}
	}
	type config struct {
		key, target, url, script string
		on                       bool
	}
	configs := []config{{key: "bare net/http handler", url: b.server.URL() + "/ok"}}
	for _, t := range []string{"bankservice", "kvdispatcher"} {
		for _, on := range []bool{true, false} {
			st, err := b.startStack(ctx, t, on)
			if err != nil {
				return sec, fmt.Errorf("%s: %w", t, err)
			}
			defer st.stop()
			key := t + ", all protections off"
			if on {
				key = t + ", all protections on"
			}
			configs = append(configs, config{key: key, target: t, url: st.front.URL(), script: scripts[t], on: on})
		}
	}
	best := map[string]wrkResult{}
	var rounds []map[string]any
	for round := range 2 {
		for _, c := range configs {
			if _, _, err := b.runWrk(ctx, c.url, time.Second, 32, c.script); err != nil { // warm-up
				return sec, fmt.Errorf("%s: %w", c.key, err)
			}
			w, _, err := b.runWrk(ctx, c.url, b.cfg.step, 32, c.script)
			if err != nil {
				return sec, fmt.Errorf("%s: %w", c.key, err)
			}
			if w.Requests == 0 || w.Non2xx+w.SockErrs > w.Requests/100 {
				return sec, fmt.Errorf("%s: %d requests, %d non-2xx, %d socket errors: the target is refusing the bench's requests", c.key, w.Requests, w.Non2xx, w.SockErrs)
			}
			rounds = append(rounds, map[string]any{"round": round + 1, "config": c.key, "per_s": w.PerSec, "goodput_per_s": goodput(w), "non_2xx": w.Non2xx, "p99_ms": w.P99ms})
			b.logf("  %s: %.0f req/s, %d non-2xx, p99 %.1f ms", c.key, w.PerSec, w.Non2xx, w.P99ms)
			if goodput(w) > goodput(best[c.key]) {
				best[c.key] = w
			}
		}
	}
	sec.Detail = map[string]any{"rounds": rounds}
	bare := goodput(best[configs[0].key])
	sec.Rows = append(sec.Rows, Row{Name: configs[0].key, Value: bare, Unit: "req/s"})
	for _, t := range []string{"bankservice", "kvdispatcher"} {
		on, off := goodput(best[t+", all protections on"]), goodput(best[t+", all protections off"])
		sec.Rows = append(sec.Rows,
			Row{Name: t + ", all protections on", Value: on, Unit: "req/s", Ref: "off", RefValue: off},
			Row{Name: t + ", all protections off", Value: off, Unit: "req/s", Ref: "bare net/http", RefValue: bare})
	}
	return sec, nil
}

// benchLine matches one result line of `go test -bench`.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) B/op)?(?:\s+([\d.]+) allocs/op)?`)

// benchStat is one benchmark's median over its runs.
type benchStat struct {
	Name     string  `json:"name"`
	Pkg      string  `json:"pkg"`
	NsOp     float64 `json:"ns_op"`
	BOp      float64 `json:"b_op"`
	AllocsOp float64 `json:"allocs_op"`
	Runs     int     `json:"runs"`
}

// parseBench reads `go test -bench` output into per-benchmark medians, in
// the order the benchmarks first appear.
func parseBench(out string) []benchStat {
	type acc struct {
		pkg              string
		ns, bytes, alloc []float64
	}
	var order []string
	all := map[string]*acc{}
	pkg := ""
	for line := range strings.Lines(out) {
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := all[pkg+" "+m[1]]
		if a == nil {
			a = &acc{pkg: pkg}
			all[pkg+" "+m[1]] = a
			order = append(order, pkg+" "+m[1])
		}
		num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
		a.ns, a.bytes, a.alloc = append(a.ns, num(m[2])), append(a.bytes, num(m[3])), append(a.alloc, num(m[4]))
	}
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return exactQuantile(s, 50)
	}
	var stats []benchStat
	for _, k := range order {
		a := all[k]
		_, name, _ := strings.Cut(k, " ")
		stats = append(stats, benchStat{Name: strings.TrimPrefix(name, "Benchmark"), Pkg: a.pkg, NsOp: med(a.ns), BOp: med(a.bytes), AllocsOp: med(a.alloc), Runs: len(a.ns)})
	}
	return stats
}

// microRefs pairs a benchmark with the reference it is compared to.
var microRefs = map[string]string{
	"ServerPath/platform-all-on":            "ServerPath/platform-fifo-controls-off",
	"ServerPath/platform-fifo-controls-off": "ServerPath/plain-net-http-mux",
	"ClientOverhead/smart-all-on":           "ClientOverhead/plain-http",
	"ClientOverhead/smart-all-off":          "ClientOverhead/plain-http",
	"BalancerPick/p2c":                      "BalancerPick/rr",
	"BalancerPick/ewma":                     "BalancerPick/p2c",
	"JSRequest/smart":                       "JSRequest/bare-call",
	"JSRequest/naive":                       "JSRequest/bare-call",
}

// microGoals bound a benchmark's ratio to its reference where an issue sets
// one: the latency-aware pick within 2× of the least-loaded one (issue 21).
var microGoals = map[string]*Goal{
	"BalancerPick/ewma": AtMost(2),
}

// microSection runs the Go micro-benchmarks of the platform, kvdispatcher
// and xk6-resilience hot paths and summarises them with benchstat.
func (b *bench) microSection(ctx context.Context) (Section, error) {
	sec := Section{Name: "Go micro-benchmarks (median ns/op)"}
	args := []string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-count", strconv.Itoa(b.cfg.count), "-benchtime", b.cfg.benchtime}
	var out strings.Builder
	for _, run := range []struct{ dir, pkgs []string }{
		{[]string{b.root}, []string{"./targets/platform/...", "./targets/kvdispatcher"}},
		{[]string{b.root, "xk6-resilience"}, []string{"."}},
	} {
		b.logf("  go %s %s", strings.Join(args, " "), strings.Join(run.pkgs, " "))
		res, err := runCmd(ctx, 10*time.Minute, filepath.Join(run.dir...), nil, "go", append(args, run.pkgs...)...)
		if err != nil {
			return sec, err
		}
		if res.Code != 0 {
			return sec, fmt.Errorf("go test -bench in %s: exit %d:\n%s", filepath.Base(filepath.Join(run.dir...)), res.Code, lastLines(string(res.Out), 20))
		}
		out.Write(res.Out)
	}
	// benchstat labels its column with the file name: a relative one.
	const raw = "go-test-bench.txt"
	if err := os.WriteFile(filepath.Join(b.tmp, raw), []byte(out.String()), 0o644); err != nil {
		return sec, err
	}
	bs, err := runCmd(ctx, time.Minute, b.tmp, nil, b.bstat, raw)
	if err != nil {
		return sec, err
	}
	if bs.Code != 0 {
		return sec, fmt.Errorf("benchstat: exit %d: %s", bs.Code, lastLines(string(bs.Out), 10))
	}
	sec.Text = strings.TrimRight(string(bs.Out), "\n")
	stats := parseBench(out.String())
	byName := map[string]benchStat{}
	for _, s := range stats {
		byName[s.Name] = s
	}
	for _, s := range stats {
		r := Row{Name: s.Name, Value: s.NsOp, Unit: "ns/op", Note: fmt.Sprintf("%.0f B/op, %.0f allocs/op", s.BOp, s.AllocsOp)}
		if ref, ok := byName[microRefs[s.Name]]; ok {
			r.Ref, r.RefValue, r.Goal = ref.Name, ref.NsOp, microGoals[s.Name]
		} else if !slices.Contains(slices.Collect(maps.Values(microRefs)), s.Name) {
			r.Minor = true // neither compared nor a reference: results.json and the text table only
		}
		sec.Rows = append(sec.Rows, r)
	}
	sec.Detail = map[string]any{"benchtime": b.cfg.benchtime, "count": b.cfg.count, "stats": stats}
	return sec, nil
}
