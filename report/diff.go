package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/bootstrap"
	"github.com/chaosrun/chaosrun/record"
)

// DiffOptions sets how Compare tells a change from noise.
type DiffOptions struct {
	// Iterations is the number of bootstrap replicates (default 2000).
	Iterations int `json:"iterations"`
	// Confidence is the one-sided confidence a change must reach (default
	// 0.99): the replicates' (1−Confidence) quantile of head−base must lie
	// above zero (or the Confidence quantile below it).
	Confidence float64 `json:"confidence"`
	// MinChange is the smallest relative change that counts (default 0.15).
	MinChange float64 `json:"min_change"`
	// MinChangeTail replaces MinChange for tail figures, p(90) and above and
	// max (default 1.5: ×2.5). Measured here: the p99 of a few-ms
	// service moves by up to +120% between two runs of the same code on a
	// shared machine, more than any bootstrap inside one run can see.
	MinChangeTail float64 `json:"min_change_tail"`
	// MinLatency is the smallest latency change that counts, in ms
	// (default 0.2).
	MinLatency float64 `json:"min_latency"`
	// MinRate is the smallest change of a failure rate, as a fraction
	// (default 0.02).
	MinRate float64 `json:"min_rate"`
	// MinThroughput is the smallest change of a per-second rate (default 1).
	MinThroughput float64 `json:"min_throughput"`
	// Seed seeds the bootstrap (default 1): the same inputs give the same
	// verdicts.
	Seed uint64 `json:"seed"`
	// Block is the length in seconds of the blocks the bootstrap resamples
	// (default 2): consecutive seconds are correlated (a 2 s fault makes
	// completions alternate between seconds), blocks keep that together.
	Block int `json:"block"`
	// GateAllPhases makes key figures before and after faults gate too;
	// by default they are reported but only checks and figures during
	// faults fail the diff (the steady phases carry the machine's noise
	// without carrying the scenario's claim).
	GateAllPhases bool `json:"gate_all_phases"`
	// NoKeyFigures compares only the assertions' checks, not the per-API
	// latency, failure rate and goodput of every phase.
	NoKeyFigures bool `json:"no_key_figures"`
}

func (o DiffOptions) withDefaults() DiffOptions {
	if o.Iterations <= 0 {
		o.Iterations = 2000
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.99
	}
	if o.MinChange <= 0 {
		o.MinChange = 0.15
	}
	if o.MinChangeTail <= 0 {
		o.MinChangeTail = 1.5
	}
	if o.MinLatency <= 0 {
		o.MinLatency = 0.2
	}
	if o.MinRate <= 0 {
		o.MinRate = 0.02
	}
	if o.MinThroughput <= 0 {
		o.MinThroughput = 1
	}
	if o.Block <= 0 {
		o.Block = 2
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Change verdicts.
const (
	Regression  = "regression"
	Improvement = "improvement"
	NoChange    = "no significant change"
	NotCompared = "not compared"
	// WorseInfo is a significant worsening of a figure outside the gate.
	WorseInfo = "worse (not gating)"
)

// Change is one compared figure of one scenario.
type Change struct {
	Scenario string `json:"scenario"`
	// Name is the assertion and check, or the key figure ("p99 TransactCheck").
	Name   string `json:"name"`
	Metric string `json:"metric"`
	Window string `json:"window"`
	Stat   string `json:"stat"`
	Unit   string `json:"unit,omitempty"`
	// Base and Head are the figure over every window of every run of each side.
	Base float64 `json:"base"`
	Head float64 `json:"head"`
	// Rel is (Head−Base)/Base; ±Inf when Base is 0.
	Rel Ratio `json:"rel"`
	// BaseMedian and HeadMedian are the medians of the figure over blocks
	// of Block seconds: the statistic the verdict rests on.
	BaseMedian float64 `json:"base_median"`
	HeadMedian float64 `json:"head_median"`
	// Lo and Hi bound HeadMedian−BaseMedian at the options' confidence
	// (bootstrap).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Gating says a regression of this figure fails the diff: assertion
	// checks and figures during faults (all phases with GateAllPhases).
	Gating bool `json:"gating"`
	// HigherIsWorse says which way a regression goes.
	HigherIsWorse bool   `json:"higher_is_worse"`
	Verdict       string `json:"verdict"`
	// Why says why the figure was not compared.
	Why string `json:"why,omitempty"`
}

// Diff is the comparison of two sets of run records.
type Diff struct {
	// SchemaVersion is the version of the diff result's JSON layout
	// (DiffSchemaVersion).
	SchemaVersion int         `json:"schema_version"`
	Options       DiffOptions `json:"options"`
	// Runs counts the records per side per scenario.
	BaseRuns map[string]int `json:"base_runs"`
	HeadRuns map[string]int `json:"head_runs"`
	Changes  []Change       `json:"changes"`
	// Problems are scenarios on one side only and the like.
	Problems []string `json:"problems,omitempty"`
}

// Regressed reports whether any figure regressed significantly.
func (d *Diff) Regressed() bool {
	for _, c := range d.Changes {
		if c.Verdict == Regression {
			return true
		}
	}
	return false
}

// figure is one quantity to compare and how to find it in a run.
type figure struct {
	name, metric, unit string
	stat               stat
	higherIsWorse      bool
	gating             bool
	// window returns the [from, to) offsets of the figure in run r, and its
	// description; ok is false when r lacks it.
	window func(r *record.Run) (from, to time.Duration, desc string, ok bool)
}

// Compare compares head with base, scenario by scenario: every assertion
// check's figure in its window, and (unless NoKeyFigures) per API the p50
// and p99 latency, failure rate and goodput before, during and after every
// fault. Each figure is computed per block of Block seconds; a change is
// significant when the bootstrap interval (blocks, and runs when a side has
// several) of the change of the median block value excludes zero and the
// change exceeds MinChange (MinChangeTail for tails) and its unit's floor.
// Only gating figures (checks, and figures during faults) make Regressed
// true. When nothing could be compared (no scenario on both sides, or no
// figure with samples enough on both), the error is ErrNothingCompared and
// the Diff, returned with it, says what there was.
func Compare(base, head []*record.Run, opt DiffOptions) (*Diff, error) {
	opt = opt.withDefaults()
	d := &Diff{SchemaVersion: DiffSchemaVersion, Options: opt, BaseRuns: map[string]int{}, HeadRuns: map[string]int{}}
	bs, hs := byScenario(base), byScenario(head)
	for n, rs := range bs {
		d.BaseRuns[n] = len(rs)
	}
	for n, rs := range hs {
		d.HeadRuns[n] = len(rs)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x636861_6f7372756e))
	for _, name := range sortedKeys(hs) {
		br, ok := bs[name]
		if !ok {
			d.Problems = append(d.Problems, fmt.Sprintf("%s: no baseline run (new scenario?)", name))
			continue
		}
		figs, err := figures(hs[name], opt)
		if err != nil {
			return nil, fmt.Errorf("diff %s: %w", name, err)
		}
		for _, f := range figs {
			c, err := compareFigure(name, f, br, hs[name], opt, rng)
			if err != nil {
				return nil, fmt.Errorf("diff %s: %s: %w", name, f.name, err)
			}
			d.Changes = append(d.Changes, c)
		}
	}
	for _, name := range sortedKeys(bs) {
		if _, ok := hs[name]; !ok {
			d.Problems = append(d.Problems, fmt.Sprintf("%s: in the baseline but not run now", name))
		}
	}
	return d, d.nothingCompared()
}

func byScenario(rs []*record.Run) map[string][]*record.Run {
	out := map[string][]*record.Run{}
	for _, r := range rs {
		out[r.Scenario] = append(out[r.Scenario], r)
	}
	return out
}

// figures lists what to compare for one scenario: the head's assertion
// checks first, then the key figures.
func figures(head []*record.Run, opt DiffOptions) ([]figure, error) {
	var out []figure
	seen := map[string]bool{}
	for _, v := range head[0].Verdicts {
		key := v.Assertion + "\x00" + v.Check
		if seen[key] || v.Check == "" {
			continue
		}
		seen[key] = true
		chk, err := assertions.ParseCheck(v.Check)
		if err != nil {
			return nil, fmt.Errorf("assertion %s: %w", v.Assertion, err)
		}
		assertion, check := v.Assertion, v.Check
		out = append(out, figure{
			name: assertion + ": " + check, metric: v.Metric, unit: v.Unit,
			stat:          stat{Agg: chk.Agg},
			higherIsWorse: chk.Op != assertions.OpGT && chk.Op != assertions.OpGE,
			gating:        true,
			window: func(r *record.Run) (time.Duration, time.Duration, string, bool) {
				for _, rv := range r.Verdicts {
					if rv.Assertion == assertion && rv.Check == check && rv.To > rv.From {
						return time.Duration(rv.From), time.Duration(rv.To), rv.Window, true
					}
				}
				return 0, 0, "", false
			},
		})
	}
	if opt.NoKeyFigures {
		return out, nil
	}
	names, err := apis(head[0])
	if err != nil {
		return nil, err
	}
	for _, api := range sortedKeys(names) {
		sel := "{api:" + quoteTag(api) + "}"
		for _, ph := range phases(head[0]) {
			w, g := ph.resolve, ph.kind == assertions.During || ph.kind == assertions.Whole || opt.GateAllPhases
			out = append(out, apiFigures(api, names[api], sel, w, g)...)
		}
	}
	return out, nil
}

// apiFigures are the key figures of one API in one phase: p50 and p99 of
// its latency metric, and for HTTP its failure rate and goodput (gRPC has
// no failed-call metric; its checks carry the codes expected).
func apiFigures(api, latency, sel string, w func(r *record.Run) (time.Duration, time.Duration, string, bool), g bool) []figure {
	out := []figure{
		{name: "p50 " + api, metric: latency + sel, unit: "ms", stat: stat{Agg: record.Agg{Func: record.AggMed}}, higherIsWorse: true, gating: g, window: w},
		{name: "p99 " + api, metric: latency + sel, unit: "ms", stat: stat{Agg: record.Agg{Func: record.AggP, P: 99}}, higherIsWorse: true, gating: g, window: w},
	}
	if latency != "http_req_duration" {
		return out
	}
	return append(out,
		figure{name: "failure rate " + api, metric: "http_req_failed" + sel, stat: stat{Agg: record.Agg{Func: record.AggRate}}, higherIsWorse: true, gating: g, window: w},
		figure{name: "goodput " + api, metric: "http_req_failed" + sel, unit: "/s", stat: stat{OKRate: true}, higherIsWorse: false, gating: g, window: w},
	)
}

func quoteTag(v string) string {
	if v == "" || strings.ContainsAny(v, `,}"{ !:`) {
		return fmt.Sprintf("%q", v)
	}
	return v
}

// apis maps the api tags of a run's http_req_duration and
// grpc_req_duration series to that latency metric.
func apis(r *record.Run) (map[string]string, error) {
	set := map[string]string{}
	err := r.EachWindow(func(w record.Window) error {
		for _, s := range w.Series {
			if isLatency(s.Metric) && s.Tags["api"] != "" {
				set[s.Tags["api"]] = s.Metric
			}
		}
		return nil
	})
	return set, err
}

// isLatency is true for the request latency metrics: HTTP's and gRPC's.
func isLatency(metric string) bool {
	return metric == "http_req_duration" || metric == "grpc_req_duration"
}

type phase struct {
	kind    string
	resolve func(r *record.Run) (time.Duration, time.Duration, string, bool)
}

// phases are "before F", "during F" and "after F" for every fault F applied
// in r, each resolved in every run by its own fault events; a run without
// faults has one phase, the whole run.
func phases(r *record.Run) []phase {
	mk := func(w assertions.Window) phase {
		return phase{w.Kind, func(run *record.Run) (time.Duration, time.Duration, string, bool) {
			rng, err := assertions.Resolve(run, w, 0)
			if err != nil || !rng.To.After(rng.From) {
				return 0, 0, "", false
			}
			return run.Offset(rng.From), run.Offset(rng.To), rng.Desc, true
		}}
	}
	var out []phase
	seen := map[string]bool{}
	for _, f := range r.Faults {
		if f.Action != record.Applied || seen[f.Fault] {
			continue
		}
		seen[f.Fault] = true
		for _, k := range []string{assertions.Before, assertions.During, assertions.After} {
			out = append(out, mk(assertions.Window{Kind: k, Fault: f.Fault}))
		}
	}
	if len(out) == 0 {
		out = append(out, mk(assertions.Window{Kind: assertions.Whole}))
	}
	return out
}

// minBlocks is the fewest blocks a side needs for its noise to be estimated.
const minBlocks = 3

// compareFigure computes one Change.
func compareFigure(scenario string, f figure, base, head []*record.Run, opt DiffOptions, rng *rand.Rand) (Change, error) {
	c := Change{Scenario: scenario, Name: f.name, Metric: f.metric, Stat: f.stat.String(), Unit: f.unit,
		HigherIsWorse: f.higherIsWorse, Gating: f.gating, Verdict: NotCompared}
	m, err := assertions.ParseMetric(f.metric)
	if err != nil {
		return c, err
	}
	var kind record.Kind
	collect := func(runs []*record.Run) (bootstrap.Side, []record.Acc, error) {
		var (
			s   bootstrap.Side
			all []record.Acc
		)
		for _, r := range runs {
			from, to, desc, ok := f.window(r)
			if !ok {
				continue
			}
			if c.Window == "" {
				c.Window = desc
			}
			cells, err := cellsIn(r, m, from, to, f.stat)
			if err != nil {
				return nil, nil, err
			}
			all = append(all, cells...)
			if kind == "" {
				kind = kindOf(cells)
			}
			if vs := blockValues(cells, f.stat, opt.Block); len(vs) > 0 {
				s = append(s, vs)
			}
		}
		return s, all, nil
	}
	bs, ball, err := collect(base)
	if err != nil {
		return c, err
	}
	hs, hall, err := collect(head)
	if err != nil {
		return c, err
	}
	var ok1, ok2 bool
	c.Base, ok1 = aggregate(ball, f.stat)
	c.Head, ok2 = aggregate(hall, f.stat)
	switch {
	case c.Window == "":
		c.Why = "window missing"
		return c, nil
	case !ok1 && !ok2:
		c.Why = "no samples on either side"
		return c, nil
	case !ok1 || !ok2:
		c.Why = map[bool]string{true: "no samples in head", false: "no samples in base"}[ok1]
		return c, nil
	}
	c.Rel = Ratio(relChange(c.Base, c.Head))
	if nb, nh := bs.Blocks(), hs.Blocks(); nb < minBlocks || nh < minBlocks {
		c.Why = fmt.Sprintf("too short to tell noise: %d and %d blocks of %ds (need %d a side)", nb, nh, opt.Block, minBlocks)
		return c, nil
	}
	c.BaseMedian, c.HeadMedian = bs.Median(), hs.Median()
	c.Lo, c.Hi = bootstrap.Interval(bs, hs, opt.Iterations, opt.Confidence, rng)
	minRel := opt.MinChange
	if f.stat.isTail() {
		minRel = max(minRel, opt.MinChangeTail)
	}
	c.Verdict = judge(c, floorFor(f, kind, opt), minRel)
	if c.Verdict == Regression && !f.gating {
		c.Verdict = WorseInfo
	}
	return c, nil
}

// kindOf is the kind of the first cell that saw a series.
func kindOf(cells []record.Acc) record.Kind {
	for i := range cells {
		if k := cells[i].Kind(); k != "" {
			return k
		}
	}
	return ""
}

func relChange(b, h float64) float64 {
	switch {
	case b == h:
		return 0
	case b == 0:
		return math.Inf(int(math.Copysign(1, h)))
	}
	return (h - b) / math.Abs(b)
}

// floorFor is the smallest absolute change of the figure that counts;
// kind is the metric's kind.
func floorFor(f figure, kind record.Kind, opt DiffOptions) float64 {
	switch {
	case f.unit == "ms":
		return opt.MinLatency
	case f.stat.OKRate:
		return opt.MinThroughput
	case kind == record.Rate && (f.stat.Func == record.AggRate || f.stat.Func == record.AggAvg):
		return opt.MinRate
	case f.stat.Func == record.AggRate:
		return opt.MinThroughput
	}
	return 0
}

// judge applies the significance rule to a computed change: the median
// block value moved by at least floor and minRel, and the interval of that
// move excludes zero. Outside the gate a worse figure is only reported.
func judge(c Change, floor, minRel float64) string {
	delta := c.HeadMedian - c.BaseMedian
	big := math.Abs(delta) >= floor && math.Abs(relChange(c.BaseMedian, c.HeadMedian)) >= minRel
	switch {
	case !big:
		return NoChange
	case c.Lo > 0:
		if c.HigherIsWorse {
			return Regression
		}
		return Improvement
	case c.Hi < 0:
		if c.HigherIsWorse {
			return Improvement
		}
		return Regression
	}
	return NoChange
}
