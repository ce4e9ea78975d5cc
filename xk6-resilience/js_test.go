package resilience

import (
	"context"
	"strings"
	"testing"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"
)

// testVU is a modules.VU for tests (k6's modulestest needs testify, which
// this module does not require).
type testVU struct {
	ctx   context.Context
	rt    *sobek.Runtime
	init  *common.InitEnvironment
	state *lib.State
}

func (v *testVU) Context() context.Context               { return v.ctx }
func (v *testVU) Events() common.Events                  { return common.Events{} }
func (v *testVU) InitEnv() *common.InitEnvironment       { return v.init }
func (v *testVU) State() *lib.State                      { return v.state }
func (v *testVU) Runtime() *sobek.Runtime                { return v.rt }
func (v *testVU) RegisterCallback() func(f func() error) { return func(func() error) {} }

// jsEnv is one VU with the module loaded as the global `resilience`.
type jsEnv struct {
	rt      *sobek.Runtime
	vu      *testVU
	reg     *metrics.Registry
	samples chan metrics.SampleContainer
}

// newJSEnv loads the module in the init context, then moves the VU to its
// run context (with a sample channel) unless initOnly.
func newJSEnv(t testing.TB, initOnly bool) *jsEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rt := sobek.New()
	rt.SetFieldNameMapper(common.FieldNameMapper{})
	reg := metrics.NewRegistry()
	vu := &testVU{ctx: ctx, rt: rt, init: &common.InitEnvironment{TestPreInitState: &lib.TestPreInitState{Registry: reg}}}
	mi := new(RootModule).NewModuleInstance(vu)
	if err := rt.Set("resilience", mi.Exports().Named); err != nil {
		t.Fatal(err)
	}
	e := &jsEnv{rt: rt, vu: vu, reg: reg, samples: make(chan metrics.SampleContainer, 100000)}
	if !initOnly {
		vu.init = nil
		vu.state = &lib.State{Samples: e.samples, Tags: lib.NewVUStateTags(reg.RootTagSet().With("scenario", "test")), VUID: 1}
	}
	return e
}

func (e *jsEnv) run(t testing.TB, code string) sobek.Value {
	t.Helper()
	v, err := e.rt.RunString(code)
	if err != nil {
		t.Fatalf("script failed: %v\n%s", err, code)
	}
	return v
}

// sums adds up the samples pushed so far by metric name and model tag.
func (e *jsEnv) sums() map[string]float64 {
	out := map[string]float64{}
	for {
		select {
		case c := <-e.samples:
			for _, s := range c.GetSamples() {
				key := s.Metric.Name
				if m, ok := s.Tags.Get("model"); ok {
					key += "{" + m + "}"
				}
				out[key] += s.Value
				out[key+"#n"]++
			}
		default:
			return out
		}
	}
}

func TestJSClientAmplification(t *testing.T) {
	e := newJSEnv(t, false)
	e.run(t, `
		const bp = () => ({status: 503, headers: {"X-Backpressure": "1"}});
		const naive = resilience.naive({retries: 3});
		const smart = resilience.smart({breaker: {failures: 1000}});
		for (let i = 0; i < 50; i++) { naive.request(bp); smart.request(bp); }
		const s = naive.stats();
		if (s.requests !== 50 || s.attempts !== 200 || s.retries !== 150 || s.backpressure !== 200 || s.giveups !== 50) {
			throw new Error("naive stats " + JSON.stringify(s));
		}
	`)
	got := e.sums()
	for k, want := range map[string]float64{
		"resilience_requests{naive}": 50, "resilience_attempts{naive}": 200, "resilience_retries{naive}": 150,
		"resilience_amplification{naive}": 200, "resilience_amplification{naive}#n": 50,
		"resilience_giveups{naive}": 50, "resilience_backpressure{naive}": 200, "resilience_goodput{naive}": 0,
		"resilience_requests{smart}": 50, "resilience_attempts{smart}": 50, "resilience_retries{smart}": 0,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
}

func TestJSClientAttemptInfoAndErrors(t *testing.T) {
	e := newJSEnv(t, false)
	e.run(t, `
		resilience.headerNames({deadline: "Grpc-Timeout-Ms"});
		const c = resilience.backoff({deadline: "2s", tier: "critical", headers: {"X-Caller": "k6"}, retries: 1, base: 1});
		const seen = [];
		const res = c.request((a) => { seen.push(a); return a.attempt === 0 ? 502 : {status: 200, body: "ok"}; });
		if (res.body !== "ok" || seen.length !== 2) throw new Error("result " + JSON.stringify(res) + " after " + seen.length);
		const h = seen[0].headers;
		if (h["X-Criticality"] !== "critical" || h["X-Caller"] !== "k6" || !(+h["Grpc-Timeout-Ms"] > 1900)) throw new Error("headers " + JSON.stringify(h));
		if (!/ms$|s$/.test(seen[0].timeout) || !(seen[0].remaining > 1900)) throw new Error("timeout " + JSON.stringify(seen[0]));
		let threw = false;
		try { c.request(() => { throw new Error("inner"); }); } catch (e) { threw = String(e).includes("inner"); }
		if (!threw) throw new Error("exception from fn not rethrown");
		const pass = c.request((a, x, y) => ({status: 200, body: x + y}), "p", "q");
		if (pass.body !== "pq") throw new Error("extra arguments not passed: " + JSON.stringify(pass));
		const sm = resilience.smart({breaker: {failures: 1, cooldown: "1m"}});
		sm.request(() => 503);
		const r = sm.request(() => 200);
		if (!r.rejected || r.status !== 0 || sm.breaker() !== "open") throw new Error("breaker " + JSON.stringify(r));
		const d = resilience.deadline(500, {tier: "sheddable"});
		const dh = d.headers({"A": "b"});
		if (dh.A !== "b" || dh["X-Criticality"] !== "sheddable" || !(+dh["Grpc-Timeout-Ms"] > 400) || d.expired()) throw new Error("deadline " + JSON.stringify(dh));
		const ch = resilience.criticality("critical", {"Q": "1"});
		if (ch["X-Criticality"] !== "critical" || ch.Q !== "1") throw new Error("criticality " + JSON.stringify(ch));
	`)
}

func TestJSErrors(t *testing.T) {
	for _, tt := range []struct{ code, want string }{
		{`resilience.client("eager")`, "allowed: naive, backoff, budgeted, smart"},
		{`resilience.naive({retries: "many"})`, "option retries"},
		{`resilience.backoff({base: "soon"})`, "option base"},
		{`resilience.naive().request(42)`, "fn must be a function"},
		{`resilience.keys.zipf({n: 10, s: -1})`, "allowed (0, 20]"},
		{`resilience.keys.hotset({n: 10, hot: 20})`, "hot keys 20"},
		{`resilience.shapes.bursts({base: 10, peak: 5, every: "10s", length: "2s", duration: "1m"})`, "base <= peak"},
		{`resilience.shapes.flood({rate: 0, duration: "1m"})`, "flood: rate 0"},
		{`resilience.deadline(-5)`, "positive duration"},
		{`resilience.toxiproxy("ftp://x")`, "want http://HOST:PORT"},
		{`resilience.toxiproxy("http://127.0.0.1:1").addToxic("p", {type: "latency"})`, "not the init context"},
	} {
		e := newJSEnv(t, strings.Contains(tt.code, "toxiproxy"))
		_, err := e.rt.RunString(tt.code)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one with %q", tt.code, err, tt.want)
		}
	}
}

func TestJSKeysAndShapes(t *testing.T) {
	e := newJSEnv(t, true)
	e.run(t, `
		const z = resilience.keys.zipf({n: 100, s: 1.1, seed: 1, prefix: "acct-"});
		const k = z.next();
		if (!/^acct-\d+$/.test(k)) throw new Error("key " + k);
		const i = z.index();
		if (typeof i !== "number" || i < 0 || i >= 100) throw new Error("index " + i);
		const b = resilience.keys.bot({key: "the-bot"});
		if (b.next() !== "the-bot" || b.class() !== "bot") throw new Error("bot");
		const h = resilience.keys.hotset({n: 1000, hot: 5, p: 1});
		h.next(); if (h.class() !== "hot") throw new Error("hot class " + h.class());
		const sc = resilience.shapes.bursts({base: 10, peak: 100, every: "20s", length: "5s", duration: "1m"});
		if (sc.executor !== "ramping-arrival-rate" || sc.startRate !== 10 || sc.stages.length !== 12 || sc.preAllocatedVUs !== 10) throw new Error(JSON.stringify(sc));
		const spread = {...sc, exec: "burst"};
		if (spread.stages[1].target !== 100 || spread.exec !== "burst") throw new Error("spread");
		const f = resilience.shapes.flood({rate: 50, duration: "30s", startTime: "10s"});
		if (f.executor !== "constant-arrival-rate" || f.rate !== 50 || f.startTime !== "10s") throw new Error(JSON.stringify(f));
		const so = resilience.shapes.stepOverload({capacity: 100, factor: 3, before: "10s", hold: "20s", after: "10s"});
		if (so.startRate !== 50 || so.stages[2].target !== 300) throw new Error(JSON.stringify(so));
	`)
}

// BenchmarkJSKeyNext measures stream.next() called from JavaScript, the
// whole round trip through the runtime, against an empty JS function call.
func BenchmarkJSKeyNext(b *testing.B) {
	for _, tc := range []struct{ name, ctor string }{
		{"empty-js-function", `({next: () => "k"})`},
		{"version", `({next: resilience.version})`},
		{"uniform", `resilience.keys.uniform({n: 4096})`},
		{"zipf", `resilience.keys.zipf({n: 1000000, s: 0.99})`},
		{"hotset", `resilience.keys.hotset({n: 1000000, hot: 100, p: 0.9})`},
		{"bot", `resilience.keys.bot()`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newJSEnv(b, true)
			e.run(b, `var s = `+tc.ctor+`; function loop(n) { let k; for (let i = 0; i < n; i++) k = s.next(); return k; }`)
			loop, _ := sobek.AssertFunction(e.rt.Get("loop"))
			loop(sobek.Undefined(), e.rt.ToValue(1000)) // warm the key cache
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := loop(sobek.Undefined(), e.rt.ToValue(b.N)); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkJSRequest measures client.request(fn) around a function that
// returns a response-like object at once: the extension's cost per request.
func BenchmarkJSRequest(b *testing.B) {
	for _, tc := range []struct{ name, code string }{
		{"bare-call", `var c = {request: (fn) => fn({headers: {}})};`},
		{"smart", `var c = resilience.smart({deadline: "2s", tier: "critical"});`},
		{"naive", `var c = resilience.naive();`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newJSEnv(b, false)
			go func() { // drain samples like k6's engine does
				for range e.samples {
				}
			}()
			e.run(b, tc.code+` var resp = {status: 200, headers: {"Content-Type": "text/plain"}};
				function loop(n) { for (let i = 0; i < n; i++) c.request((a) => resp); }`)
			loop, _ := sobek.AssertFunction(e.rt.Get("loop"))
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := loop(sobek.Undefined(), e.rt.ToValue(b.N)); err != nil {
				b.Fatal(err)
			}
		})
	}
}
