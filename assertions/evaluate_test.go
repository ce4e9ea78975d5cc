package assertions

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// encodeHist builds a Series.Hist from values in k6 units.
func encodeHist(t testing.TB, vals ...float64) string {
	t.Helper()
	h := record.NewHist()
	for _, v := range vals {
		if err := h.RecordValue(int64(math.Round(v * 1000))); err != nil {
			t.Fatal(err)
		}
	}
	s, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func trend(t testing.TB, metric string, tags map[string]string, vals ...float64) record.Series {
	s := record.Series{Metric: metric, Kind: record.Trend, Tags: tags, Count: int64(len(vals)), Hist: encodeHist(t, vals...)}
	for i, v := range vals {
		s.Sum += v
		if i == 0 || v < s.Min {
			s.Min = v
		}
		if i == 0 || v > s.Max {
			s.Max = v
		}
	}
	return s
}

// testRun is 60 one-second windows. Window i carries:
//   - sec (counter): one sample adding i, so sum = Σ i and count = windows
//   - http_reqs{api:A} (counter): 10 samples adding 10
//   - http_req_failed{api:A} (rate): 10 samples, 1 non-zero while slow is in force
//   - http_req_duration{api:A} (trend): 10 samples of 10ms, or 100ms while slow
//   - http_req_duration{api:B} (trend): 4 samples of 20ms always
//
// Fault slow is applied at 20.3s and reverted at 40.2s (actual times); its
// scheduled times (20s, 40s) must not matter.
func testRun(t testing.TB, applied, reverted float64) *record.Run {
	run := &record.Run{Start: t0, End: at(60)}
	for i := range 60 {
		slow := float64(i) >= math.Ceil(applied) && float64(i)+1 <= reverted
		d := 10.0
		fails := int64(0)
		if slow {
			d, fails = 100, 1
		}
		durs := make([]float64, 10)
		for j := range durs {
			durs[j] = d
		}
		a := map[string]string{"api": "A"}
		run.Windows = append(run.Windows, record.Window{Start: at(float64(i)), Series: []record.Series{
			{Metric: "sec", Kind: record.Counter, Count: 1, Sum: float64(i)},
			{Metric: "http_reqs", Kind: record.Counter, Tags: a, Count: 10, Sum: 10},
			{Metric: "http_req_failed", Kind: record.Rate, Tags: a, Count: 10, NonZero: fails},
			trend(t, "http_req_duration", a, durs...),
			trend(t, "http_req_duration", map[string]string{"api": "B"}, 20, 20, 20, 20),
		}})
	}
	run.Faults = []record.FaultEvent{
		{Fault: "slow", Kind: "latency", Action: record.Applied, Scheduled: at(20), Actual: at(applied)},
		{Fault: "slow", Kind: "latency", Action: record.Reverted, Scheduled: at(40), Actual: at(reverted)},
	}
	return run
}

// sumTo is Σ i for i in [a, b].
func sumTo(a, b int) float64 { return float64((a + b) * (b - a + 1) / 2) }

func TestEvaluateWindows(t *testing.T) {
	run := testRun(t, 20.3, 40.2)
	tests := []struct {
		name     string
		window   string
		settle   time.Duration
		desc     string
		from, to time.Duration
		first    int // first and last windows included
		last     int
	}{
		{"whole", "", 0, "whole", 0, 60 * time.Second, 0, 59},
		{"before: 19 ends at 20 ≤ 20.3", "before slow", 0, "before slow", 0, 20300 * time.Millisecond, 0, 19},
		{"during: 20 starts before 20.3, 40 ends after 40.2", "during slow", 0, "during slow", 20300 * time.Millisecond, 40200 * time.Millisecond, 21, 39},
		{"during with settle", "during slow", 2 * time.Second, "during slow +2s settle", 22300 * time.Millisecond, 40200 * time.Millisecond, 23, 39},
		{"after", "after slow", 0, "after slow", 40200 * time.Millisecond, 60 * time.Second, 41, 59},
		{"before the first fault", "before", 0, "before slow", 0, 20300 * time.Millisecond, 0, 19},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def := scenario.Assertion{Name: "a", Metric: "sec", Window: tc.window, Settle: scenario.Duration(tc.settle),
				Checks: scenario.Checks("sum == "+formatNum(sumTo(tc.first, tc.last)), "count >= 0")}
			vs := Evaluate(run, []scenario.Assertion{def})
			if len(vs) != 2 {
				t.Fatalf("got %d verdicts, want 2", len(vs))
			}
			v := vs[0]
			if v.Error != "" || !v.Pass {
				t.Fatalf("verdict %+v: want a pass with windows %d..%d", v, tc.first, tc.last)
			}
			if v.Window != tc.desc || time.Duration(v.From) != tc.from || time.Duration(v.To) != tc.to {
				t.Errorf("window %q [%v, %v), want %q [%v, %v)", v.Window, time.Duration(v.From), time.Duration(v.To), tc.desc, tc.from, tc.to)
			}
			if want := int64(tc.last - tc.first + 1); v.Samples != want {
				t.Errorf("Samples = %d, want %d", v.Samples, want)
			}
		})
	}
}

func TestEvaluateExactBoundaries(t *testing.T) {
	// Applied at exactly 20s, reverted at exactly 40s: window 20 is the
	// first during, window 19 the last before, 40 the first after.
	run := testRun(t, 20, 40)
	cases := map[string]float64{
		"before slow": sumTo(0, 19),
		"during slow": sumTo(20, 39),
		"after slow":  sumTo(40, 59),
	}
	for w, want := range cases {
		v := Evaluate(run, []scenario.Assertion{{Name: "a", Metric: "sec", Window: w, Checks: scenario.Checks("sum == 0")}})[0]
		if v.Observed != want {
			t.Errorf("%s: sum = %v, want %v", w, v.Observed, want)
		}
	}
	// A settle of 999ms still excludes window 20; 0 includes it.
	v := Evaluate(run, []scenario.Assertion{{Name: "a", Metric: "sec", Window: "during slow",
		Settle: scenario.Duration(999 * time.Millisecond), Checks: scenario.Checks("min >= 0")}})
	if v[0].Error == "" {
		t.Errorf("min on a counter: want an error, got %+v", v[0])
	}
	v = Evaluate(run, []scenario.Assertion{{Name: "a", Metric: "sec", Window: "during slow",
		Settle: scenario.Duration(999 * time.Millisecond), Checks: scenario.Checks("sum == 0")}})
	if v[0].Observed != sumTo(21, 39) {
		t.Errorf("settle 999ms: sum = %v, want %v", v[0].Observed, sumTo(21, 39))
	}
}

func TestEvaluateChecks(t *testing.T) {
	run := testRun(t, 20.3, 40.2)
	tests := []struct {
		name, metric, window, check string
		observed, bound             float64
		unit                        string
		samples                     int64
		pass                        bool
	}{
		{"trend p99 during", "http_req_duration{api:A}", "during slow", "p(99) < 250ms", 100, 250, "ms", 190, true},
		{"trend p99 vs baseline fails", "http_req_duration{api:A}", "during slow", "p(99) < 1.5 * baseline", 100, 15, "ms", 190, false},
		{"isolated api vs baseline passes", "http_req_duration{api:B}", "during slow", "p(99) < 1.5 * baseline", 20, 30, "ms", 76, true},
		{"baseline plus offset", "http_req_duration{api:B}", "during slow", "p(99) <= baseline + 0.5s", 20, 520, "ms", 76, true},
		{"med", "http_req_duration{api:A}", "before slow", "med == 10", 10, 10, "ms", 200, true},
		{"avg over both apis", "http_req_duration", "whole", "avg > 0", (20*10*10 + 19*10*100 + 21*10*10 + 60*4*20) / float64(600+240), 0, "ms", 840, true},
		{"min and max", "http_req_duration{api:A}", "whole", "max == 100", 100, 100, "ms", 600, true},
		{"trend count", "http_req_duration{api:A}", "during slow", "count == 190", 190, 190, "", 190, true},
		{"trend rate per second", "http_req_duration{api:A}", "during slow", "rate == 10", 10, 10, "", 190, true},
		{"rate metric", "http_req_failed{api:A}", "during slow", "rate < 0.01", 0.1, 0.01, "", 190, false},
		{"rate metric before", "http_req_failed{api:A}", "before slow", "rate < 0.01", 0, 0.01, "", 200, true},
		{"rate metric sum", "http_req_failed", "whole", "sum == 19", 19, 19, "", 600, true},
		{"counter count is the total", "http_reqs", "after slow", "count == 190", 190, 190, "", 190, true},
		{"counter rate per second", "http_reqs{api:A}", "whole", "rate == 10", 10, 10, "", 600, true},
		{"counter rate with settle", "http_reqs", "during slow", "rate >= 10", 10, 10, "", 190, true},
		{"negated tag", "http_req_duration{api:!A}", "whole", "max < 21", 20, 21, "ms", 240, true},
		{"duration unit on custom metric", "sec", "whole", "sum < 1s", sumTo(0, 59), 1000, "ms", 60, false},
		{"k6: no spaces, ===", "http_reqs{api:A}", "whole", "count===600", 600, 600, "", 600, true},
		{"k6: p(0) is the minimum", "http_req_duration{api:A}", "whole", "p(0)>=10", 10, 10, "ms", 600, true},
		{"k6: exponent", "http_req_duration{api:A}", "during slow", "p(95)<1e2", 100, 100, "ms", 190, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Evaluate(run, []scenario.Assertion{{Name: "a", Metric: tc.metric, Window: tc.window, Checks: scenario.Checks(tc.check)}})[0]
			if v.Error != "" {
				t.Fatalf("unexpected error: %s", v.Error)
			}
			if math.Abs(v.Observed-tc.observed) > 1e-9 || math.Abs(v.Bound-tc.bound) > 1e-9 || v.Unit != tc.unit ||
				v.Samples != tc.samples || v.Pass != tc.pass || v.Check != tc.check || v.Assertion != "a" || v.Metric != tc.metric {
				t.Errorf("verdict %+v\nwant observed=%v bound=%v unit=%q samples=%d pass=%v", v, tc.observed, tc.bound, tc.unit, tc.samples, tc.pass)
			}
		})
	}
}

func TestEvaluateErrors(t *testing.T) {
	run := testRun(t, 20.3, 40.2)
	failed := testRun(t, 20.3, 40.2)
	failed.Faults = []record.FaultEvent{{Fault: "slow", Action: record.Failed, Error: "apply: HTTP 500: boom", Actual: at(20)}}
	nofaults := testRun(t, 20.3, 40.2)
	nofaults.Faults = nil
	tests := []struct {
		name string
		run  *record.Run
		def  scenario.Assertion
		want string
	}{
		{"missing fault", run, scenario.Assertion{Metric: "sec", Window: "during vault-down", Checks: scenario.Checks("sum > 0")},
			"fault vault-down was never applied"},
		{"failed fault", failed, scenario.Assertion{Metric: "sec", Window: "during slow", Checks: scenario.Checks("sum > 0")},
			"fault slow was never applied: apply: HTTP 500: boom"},
		{"baseline of a failed fault", failed, scenario.Assertion{Metric: "sec", Checks: scenario.Checks("sum < baseline")},
			"baseline: window \"before\" refers to the first fault, but no fault was applied"},
		{"no samples: unknown metric", run, scenario.Assertion{Metric: "nope", Checks: scenario.Checks("count == 0")},
			"no samples of nope in whole"},
		{"no samples: tag filter", run, scenario.Assertion{Metric: "http_reqs{api:C}", Window: "during slow", Settle: scenario.Duration(time.Second), Checks: scenario.Checks("count == 0")},
			"no samples of http_reqs{api:C} in during slow +1s settle"},
		{"no samples: settle past the end", run, scenario.Assertion{Metric: "sec", Window: "during slow", Settle: scenario.Duration(30 * time.Second), Checks: scenario.Checks("sum >= 0")},
			"no samples of sec in during slow +30s settle"},
		{"bad check", run, scenario.Assertion{Metric: "sec", Checks: scenario.Checks("p(99) =< 5")},
			`check "p(99) =< 5": column 7: expected a comparison operator`},
		{"bad metric", run, scenario.Assertion{Metric: "sec{", Checks: scenario.Checks("sum > 0")},
			`metric "sec{": column 5: expected a tag name`},
		{"bad window", run, scenario.Assertion{Metric: "sec", Window: "amid slow", Checks: scenario.Checks("sum > 0")},
			`window "amid slow": column 1: expected whole`},
		{"agg not for kind", run, scenario.Assertion{Metric: "http_req_failed", Checks: scenario.Checks("p(99) < 1")},
			"p(99) is not defined for http_req_failed, a rate metric (allowed: rate, avg, count, sum)"},
		{"mixed kinds", mixedRun(t), scenario.Assertion{Metric: "x", Checks: scenario.Checks("count > 0")},
			"x matches series of kinds counter and trend; narrow the tag filter"},
		{"no baseline window", nofaults, scenario.Assertion{Metric: "sec", Checks: scenario.Checks("sum < 2 * baseline")},
			"baseline: window \"before\" refers to the first fault, but no fault was applied"},
		{"no checks", run, scenario.Assertion{Metric: "sec"}, "assertion has no checks"},
		{"corrupt histogram", corruptRun(t), scenario.Assertion{Metric: "d", Checks: scenario.Checks("p(50) < 1")}, "bad histogram"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.def.Name = "a"
			vs := Evaluate(tc.run, []scenario.Assertion{tc.def})
			if len(vs) != 1 {
				t.Fatalf("got %d verdicts", len(vs))
			}
			if vs[0].Pass || !strings.Contains(vs[0].Error, tc.want) {
				t.Errorf("verdict %+v\nwant a failure with error containing %q", vs[0], tc.want)
			}
		})
	}
}

func mixedRun(t testing.TB) *record.Run {
	return &record.Run{Start: t0, End: at(2), Windows: []record.Window{
		{Start: at(0), Series: []record.Series{{Metric: "x", Kind: record.Counter, Count: 1, Sum: 1}}},
		{Start: at(1), Series: []record.Series{trend(t, "x", nil, 1)}},
	}}
}

func corruptRun(t testing.TB) *record.Run {
	s := trend(t, "d", nil, 1, 2)
	s.Hist = "HISTFAAAA"
	return &record.Run{Start: t0, End: at(1), Windows: []record.Window{{Start: at(0), Series: []record.Series{s}}}}
}

func TestEvaluateBaselineWindow(t *testing.T) {
	run := testRun(t, 20.3, 40.2)
	// Against the "after" window the slow api's p99 is 10ms again.
	v := Evaluate(run, []scenario.Assertion{{Name: "a", Metric: "http_req_duration{api:A}", Window: "during slow",
		Baseline: "after slow", Checks: scenario.Checks("p(99) > 5 * baseline")}})[0]
	if v.Error != "" || !v.Pass || v.Bound != 50 {
		t.Errorf("verdict %+v, want a pass with bound 50", v)
	}
	v = Evaluate(run, []scenario.Assertion{{Name: "a", Metric: "sec", Baseline: "during nope", Checks: scenario.Checks("sum > baseline")}})[0]
	if v.Pass || v.Error != "baseline: fault nope was never applied" {
		t.Errorf("verdict %+v", v)
	}
}

func TestQuantilesFromMergedWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	run := &record.Run{Start: t0, End: at(30)}
	var all []float64
	for i := range 30 {
		vals := make([]float64, 500)
		for j := range vals {
			// A long tail: log-normal-ish around 20ms, up to seconds.
			vals[j] = math.Round(math.Exp(3+rng.NormFloat64()*(0.5+float64(i)/30))*1000) / 1000
		}
		all = append(all, vals...)
		run.Windows = append(run.Windows, record.Window{Start: at(float64(i)), Series: []record.Series{trend(t, "d", nil, vals...)}})
	}
	slices.Sort(all)
	for _, q := range []float64{1, 50, 90, 99, 99.9, 100} {
		exact := all[int(math.Ceil(q/100*float64(len(all))))-1]
		v := Evaluate(run, []scenario.Assertion{{Name: "q", Metric: "d", Checks: scenario.Checks("p(" + formatNum(q) + ") > 0")}})[0]
		if v.Error != "" {
			t.Fatal(v.Error)
		}
		if rel := math.Abs(v.Observed-exact) / exact; rel > 0.01 {
			t.Errorf("p(%v) = %v, exact %v: off by %.2f%%", q, v.Observed, exact, rel*100)
		}
		if v.Samples != int64(len(all)) {
			t.Errorf("Samples = %d", v.Samples)
		}
	}
}

// TestEvaluateK6Grammar: a gauge's value is its last value, and window
// "all" takes the partial first and last seconds that "whole" leaves out.
func TestEvaluateK6Grammar(t *testing.T) {
	run := &record.Run{Start: at(0.4), End: at(2.5)}
	for i, last := range []float64{7, 3, 5} {
		run.Windows = append(run.Windows, record.Window{Start: at(float64(i)), Series: []record.Series{
			{Metric: "vus", Kind: record.Gauge, Count: 2, Min: 1, Max: 9, Last: last},
			{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10},
		}})
	}
	tests := []struct {
		metric, window, check string
		observed              float64
		samples               int64
	}{
		{"vus", "all", "value == 5", 5, 6},
		{"vus", "whole", "value == 3", 3, 2},
		{"vus", "all", "max == 9", 9, 6},
		{"http_reqs", "all", "count == 30", 30, 30},
		{"http_reqs", "whole", "count == 10", 10, 10},
		{"http_reqs", "all", "rate == 10", 10, 30},
	}
	for _, tc := range tests {
		v := Evaluate(run, []scenario.Assertion{{Name: "a", Metric: tc.metric, Window: tc.window, Checks: scenario.Checks(tc.check)}})[0]
		if v.Error != "" || !v.Pass || v.Observed != tc.observed || v.Samples != tc.samples {
			t.Errorf("%s %s %q: %+v, want observed %v over %d samples", tc.metric, tc.window, tc.check, v, tc.observed, tc.samples)
		}
	}
	v := Evaluate(run, []scenario.Assertion{{Name: "a", Metric: "http_reqs", Checks: scenario.Checks("value == 1")}})[0]
	if v.Pass || !strings.Contains(v.Error, "value is not defined for http_reqs, a counter metric (allowed: count, sum, rate, avg)") {
		t.Errorf("value of a counter: %+v", v)
	}
}

func TestParseThresholdKey(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"http_req_duration", "http_req_duration", ""},
		{"http_req_duration{type:API}", "http_req_duration{type:API}", ""},
		{"http_req_duration{ status : '200' , scenario:\"a b\"}", `http_req_duration{status:200,scenario:"a b"}`, ""},
		{"checks{check:ok:yes}", `checks{check:"ok:yes"}`, ""},
		{"http_req_duration{group:::login}", `http_req_duration{group:"::login"}`, ""},
		{"my_trend{flag}", "", `tag "flag" has no value`},
		{"my_trend{flag:''}", `my_trend{flag:""}`, ""},
		{"x{a:1", "", "not matched"},
		{"x}a:1{", "", "expected name{tag:value,...}"},
		{"x{a:1}y", "", "expected name{tag:value,...}"},
		{"{a:1}", "", "no metric name"},
		{"x{a:1,a:2}", "", `tag "a" is given twice`},
		{"x{:1}", "", "a tag has no name"},
	}
	for _, tc := range tests {
		m, err := ParseThresholdKey(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseThresholdKey(%q) = %v, %v; want error %q", tc.in, m, err, tc.err)
			}
		case err != nil || m.String() != tc.want:
			t.Errorf("ParseThresholdKey(%q) = %q, %v; want %q", tc.in, m, err, tc.want)
		default:
			if back, err := ParseMetric(m.String()); err != nil || back.String() != tc.want {
				t.Errorf("%q does not read back as a selector: %v", m, err)
			}
		}
	}
}
