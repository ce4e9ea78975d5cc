package scenario

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testOptions are hooks like the ones the CLI fills from the faults and
// assertions packages, small enough to read.
var testOptions = Options{
	TargetFlags: func(target string) []string {
		return map[string][]string{"bankservice": {"bulkheads", "vault-bulkhead", "vault-limit"},
			"kvdispatcher": {"ratio-floor", "shard-breakers", "shard-retries"}}[target]
	},
	FaultStage: func(kind string) EdgeStage {
		if kind == "http_error" {
			return StageHTTP
		}
		return StageTCP
	},
	FaultKind: func(kind string, attrs map[string]float64) error {
		known := map[string][]string{"latency": {"latency", "jitter"}, "bandwidth": {"rate"},
			"host_pause": nil, "host_stop": nil, "host_kill": nil, "host_disconnect": nil,
			"http_error": {"status", "retry_after"}}
		allowed, ok := known[kind]
		if !ok {
			return fmt.Errorf("unknown fault kind %q (allowed: bandwidth, latency)", kind)
		}
		for _, k := range sortedKeys(attrs) {
			if !slices.Contains(allowed, k) {
				return fmt.Errorf("unknown attribute %q (allowed: %s)", k, strings.Join(allowed, ", "))
			}
		}
		return nil
	},
	Check: func(expr string) error {
		if strings.Contains(expr, "<<") {
			return fmt.Errorf("cannot parse check %q: unexpected <", expr)
		}
		return nil
	},
	Metric: func(sel string) error {
		if strings.Contains(sel, "{") && !strings.HasSuffix(sel, "}") {
			return fmt.Errorf("metric %q: tag filter not closed with }", sel)
		}
		return nil
	},
	LiveMetric: func(sel string) error {
		if strings.HasPrefix(sel, "scrape:") {
			return fmt.Errorf("metric %q is read after load: abortOnFail needs a k6 metric", sel)
		}
		return nil
	},
	Targets: []string{"bankservice", "ledger", "vault", "kvdispatcher", "kvstore"},
}

// golden compares got with the golden file, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./scenario -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestBadFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := Load(file, testOptions)
			if err == nil {
				t.Fatalf("loaded %s without error: %+v", file, s)
			}
			if s != nil {
				t.Errorf("got a scenario along with the error")
			}
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error is %T, want Errors: %v", err, err)
			}
			for i, e := range errs {
				if e.File != file {
					t.Errorf("error %d names file %q, want %q", i, e.File, file)
				}
				if i > 0 && (e.Line < errs[i-1].Line || e.Line == errs[i-1].Line && e.Col < errs[i-1].Col) {
					t.Errorf("errors not sorted by position: %v before %v", errs[i-1], e)
				}
			}
			// Every problem, not the first MaxShownErrors that Error
			// shows: the golden pins each message.
			var all strings.Builder
			for _, e := range errs {
				all.WriteString(e.Error() + "\n")
			}
			golden(t, strings.TrimSuffix(file, ".yaml")+".err", []byte(all.String()))
		})
	}
}

func TestGoodFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/good/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no good files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := Load(file, testOptions)
			if err != nil {
				t.Fatal(err)
			}
			out, err := yaml.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(file, ".yaml")+".out", out)

			// The effective scenario reads back to itself.
			again, err := Parse(file, out, testOptions)
			if err != nil {
				t.Fatalf("effective scenario does not parse back: %v\n%s", err, out)
			}
			out2, _ := yaml.Marshal(again)
			if string(out2) != string(out) {
				t.Errorf("round trip changed the scenario:\n%s\nvs\n%s", out, out2)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	s, err := Load("testdata/good/bank.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Order; !slices.Equal(got, []string{"ledger", "vault", "bank"}) {
		t.Errorf("Order = %v, want file order", got)
	}
	for name, svc := range s.Services {
		if svc.Replicas != 1 || svc.Health.Check != "/healthz" {
			t.Errorf("%s: replicas %d health %q, want defaults 1 and /healthz", name, svc.Replicas, svc.Health)
		}
	}
	f := s.Faults[0]
	if f.Direction != "downstream" || f.Toxicity == nil || *f.Toxicity != 1 {
		t.Errorf("fault defaults: direction %q toxicity %v", f.Direction, f.Toxicity)
	}
	a := s.Assertions[0]
	if a.Baseline != "before slow-vault" || a.Window != "during slow-vault" {
		t.Errorf("assertion window %q baseline %q", a.Window, a.Baseline)
	}
	if s.Seed != 7 || s.Services["bank"].Config["vault-limit"] != "8" || s.Workload.Params["CHECK_RATE"] != "100" {
		t.Errorf("values: seed %d config %v params %v", s.Seed, s.Services["bank"].Config, s.Workload.Params)
	}
	if s.LoadDuration().Seconds() != 60 {
		t.Errorf("LoadDuration = %v", s.LoadDuration())
	}

	kv, err := Load("testdata/good/kv-replicas.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := kv.Services["dispatcher"].Config; got["shard-retries"] != "12" || got["shard-breakers"] != "true" || got["ratio-floor"] != "0.5" {
		t.Errorf("scalars in config lost their text: %v", got)
	}
	if got := kv.Assertions[0].Window; got != "during slow-shard" {
		t.Errorf("window not made canonical: %q", got)
	}
	if got := kv.Assertions[1].Baseline; got != "before blip" {
		t.Errorf("default baseline = %q, want before the earliest fault", got)
	}
}

// TestLineNumbers pins the position of an error to the line it is on.
func TestLineNumbers(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nname: lines\nservices:\n  ledger: {run: ledger}\nworkload:\n  script: x.js\n")
	b.WriteString("  duration: 60s\n  targets: [ledger]\n")
	for range 8 {
		b.WriteString("# padding\n")
	}
	b.WriteString("seed: 1.5\n") // line 17, value at column 7
	_, err := Parse("lines.yaml", []byte(b.String()), Options{})
	want := "lines.yaml:17:7: seed: want an integer, got 1.5"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  Error
		want string
	}{
		{"full", Error{File: "a.yaml", Line: 3, Col: 5, Field: "x.y", Msg: "bad", Allowed: "p, q"}, "a.yaml:3:5: x.y: bad (allowed: p, q)"},
		{"no allowed", Error{File: "a.yaml", Line: 3, Col: 5, Field: "x", Msg: "bad"}, "a.yaml:3:5: x: bad"},
		{"line only", Error{File: "a.yaml", Line: 3, Msg: "bad"}, "a.yaml:3: bad"},
		{"no position", Error{File: "--set a=b", Msg: "bad"}, "--set a=b: bad"},
		{"nothing", Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("testdata/nope.yaml", Options{}); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want a not-exist error", err)
	}
}

func TestSchema(t *testing.T) {
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"$schema": "https://json-schema.org/draft/2020-12/schema"`, `"pattern": "^(0|`, `"required"`, `"description": "Scenario is one resilience claim, ready to run."`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("schema lacks %s", want)
		}
	}
	golden(t, "testdata/scenario.schema.json", got)
}

// TestAliasBomb checks that aliases of aliases cannot make decoding blow
// up: the file is refused quickly, with the reason.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nname: bomb\nservices: {a: {run: ledger}}\nworkload: {script: x, duration: 1s, targets: [a]}\n")
	b.WriteString("faults:\n  - &m0 {name: a}\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&b, "  - &m%d {<<: [*m%d, *m%d]}\n", i, i-1, i-1)
	}
	start := time.Now()
	_, err := Parse("bomb.yaml", []byte(b.String()), Options{})
	if err == nil || !strings.Contains(err.Error(), "expands to more than") && !strings.Contains(err.Error(), "nested more than") {
		t.Fatalf("got %v, want a refusal", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to refuse", d)
	}
}

// TestReliabilityErrorsAreCapped: a file with thousands of one mistake
// lists the first 20 and counts the rest.
func TestReliabilityErrorsAreCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nname: many\nservices:\n  api: {external: 127.0.0.1:8080}\nworkload:\n  script: x.js\n  duration: 10s\n  targets: [api]\nassertions:\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "  - {name: dup, metric: http_reqs, checks: [\"count > %d\"]}\n", i)
	}
	_, err := Parse("many.yaml", []byte(b.String()), testOptions)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) < 2999 {
		t.Fatalf("want thousands of problems, got %v", err)
	}
	if MaxShownErrors != 20 {
		t.Errorf("MaxShownErrors %d, want 20: the first 20 problems, with a count of the rest", MaxShownErrors)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != MaxShownErrors+1 || !strings.Contains(lines[MaxShownErrors], fmt.Sprintf("and %d more problem(s)", len(errs)-MaxShownErrors)) {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
