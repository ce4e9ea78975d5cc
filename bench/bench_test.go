package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// These tests cover the bench's pure logic; the bench itself (k6, wrk,
// vegeta, servers) runs only from `go run ./bench`.

// search runs a RateSearch against a generator that sustains up to capacity.
func search(s *RateSearch, capacity int) (tried []int) {
	for {
		r, ok := s.Next()
		if !ok {
			return tried
		}
		tried = append(tried, r)
		s.Record(r, r <= capacity)
	}
}

func TestRateSearch(t *testing.T) {
	tests := []struct {
		name      string
		capacity  int
		maxSteps  int
		wantBest  int
		wantTried []int
	}{
		{"doubles then bisects", 5300, 10, 5250, []int{1000, 2000, 4000, 8000, 6000, 5000, 5500, 5250}},
		{"start fails: bisects down", 600, 10, 500, []int{1000, 500, 750}},
		{"nothing passes", 0, 10, 0, []int{1000, 500, 250}},
		{"stops at max", 1e9, 10, 16000, []int{1000, 2000, 4000, 8000, 16000}},
		{"bounded in steps", 5300, 3, 4000, []int{1000, 2000, 4000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &RateSearch{Start: 1000, Max: 16000, MinStep: 250, Resolution: 0.05, MaxSteps: tt.maxSteps}
			tried := search(s, tt.capacity)
			if s.Best() != tt.wantBest || !equalInts(tried, tt.wantTried) {
				t.Fatalf("best %d after %v; want %d after %v", s.Best(), tried, tt.wantBest, tt.wantTried)
			}
			if s.Steps() != len(tried) || len(tried) > tt.maxSteps {
				t.Fatalf("%d steps recorded, %d tried, at most %d allowed", s.Steps(), len(tried), tt.maxSteps)
			}
		})
	}
}

func TestRateSearchInvalid(t *testing.T) {
	for _, s := range []*RateSearch{{Start: 0, MinStep: 1, MaxSteps: 5, Max: 10}, {Start: 10, MinStep: 0, MaxSteps: 5, Max: 10}} {
		if _, ok := s.Next(); ok {
			t.Fatalf("%+v: want no trial", s)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestJudgeOpen(t *testing.T) {
	tests := []struct {
		name                      string
		requests, dropped, failed int64
		ok                        bool
	}{
		{"all sent", 5000, 0, 0, true},
		{"a few errors tolerated", 5000, 0, 5, true},
		{"dropped iterations", 4990, 10, 0, false},
		{"errors", 5000, 0, 6, false},
		{"short", 4900, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, why := judgeOpen(1000, 5*time.Second, tt.requests, tt.dropped, tt.failed)
			if ok != tt.ok || (ok == (why != "")) {
				t.Fatalf("judgeOpen = %v %q; want %v", ok, why, tt.ok)
			}
		})
	}
}

func TestRowFinish(t *testing.T) {
	tests := []struct {
		name      string
		row       Row
		wantRatio float64 // NaN: none
		wantPass  string  // "", "pass", "fail"
	}{
		{"ratio without goal", Row{Value: 900, Ref: "a", RefValue: 1000}, 0.9, ""},
		{"ratio goal met", Row{Value: 900, Ref: "a", RefValue: 1000, Goal: AtLeast(0.9)}, 0.9, "pass"},
		{"ratio goal missed", Row{Value: 800, Ref: "a", RefValue: 1000, Goal: AtLeast(0.9)}, 0.8, "fail"},
		{"at most", Row{Value: 1, Ref: "c", RefValue: 1000, Goal: AtMost(0.01)}, 0.001, "pass"},
		{"within", Row{Value: 10.05, Ref: "exact", RefValue: 10, Goal: Within(0.01)}, 1.005, "pass"},
		{"outside", Row{Value: 9.8, Ref: "exact", RefValue: 10, Goal: Within(0.01)}, 0.98, "fail"},
		{"value goal", Row{Value: 3, Goal: ValueAtMost(20)}, math.NaN(), "pass"},
		{"value goal missed", Row{Value: 30, Goal: ValueAtMost(20)}, math.NaN(), "fail"},
		{"ratio goal, no reference value", Row{Value: 3, Ref: "a", Goal: AtLeast(0.9)}, math.NaN(), "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.row
			r.Finish()
			switch {
			case math.IsNaN(tt.wantRatio) && r.Ratio != nil:
				t.Fatalf("ratio %v, want none", *r.Ratio)
			case !math.IsNaN(tt.wantRatio) && (r.Ratio == nil || math.Abs(*r.Ratio-tt.wantRatio) > 1e-9):
				t.Fatalf("ratio %v, want %v", r.Ratio, tt.wantRatio)
			}
			got := ""
			if r.Pass != nil {
				got = map[bool]string{true: "pass", false: "fail"}[*r.Pass]
			}
			if got != tt.wantPass {
				t.Fatalf("pass %q, want %q", got, tt.wantPass)
			}
		})
	}
}

func sampleResults() *Results {
	return &Results{Version: ResultsVersion, Date: "2026-11-24", Wall: "12m0s",
		Machine: Machine{Description: "2 shared cores, 24 GiB, Linux", CPUs: 2, OS: "linux/amd64", Go: "go1.26"},
		Sections: []Section{
			{Name: "load generation", Secs: 200, Rows: []Row{
				{Name: "(a) plain k6", Value: 4000, Unit: "req/s"},
				{Name: "(b) k6 + output", Value: 3750, Unit: "req/s", Ref: "(a)", RefValue: 4000, Goal: AtLeast(0.9)},
				{Name: "a minor row", Value: 1, Minor: true},
			}, Detail: map[string]any{"steps": []int{1000, 2000}}},
			{Name: "micro", Rows: []Row{{Name: "ServerPath", Value: 1847, Unit: "ns/op"}}, Text: "benchstat | table"},
			{Name: "broken", Error: "wrk not found"},
		}}
}

func TestResultsShape(t *testing.T) {
	res := sampleResults()
	res.Finish()
	path := filepath.Join(t.TempDir(), "results.json")
	if err := res.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if met, total := back.Goals(); met != 1 || total != 1 {
		t.Fatalf("goals %d of %d, want 1 of 1", met, total)
	}
	// The layout docs/figures.md and other tools read.
	var raw map[string]any
	b, _ := json.Marshal(back)
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "date", "machine", "command", "wall", "sections"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("results.json lacks %q", k)
		}
	}
	row := raw["sections"].([]any)[0].(map[string]any)["rows"].([]any)[1].(map[string]any)
	for _, k := range []string{"name", "value", "unit", "ref", "ref_value", "ratio", "goal", "pass"} {
		if _, ok := row[k]; !ok {
			t.Errorf("a row with a goal lacks %q: %v", k, row)
		}
	}
	if r := row["ratio"].(float64); math.Abs(r-0.9375) > 1e-9 {
		t.Errorf("ratio %v, want 0.9375", r)
	}
	back.Version = 99
	if err := back.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("loading version 99: %v", err)
	}
}

func TestWriteTable(t *testing.T) {
	res := sampleResults()
	res.Finish()
	var text, md bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== load generation", "3750 req/s", "(a) (4000)", "0.938×", "ratio ≥ 0.9 ✓", "benchstat | table", "error: wrk not found", "goals met: 1 of 1"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text table lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"| **load generation** | (a) plain k6 | 4000 req/s |", "|  | (b) k6 + output | 3750 req/s | (a) (4000) | 0.938× | ratio ≥ 0.9 ✓ |", "| **broken** | error | wrk not found |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(text.String(), "a minor row") || strings.Contains(md.String(), "a minor row") {
		t.Error("a minor row belongs in the text table only")
	}
	if strings.Contains(md.String(), "benchstat") {
		t.Error("markdown carries the benchstat text; only the text table does")
	}
}

func TestFmtNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 20: "20", 4000: "4000", 12.34: "12.3", 1.234: "1.23", 0.9999: "1.00", 0.5: "0.500", 0.000644: "0.000644", math.NaN(): "—"} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestExactQuantile(t *testing.T) {
	vals := make([]float64, 8000)
	for i := range vals {
		vals[i] = float64(i + 1)
	}
	for q, want := range map[float64]float64{50: 4000, 99: 7920, 99.9: 7992, 100: 8000, 0: 1} {
		if got := exactQuantile(vals, q); got != want {
			t.Errorf("q%v = %v, want %v (nearest rank)", q, got, want)
		}
	}
	if !math.IsNaN(exactQuantile(nil, 50)) {
		t.Error("empty: want NaN")
	}
}

const wrkOut = `Running 1s test @ http://127.0.0.1:39083/ok
  2 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   155.03us  394.42us   4.94ms   92.99%
    Req/Sec    34.46k     4.60k   39.85k    59.09%
  Latency Distribution
     50%   44.00us
     75%   74.00us
     90%  302.00us
     99%    2.20ms
  75311 requests in 1.10s, 8.48MB read
  Non-2xx or 3xx responses: 11
  Socket errors: connect 0, read 2, write 0, timeout 3
Requests/sec:  68480.17
Transfer/sec:      7.71MB
`

func TestParseWrk(t *testing.T) {
	w, err := parseWrk(wrkOut)
	if err != nil {
		t.Fatal(err)
	}
	if w.PerSec != 68480.17 || w.Requests != 75311 || w.Non2xx != 11 || w.SockErrs != 5 || w.P99ms != 2.2 {
		t.Fatalf("parsed %+v", w)
	}
	if g := goodput(w); math.Abs(g-68480.17*(75300.0/75311)) > 1e-6 {
		t.Fatalf("goodput %v", g)
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused"); err == nil {
		t.Fatal("want an error without Requests/sec")
	}
}

func TestParseBench(t *testing.T) {
	out := `goos: linux
pkg: github.com/chaosrun/chaosrun/targets/platform
BenchmarkServerPath/plain-net-http-mux-2         	 4779324	        70.79 ns/op	       2 B/op	       1 allocs/op
BenchmarkServerPath/plain-net-http-mux-2         	 4779324	        72.00 ns/op	       2 B/op	       1 allocs/op
BenchmarkServerPath/plain-net-http-mux-2         	 4779324	        90.00 ns/op	       2 B/op	       1 allocs/op
BenchmarkBalancerPick/p2c-2                      	 5780394	        62.13 ns/op	       0 B/op	       0 allocs/op
pkg: github.com/chaosrun/chaosrun/targets/kvdispatcher
BenchmarkQoSPath-2   	  941869	       380.4 ns/op	       0 B/op	       0 allocs/op
PASS
`
	got := parseBench(out)
	if len(got) != 3 {
		t.Fatalf("got %d benchmarks: %+v", len(got), got)
	}
	if g := got[0]; g.Name != "ServerPath/plain-net-http-mux" || g.NsOp != 72 || g.Runs != 3 || g.AllocsOp != 1 || !strings.HasSuffix(g.Pkg, "/platform") {
		t.Fatalf("first: %+v", g)
	}
	if g := got[1]; g.Name != "BalancerPick/p2c" || g.NsOp != 62.13 {
		t.Fatalf("second: %+v", g)
	}
	if g := got[2]; g.Name != "QoSPath" || !strings.HasSuffix(g.Pkg, "/kvdispatcher") {
		t.Fatalf("third: %+v", g)
	}
}

func TestFaultLags(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	var evs []record.FaultEvent
	for i := range 100 {
		evs = append(evs, record.FaultEvent{Fault: fmt.Sprint("f", i), Kind: "latency", Action: record.Applied,
			Scheduled: t0, Actual: t0.Add(time.Duration(i+1) * time.Millisecond)})
	}
	evs = append(evs, record.FaultEvent{Action: record.Failed, Scheduled: t0, Actual: t0.Add(time.Hour)})
	st := faultLags(evs)
	if st.Events != 100 || st.Failed != 1 || st.P50ms != 50 || st.P99ms != 99 || st.Max != 100 || st.Worst != "f99 (latency) applied" {
		t.Fatalf("lags %+v", st)
	}
}

// TestWindowLines checks the synthetic ingest stream decodes cleanly and
// holds the samples it claims.
func TestWindowLines(t *testing.T) {
	lines, perWindow, err := windowLines(2, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if perWindow != 100*samplesPerRequest {
		t.Fatalf("%d samples per window, want %d", perWindow, 100*samplesPerRequest)
	}
	var in strings.Builder
	in.WriteString(`{"type":"hello","version":1,"extension":"test"}` + "\n")
	for i, l := range lines {
		in.WriteString(strings.Replace(l, "%s", time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339), 1))
	}
	in.WriteString(`{"type":"end","dropped":0}` + "\n")
	sum, err := stream.Decode(strings.NewReader(in.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Windows) != 2 || !sum.Ended {
		t.Fatalf("%d windows, ended %v", len(sum.Windows), sum.Ended)
	}
	var samples int64
	for _, s := range sum.Windows[0].Series {
		samples += s.Count
	}
	if samples != perWindow {
		t.Fatalf("window holds %d samples, want %d", samples, perWindow)
	}
}

// TestFiguresTableIsResults: the bench table in docs/figures.md is exactly
// what results.json says (`go run ./bench -render bench/results.json -markdown`).
func TestFiguresTableIsResults(t *testing.T) {
	res, err := Load("results.json")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	if err := res.WriteMarkdown(&want); err != nil {
		t.Fatal(err)
	}
	const page = "../docs/figures.md"
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	head := "| section | figure | value | reference (same run) | ratio | goal |\n"
	i := strings.Index(string(doc), head)
	if i < 0 {
		t.Fatalf("%s has no bench table (a line %q)", page, strings.TrimSpace(head))
	}
	got := string(doc[i:])
	if end := strings.Index(got, "\n\n"); end >= 0 {
		got = got[:end+1]
	}
	if got != want.String() {
		t.Errorf("the bench table in docs/figures.md differs from bench/results.json; paste the output of\n  go run ./bench -render bench/results.json -markdown\ngot:\n%s\nwant:\n%s", got, want.String())
	}
}

func TestMergeResults(t *testing.T) {
	dir := t.TempDir()
	base := &Results{Version: ResultsVersion, Date: "2026-01-01", Sections: []Section{
		{Name: "load", Rows: []Row{{Name: "old", Value: 1}}}, {Name: "ingest", Rows: []Row{{Name: "kept", Value: 2}}}}}
	part := &Results{Version: ResultsVersion, Date: "2026-01-02", Command: "go run ./bench -only loadgen", Wall: "5m0s",
		Machine: Machine{Tools: map[string]string{"k6": "v1"}}, Notes: []string{"a subset"},
		Sections: []Section{{Name: "load", Rows: []Row{{Name: "new", Value: 3, Ref: "r", RefValue: 1, Goal: AtLeast(2)}}}, {Name: "extra"}}}
	into, from := filepath.Join(dir, "results.json"), filepath.Join(dir, "partial.json")
	if err := base.Save(into); err != nil {
		t.Fatal(err)
	}
	if err := part.Save(from); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for range 2 { // a second merge of the same run changes nothing
		if err := mergeResults(into, from, &out); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Load(into)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, s := range got.Sections {
		names = append(names, s.Name+":"+strings.Join(rowNames(s), ","))
	}
	if strings.Join(names, " ") != "load:new ingest:kept extra:" {
		t.Fatalf("sections after the merge: %v", names)
	}
	if r := got.Sections[0].Rows[0]; r.Pass == nil || !*r.Pass {
		t.Fatalf("merged row not finished: %+v", r)
	}
	if got.Date != "2026-01-01" || got.Machine.Tools["k6"] != "v1" || len(got.Notes) != 3 || !strings.Contains(got.Notes[0], "2026-01-02") {
		t.Fatalf("date %s, tools %v, notes %q", got.Date, got.Machine.Tools, got.Notes)
	}
}

func rowNames(s Section) []string {
	var n []string
	for _, r := range s.Rows {
		n = append(n, r.Name)
	}
	return n
}
