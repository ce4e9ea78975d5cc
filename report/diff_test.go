package report

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
)

var synthVerdicts = []record.Verdict{
	verdictDuring("a-p50", "http_req_duration{api:A}", "med < 10ms"),
	verdictDuring("a-errors", "http_req_failed{api:A}", "rate < 0.05"),
	verdictDuring("b-goodput", "http_req_failed{api:B}", "count > 100"),
}

func apisWith(aLat, bLat float64, aFail, bFail float64) []synthAPI {
	return []synthAPI{
		{name: "A", rate: 100, latency: lognormal(aLat), fails: failDuring(aFail)},
		{name: "B", rate: 40, latency: lognormal(bLat), fails: failDuring(bFail)},
	}
}

func changeOf(t *testing.T, d *Diff, name, window string) Change {
	t.Helper()
	for _, c := range d.Changes {
		if c.Name == name && (window == "" || c.Window == window) {
			return c
		}
	}
	t.Fatalf("no change %q in %q", name, window)
	return Change{}
}

// TestCompareSynthetic checks the verdicts of Compare on synthetic runs
// whose differences are known: none, +30% latency, more failures, half the
// goodput, and a change outside the gated phases.
func TestCompareSynthetic(t *testing.T) {
	base := synthRun(t, 1, apisWith(2, 5, 0.01, 0.5), synthVerdicts)
	tests := []struct {
		name      string
		head      *record.Run
		opt       DiffOptions
		regressed bool
		want      map[string]string // "figure@window" (window may be empty) → verdict
	}{
		{name: "same code, other seed", head: synthRun(t, 2, apisWith(2, 5, 0.01, 0.5), synthVerdicts),
			want: map[string]string{"a-p50: med < 10ms@": NoChange, "a-errors: rate < 0.05@": NoChange, "p50 A@during slow": NoChange, "goodput B@during slow": NoChange}},
		{name: "30% slower A", head: synthRun(t, 3, apisWith(2.6, 5, 0.01, 0.5), synthVerdicts), regressed: true,
			want: map[string]string{"a-p50: med < 10ms@": Regression, "p50 A@during slow": Regression, "p50 B@during slow": NoChange, "p50 A@before slow": WorseInfo}},
		{name: "A fails 10% during the fault", head: synthRun(t, 4, apisWith(2, 5, 0.10, 0.5), synthVerdicts), regressed: true,
			want: map[string]string{"a-errors: rate < 0.05@": Regression, "failure rate A@during slow": Regression, "p50 A@during slow": NoChange}},
		{name: "B goodput halved", head: synthRun(t, 5, apisWith(2, 5, 0.01, 0.75), synthVerdicts), regressed: true,
			want: map[string]string{"goodput B@during slow": Regression, "b-goodput: count > 100@": NoChange}},
		{name: "B faster is an improvement", head: synthRun(t, 6, apisWith(2, 3, 0.01, 0.5), synthVerdicts),
			want: map[string]string{"p50 B@during slow": Improvement}},
		{name: "assertions only", head: synthRun(t, 5, apisWith(2, 5, 0.01, 0.75), synthVerdicts), opt: DiffOptions{NoKeyFigures: true},
			want: map[string]string{"a-p50: med < 10ms@": NoChange}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Compare([]*record.Run{base}, []*record.Run{tc.head}, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Regressed(); got != tc.regressed {
				t.Errorf("Regressed() = %v, want %v\n%s", got, tc.regressed, tableOf(d))
			}
			for key, want := range tc.want {
				name, window, _ := strings.Cut(key, "@")
				if c := changeOf(t, d, name, window); c.Verdict != want {
					t.Errorf("%s: verdict %q, want %q (base %g head %g, median %g→%g [%g, %g])", key, c.Verdict, want, c.Base, c.Head, c.BaseMedian, c.HeadMedian, c.Lo, c.Hi)
				}
			}
		})
	}
}

// TestCompareRepeatedRuns: several records per side are resampled as runs.
func TestCompareRepeatedRuns(t *testing.T) {
	var base, same, slow []*record.Run
	for i := range uint64(3) {
		base = append(base, synthRun(t, 10+i, apisWith(2, 5, 0.01, 0.5), synthVerdicts))
		same = append(same, synthRun(t, 20+i, apisWith(2, 5, 0.01, 0.5), synthVerdicts))
		slow = append(slow, synthRun(t, 30+i, apisWith(2.6, 5, 0.01, 0.5), synthVerdicts))
	}
	d, err := Compare(base, same, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Regressed() || d.BaseRuns["synthetic"] != 3 || d.HeadRuns["synthetic"] != 3 {
		t.Errorf("same code, 3 runs a side: regressed %v, runs %v/%v\n%s", d.Regressed(), d.BaseRuns, d.HeadRuns, tableOf(d))
	}
	d, err = Compare(base, slow, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Regressed() {
		t.Errorf("30%% slower, 3 runs a side: not flagged\n%s", tableOf(d))
	}
}

// TestComparePointValues: Base and Head are exactly the figure over every
// window, as the HDR histogram merged over the phase gives it.
func TestComparePointValues(t *testing.T) {
	base := synthRun(t, 1, apisWith(2, 5, 0.01, 0.5), synthVerdicts)
	head := synthRun(t, 3, apisWith(2.6, 5, 0.2, 0.5), synthVerdicts)
	d, err := Compare([]*record.Run{base}, []*record.Run{head}, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r    *record.Run
		got  float64
		what string
	}{{base, changeOf(t, d, "p99 A", "during slow").Base, "p99"}, {head, changeOf(t, d, "p99 A", "during slow").Head, "p99"},
		{base, changeOf(t, d, "failure rate A", "during slow").Base, "rate"}, {head, changeOf(t, d, "failure rate A", "during slow").Head, "rate"}} {
		h := record.NewHist()
		var failed, n int64
		var mn, mx = math.Inf(1), math.Inf(-1)
		for _, w := range tc.r.Windows[10:20] {
			for _, s := range w.Series {
				if s.Tags["api"] != "A" {
					continue
				}
				if s.Metric == "http_req_failed" {
					failed += s.NonZero
					n += s.Count
					continue
				}
				x, err := record.DecodeHist(s.Hist)
				if err != nil {
					t.Fatal(err)
				}
				h.Merge(x)
				mn, mx = min(mn, s.Min), max(mx, s.Max)
			}
		}
		want := float64(failed) / float64(n)
		if tc.what == "p99" {
			want = min(max(float64(h.ValueAtQuantile(99))/1000, mn), mx)
		}
		if tc.got != want {
			t.Errorf("%s of seed %d: %v, want %v", tc.what, tc.r.Seed, tc.got, want)
		}
	}
}

// TestAggregateMatchesVerdicts: on recorded runs, the diff's aggregation
// over a verdict's window gives exactly the value the assertion observed.
func TestAggregateMatchesVerdicts(t *testing.T) {
	for _, name := range []string{"base1", "base2", "halved1", "lat20a"} {
		r := recorded(t, name)
		for _, v := range r.Verdicts {
			chk, err := assertions.ParseCheck(v.Check)
			if err != nil {
				t.Fatal(err)
			}
			m, err := assertions.ParseMetric(v.Metric)
			if err != nil {
				t.Fatal(err)
			}
			st := stat{Agg: chk.Agg}
			cells, err := cellsIn(r, m, time.Duration(v.From), time.Duration(v.To), st)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := aggregate(cells, st)
			if !ok || got != v.Observed {
				t.Errorf("%s %s: %v (ok %v), the verdict observed %v", name, v.Assertion, got, ok, v.Observed)
			}
		}
	}
}

func TestCompareIsSeeded(t *testing.T) {
	base, head := recorded(t, "base1"), recorded(t, "halved1")
	d1, err := Compare([]*record.Run{base}, []*record.Run{head}, DiffOptions{Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := Compare([]*record.Run{base}, []*record.Run{head}, DiffOptions{Seed: 42})
	if !reflect.DeepEqual(d1, d2) {
		t.Error("two comparisons with one seed differ")
	}
}

// TestDiffRecordedRuns is the acceptance test on real runs of
// bank-slow-vault (30 s of load, the vault slowed by 2 s for 10 s), recorded
// on this project's 2-core machines while other loads ran: five runs of the
// same code give ten pairs, of which at least nine must show no significant
// regression; a halved vault bulkhead (bank.vault-limit=4) and added ledger
// latency (ledger.service-time 1.5 ms and 1.2 ms for 1 ms) must be flagged
// against every baseline run.
func TestDiffRecordedRuns(t *testing.T) {
	bases := []string{"base1", "base2", "base3", "base4", "base5"}
	runs := map[string]*record.Run{}
	recorded := func(t *testing.T, name string) *record.Run {
		if runs[name] == nil {
			runs[name] = recorded(t, name)
		}
		return runs[name]
	}
	flagged := 0
	for i, a := range bases {
		for _, b := range bases[i+1:] {
			d, err := Compare([]*record.Run{recorded(t, a)}, []*record.Run{recorded(t, b)}, DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Regressed() {
				flagged++
				t.Logf("same code %s vs %s flagged:\n%s", a, b, tableOf(d))
			}
		}
	}
	if flagged > 1 {
		t.Errorf("%d of 10 pairs of same-code runs flagged as regressions; at most 1 allowed", flagged)
	}
	for _, reg := range []string{"halved1", "halved2", "halved3", "slowledger1", "slowledger2", "lat20a", "lat20b"} {
		for _, b := range bases {
			d, err := Compare([]*record.Run{recorded(t, b)}, []*record.Run{recorded(t, reg)}, DiffOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !d.Regressed() {
				t.Errorf("%s vs %s: regression not flagged\n%s", b, reg, tableOf(d))
			}
		}
	}
	// Repeated runs: three against two of the same code, three against the
	// halved bulkhead.
	var b3, s2, h3 []*record.Run
	for _, n := range bases[:3] {
		b3 = append(b3, recorded(t, n))
	}
	for _, n := range bases[3:] {
		s2 = append(s2, recorded(t, n))
	}
	for _, n := range []string{"halved1", "halved2", "halved3"} {
		h3 = append(h3, recorded(t, n))
	}
	if d, _ := Compare(b3, s2, DiffOptions{}); d.Regressed() {
		t.Errorf("3 vs 2 runs of the same code flagged:\n%s", tableOf(d))
	}
	if d, _ := Compare(b3, h3, DiffOptions{}); !d.Regressed() {
		t.Errorf("3 runs vs 3 halved-bulkhead runs not flagged:\n%s", tableOf(d))
	}
}

func tableOf(d *Diff) string {
	var b strings.Builder
	d.Table(&b, true)
	return b.String()
}

// TestOneSampleASide: a figure with a sample on each side is not "no
// samples": it is too short to tell noise, and says how short.
func TestOneSampleASide(t *testing.T) {
	base := synthRun(t, 1, apisWith(2, 5, 0.01, 0.5), synthVerdicts)
	head := synthRun(t, 2, apisWith(2, 5, 0.01, 0.5), synthVerdicts)
	// Three seconds during slow, the samples in the last: a trailing
	// short block, which the blocks leave out.
	base.Windows, head.Windows = base.Windows[11:14], head.Windows[11:14]
	for _, r := range []*record.Run{base, head} {
		r.Windows[0].Series, r.Windows[1].Series = nil, nil
	}
	d, _ := Compare([]*record.Run{base}, []*record.Run{head}, DiffOptions{Iterations: 100, NoKeyFigures: true})
	found := false
	for _, c := range d.Changes {
		if strings.Contains(c.Why, "no samples") && !strings.Contains(c.Why, "either side") {
			t.Errorf("%s: %q with one sample a side", c.Name, c.Why)
		}
		found = found || strings.HasPrefix(c.Why, "too short to tell noise: 0 and 0 blocks of 2s")
	}
	if !found {
		t.Errorf("no figure says it is too short to tell noise:\n%s", tableOf(d))
	}
}

// TestCompareNothingCompared: a comparison that compared nothing is an
// error, with the Diff that says what there was.
func TestCompareNothingCompared(t *testing.T) {
	run := synthRun(t, 1, apisWith(2, 5, 0.01, 0.5), synthVerdicts)
	other := synthRun(t, 2, apisWith(2, 5, 0.01, 0.5), synthVerdicts)
	other.Scenario = "another"
	noWindows := *run
	noWindows.Windows = nil
	tests := []struct {
		name       string
		base, head *record.Run
		want       string
	}{
		{"different scenarios", run, other, "no scenario has records on both sides (base: synthetic; head: another)"},
		{"no samples on one side", run, &noWindows, "could be compared (no samples in head)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Compare([]*record.Run{tc.base}, []*record.Run{tc.head}, DiffOptions{Iterations: 100})
			if !errors.Is(err, ErrNothingCompared) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrNothingCompared with %q", err, tc.want)
			}
			if d == nil || d.Compared() != 0 || !strings.HasPrefix(d.Headline(), "NOTHING COMPARED") {
				t.Fatalf("diff %+v", d)
			}
		})
	}
}

// TestTableShowsWhatChanged: by default the table shows only the figures
// that changed significantly and counts the rest; all shows every one.
func TestTableShowsWhatChanged(t *testing.T) {
	base := synthRun(t, 1, apisWith(2, 5, 0.01, 0.5), synthVerdicts)
	head := synthRun(t, 3, apisWith(2.6, 5, 0.01, 0.5), synthVerdicts)
	d, _ := Compare([]*record.Run{base}, []*record.Run{head}, DiffOptions{Iterations: 200})
	var short, all strings.Builder
	d.Table(&short, false)
	d.Table(&all, true)
	if strings.Contains(short.String(), NoChange) || !strings.Contains(short.String(), Regression) ||
		!strings.Contains(short.String(), "not shown (--all shows them)") {
		t.Errorf("default table:\n%s", short.String())
	}
	if !strings.Contains(all.String(), NoChange) || strings.Contains(all.String(), "not shown") {
		t.Errorf("--all table:\n%s", all.String())
	}
}
