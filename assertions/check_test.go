package assertions

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

func TestParseCheck(t *testing.T) {
	tests := []struct {
		in   string
		want Check // Src is filled in from in
	}{
		{"p(99) < 250ms", Check{Agg: record.Agg{Func: record.AggP, P: 99}, Op: OpLT, K: 1, X: 250, Duration: true}},
		{"p(99.9)<=1.5s", Check{Agg: record.Agg{Func: record.AggP, P: 99.9}, Op: OpLE, K: 1, X: 1500, Duration: true}},
		{"p(100) > 500us", Check{Agg: record.Agg{Func: record.AggP, P: 100}, Op: OpGT, K: 1, X: 0.5, Duration: true}},
		{"med >= 2m", Check{Agg: record.Agg{Func: record.AggMed}, Op: OpGE, K: 1, X: 120000, Duration: true}},
		{"avg < 250 ms", Check{Agg: record.Agg{Func: record.AggAvg}, Op: OpLT, K: 1, X: 250, Duration: true}},
		{"rate < 0.01", Check{Agg: record.Agg{Func: record.AggRate}, Op: OpLT, K: 1, X: 0.01}},
		{"rate < .5", Check{Agg: record.Agg{Func: record.AggRate}, Op: OpLT, K: 1, X: 0.5}},
		{"count == 0", Check{Agg: record.Agg{Func: record.AggCount}, Op: OpEQ, K: 1}},
		{"sum != 3", Check{Agg: record.Agg{Func: record.AggSum}, Op: OpNE, K: 1, X: 3}},
		{"min > -5", Check{Agg: record.Agg{Func: record.AggMin}, Op: OpGT, K: 1, X: -5}},
		{"max < 10", Check{Agg: record.Agg{Func: record.AggMax}, Op: OpLT, K: 1, X: 10}},
		{"p(99) < baseline", Check{Agg: record.Agg{Func: record.AggP, P: 99}, Op: OpLT, Baseline: true, K: 1}},
		{"p(99) < 1.5 * baseline", Check{Agg: record.Agg{Func: record.AggP, P: 99}, Op: OpLT, Baseline: true, K: 1.5}},
		{"p(99) < baseline * 2", Check{Agg: record.Agg{Func: record.AggP, P: 99}, Op: OpLT, Baseline: true, K: 2}},
		{"p(99) < baseline + 20ms", Check{Agg: record.Agg{Func: record.AggP, P: 99}, Op: OpLT, Baseline: true, K: 1, X: 20, Duration: true}},
		{"p(99) < 1.2*baseline+0.1s", Check{Agg: record.Agg{Func: record.AggP, P: 99}, Op: OpLT, Baseline: true, K: 1.2, X: 100, Duration: true}},
		{"rate <= baseline - 0.01", Check{Agg: record.Agg{Func: record.AggRate}, Op: OpLE, Baseline: true, K: 1, X: -0.01}},
		{"  avg   >   baseline * 0.5 + 3  ", Check{Agg: record.Agg{Func: record.AggAvg}, Op: OpGT, Baseline: true, K: 0.5, X: 3}},
		// k6's grammar as k6 writes it: no spaces, every operator, value,
		// p(0), exponents and signs (k6 reads values with ParseFloat).
		{"p(95)<200", Check{Agg: record.Agg{Func: record.AggP, P: 95}, Op: OpLT, K: 1, X: 200}},
		{"p(0)>=0", Check{Agg: record.Agg{Func: record.AggP, P: 0}, Op: OpGE, K: 1}},
		{"value===0", Check{Agg: record.Agg{Func: record.AggValue}, Op: OpSEQ, K: 1}},
		{"value==1", Check{Agg: record.Agg{Func: record.AggValue}, Op: OpEQ, K: 1, X: 1}},
		{"count!=3", Check{Agg: record.Agg{Func: record.AggCount}, Op: OpNE, K: 1, X: 3}},
		{"med<=1e3", Check{Agg: record.Agg{Func: record.AggMed}, Op: OpLE, K: 1, X: 1000}},
		{"rate>2.5E-1", Check{Agg: record.Agg{Func: record.AggRate}, Op: OpGT, K: 1, X: 0.25}},
		{"min>+5", Check{Agg: record.Agg{Func: record.AggMin}, Op: OpGT, K: 1, X: 5}},
		{"max < 1e3ms", Check{Agg: record.Agg{Func: record.AggMax}, Op: OpLT, K: 1, X: 1000, Duration: true}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCheck(tc.in)
			if err != nil {
				t.Fatalf("ParseCheck(%q): %v", tc.in, err)
			}
			tc.want.Src = tc.in
			if math.Abs(got.X-tc.want.X) < 1e-9 {
				got.X = tc.want.X
			}
			if got != tc.want {
				t.Errorf("ParseCheck(%q)\n got: %+v\nwant: %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseCheckErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", `column 1: expected an aggregation (p(N), med, avg, min, max, count, rate, value, sum), found the end`},
		{"p99 < 5", `column 1: expected an aggregation (p(N), med, avg, min, max, count, rate, value, sum), found "p99"`},
		{"p[99] < 5", `column 2: expected "(" after p, found "["`},
		{"p() < 5", `column 3: expected a percentile in [0, 100], found ")"`},
		{"p(100.5) < 5", `column 3: expected a percentile in [0, 100], found 100.5`},
		{"value ==== 5", `column 10: expected a number, a duration (e.g. 250ms) or baseline, found "="`},
		{"avg < 2e", `column 8: expected a duration unit (us, ms, s, m), found "e"`},
		{"avg < 1e400", `column 7: expected a number, a duration (e.g. 250ms) or baseline, found "1e400"`},
		{"values < 5", `column 1: expected an aggregation (p(N), med, avg, min, max, count, rate, value, sum), found "values"`},
		{"p(99 < 5", `column 6: expected ")", found "<"`},
		{"p(99) => 5", `column 7: expected a comparison operator (<, <=, >, >=, ==, ===, !=), found "="`},
		{"p(99) = 5", `column 7: expected a comparison operator (<, <=, >, >=, ==, ===, !=), found "="`},
		{"avg 5", `column 5: expected a comparison operator (<, <=, >, >=, ==, ===, !=), found "5"`},
		{"avg <", `column 6: expected a number, a duration (e.g. 250ms) or baseline, found the end`},
		{"avg < 5parsecs", `column 8: expected a duration unit (us, ms, s, m), found "parsecs"`},
		{"avg < 5 5", `column 9: expected the end of the check, found "5"`},
		{"avg < 1.2.3", `column 7: expected a number, a duration (e.g. 250ms) or baseline, found "1.2.3"`},
		{"count < 5ms", `column 10: expected a plain number for count, found the duration unit "ms"`},
		{"rate < 1s", `column 9: expected a plain number for rate, found the duration unit "s"`},
		{"avg < 2ms * baseline", `column 7: expected a plain number as the factor of baseline, found a duration`},
		{"avg < baseline * 2ms", `column 19: expected a plain number as a factor for baseline, found the unit "ms"`},
		{"avg < baseline *", `column 17: expected a factor for baseline, found the end`},
		{"avg < 2 * base", `column 11: expected "baseline" after "*", found "base"`},
		{"avg < baseline + ", `column 18: expected a number, a duration (e.g. 250ms) or baseline, found the end`},
		{"avg < baseline + baseline", `column 18: expected a number, a duration (e.g. 250ms) or baseline, found "baseline"`},
		{"avg < 5 + 3", `column 9: expected the end of the check, found "+"`},
		{"avg < 5 é", `column 9: expected the end of the check, found "é"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseCheck(tc.in)
			if err == nil {
				t.Fatalf("ParseCheck(%q) succeeded, want %s", tc.in, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("ParseCheck(%q)\n got: %s\nwant: %s", tc.in, err, tc.want)
			}
			if ValidateCheck(tc.in) == nil {
				t.Errorf("ValidateCheck(%q) = nil", tc.in)
			}
		})
	}
}

func TestCheckBoundAndOps(t *testing.T) {
	c, err := ParseCheck("p(99) < 1.5 * baseline + 10ms")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Bound(100); got != 160 {
		t.Errorf("Bound(100) = %v, want 160", got)
	}
	ops := []struct {
		op   Op
		a, b float64
		want bool
	}{
		{OpLT, 1, 2, true}, {OpLT, 2, 2, false}, {OpLE, 2, 2, true}, {OpGT, 3, 2, true},
		{OpGE, 2, 2, true}, {OpGE, 1, 2, false}, {OpEQ, 0, 0, true}, {OpNE, 0, 0, false},
		{OpNE, math.NaN(), 0, false}, {OpLT, math.NaN(), 1, false},
		{OpSEQ, 2, 2, true}, {OpSEQ, 2, 3, false}, {OpSEQ, math.NaN(), math.NaN(), false},
	}
	for _, o := range ops {
		if got := o.op.Holds(o.a, o.b); got != o.want {
			t.Errorf("%v %s %v = %v, want %v", o.a, o.op, o.b, got, o.want)
		}
	}
}

func FuzzParseCheck(f *testing.F) {
	for _, s := range []string{"p(99) < 250ms", "rate < 0.01", "p(99) < 1.5 * baseline + 2ms", "count == 0", "avg<baseline*2", "p(", "é", "min > -5", "value===1e3", "p(0)<+2E-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCheck(s)
		if err != nil {
			var pe *ParseError
			if !asParseError(err, &pe) || pe.Col < 1 || pe.Col > len(s)+1 {
				t.Fatalf("ParseCheck(%q): error %v has no column inside the input", s, err)
			}
			return
		}
		if c.Src != s || c.Op == "" || c.Agg.Func == "" || math.IsNaN(c.X) || math.IsInf(c.X, 0) {
			t.Fatalf("ParseCheck(%q) = %+v: malformed result", s, c)
		}
		if c.Agg.Func == record.AggP && !(c.Agg.P >= 0 && c.Agg.P <= 100) {
			t.Fatalf("ParseCheck(%q): percentile %v out of range", s, c.Agg.P)
		}
		// Re-parsing the canonical form gives the same check.
		canon := c.Agg.String() + " " + string(c.Op) + " " + strings.TrimSpace(rhsString(c))
		c2, err := ParseCheck(canon)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", canon, s, err)
		}
		c2.Src, c2.Duration = c.Src, c.Duration
		if math.Abs(c2.X-c.X) > 1e-9*math.Max(1, math.Abs(c.X)) || c2.K != c.K || c2.Baseline != c.Baseline || c2.Agg != c.Agg || c2.Op != c.Op {
			t.Fatalf("canonical %q of %q parses to %+v, want %+v", canon, s, c2, c)
		}
	})
}

func asParseError(err error, pe **ParseError) bool {
	p, ok := err.(*ParseError)
	*pe = p
	return ok
}

// rhsString writes the bound of c as a check, in ms for durations.
func rhsString(c Check) string {
	x := formatNum(c.X)
	if !c.Baseline {
		return x
	}
	s := formatNum(c.K) + " * baseline"
	if c.X != 0 {
		s += " + " + x
	}
	return s
}

func formatNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
