package assertions

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/bootstrap"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// The fault-effect check: each observed series' per-second values, in
// blocks of effectBlock seconds (of one second when either side is
// shorter than effectMinBlocks such blocks), during a fault against before
// the first fault; a series moved when the bootstrap interval of its
// median's change (effectIters replicates, one-sided effectConf) excludes
// zero, the change is at least effectMinRel of the median before, and
// above its unit's floor. With few seconds a side the interval excludes
// zero only when the two sides barely overlap: a fault must move a series
// clearly to count.
const (
	effectBlock     = 2
	effectMinBlocks = 3
	effectIters     = 1000
	effectConf      = 0.99
	effectMinRel    = 0.25
	effectShown     = 8 // moved series a record names per fault
)

// point is one second's value of a series.
type point struct {
	at time.Time
	v  float64
}

// observed are the run's series, each as its per-second values.
type observed struct {
	series map[string][]point
	// counts are the series whose missing second is zero (counts a
	// second), not no data.
	counts map[string]bool
	// seconds are the starts of the load's windows.
	seconds []time.Time
	// block is the seconds of a block.
	block int
}

// FaultEffects says, for each fault applied in rec, which observed series
// moved beyond run-to-run noise while it was in force, against the time
// before the first fault: the load's series (a trend's mean, a counter's
// count, a rate's share, a gauge's value, per second) and the scraped
// /metrics (a cumulative value's increase per second, see cumulative; any
// other value as read). A fault window or a time before too short to tell noise is said
// as unjudged.
func FaultEffects(rec *record.Run) ([]record.FaultEffect, error) {
	first, ok := firstApplied(rec)
	if !ok {
		return nil, nil
	}
	before, err := Resolve(rec, Window{Kind: Before, Fault: first}, 0)
	if err != nil {
		return nil, err
	}
	obs, err := observe(rec)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(rec.Seed), 0x0ef7ec7))
	var out []record.FaultEffect
	for _, f := range appliedFaults(rec) {
		eff := record.FaultEffect{Fault: f}
		during, err := Resolve(rec, Window{Kind: During, Fault: f}, 0)
		shortest := min(before.Seconds(), during.Seconds())
		switch {
		case err != nil:
			eff.Unjudged = err.Error()
		case shortest < effectMinBlocks:
			eff.Unjudged = fmt.Sprintf("too short to tell noise: %ds before the first fault and %ds during it (need %ds each)", before.Seconds(), during.Seconds(), effectMinBlocks)
		default:
			obs.block = effectBlock
			if shortest < effectBlock*effectMinBlocks {
				obs.block = 1
			}
			eff.Compared, eff.Moved = obs.moved(before, during, rng)
		}
		out = append(out, eff)
	}
	return out, nil
}

// moved compares every series over before and during; it returns how many
// it compared and the moved ones, largest relative change first.
func (o *observed) moved(before, during Range, rng *rand.Rand) (int, []string) {
	type change struct {
		desc string
		rel  float64
	}
	var moved []change
	compared := 0
	for _, key := range slices.Sorted(maps.Keys(o.series)) {
		base, head := o.blocks(key, before), o.blocks(key, during)
		if len(base) < effectMinBlocks || len(head) < effectMinBlocks {
			continue
		}
		compared++
		bm, hm := bootstrap.Median(slices.Clone(base)), bootstrap.Median(slices.Clone(head))
		lo, hi := bootstrap.Interval(bootstrap.Side{base}, bootstrap.Side{head}, effectIters, effectConf, rng)
		rel := math.Inf(1)
		if bm != 0 {
			rel = (hm - bm) / math.Abs(bm)
		}
		if (lo > 0 || hi < 0) && math.Abs(rel) >= effectMinRel && math.Abs(hm-bm) > effectFloor(key) {
			moved = append(moved, change{fmt.Sprintf("%s %s→%s", key, figure(bm, ""), figure(hm, "")), math.Abs(rel)})
		}
	}
	sort.SliceStable(moved, func(i, j int) bool { return moved[i].rel > moved[j].rel })
	var out []string
	for i, c := range moved {
		if i == effectShown {
			out = append(out, fmt.Sprintf("and %d more", len(moved)-effectShown))
			break
		}
		out = append(out, c.desc)
	}
	return compared, out
}

// effectFloor is the smallest change of a series that counts: 2 ms of a
// timing, 1% of a share, else anything.
func effectFloor(key string) float64 {
	name := strings.TrimPrefix(key, "scrape:")
	if i := strings.IndexAny(name, "{@"); i >= 0 {
		name = name[:i]
	}
	switch {
	case record.IsTimeMetric(name):
		return 2
	case strings.HasSuffix(name, "_failed") || strings.HasSuffix(name, "checks"):
		return 0.01
	}
	return 0
}

// blocks are key's block values over rng: the mean of each o.block
// consecutive seconds; a count's second without a value counts zero.
func (o *observed) blocks(key string, rng Range) []float64 {
	pts := o.series[key]
	var vals []float64
	if o.counts[key] {
		at := map[time.Time]float64{}
		for _, p := range pts {
			at[p.at] = p.v
		}
		for _, s := range o.seconds {
			if rng.Contains(s) {
				vals = append(vals, at[s])
			}
		}
	} else {
		scraped := strings.HasPrefix(key, "scrape:") // an instant, not a second
		for _, p := range pts {
			if scraped && !p.at.Before(rng.From) && p.at.Before(rng.To) || !scraped && rng.Contains(p.at) {
				vals = append(vals, p.v)
			}
		}
	}
	var out []float64
	for i := 0; i+o.block <= len(vals); i += o.block {
		sum := 0.0
		for _, v := range vals[i : i+o.block] {
			sum += v
		}
		out = append(out, sum/float64(o.block))
	}
	return out
}

// effectMaxSeries bounds the series compared, the load's first, then the
// scraped ones in name order.
const effectMaxSeries = 600

// observe reads rec's series as per-second values: the load's windows,
// then the scrapes.
func observe(rec *record.Run) (*observed, error) {
	o := &observed{series: map[string][]point{}, counts: map[string]bool{}}
	err := rec.EachWindow(func(w record.Window) error {
		o.seconds = append(o.seconds, w.Start)
		accs := map[string]*record.Series{}
		for _, s := range w.Series {
			key := seriesKey(s.Metric, s.Tags)
			a := accs[key]
			if a == nil {
				a = &record.Series{Kind: s.Kind}
				accs[key] = a
			}
			a.Count, a.Sum, a.NonZero, a.Last = a.Count+s.Count, a.Sum+s.Sum, a.NonZero+s.NonZero, s.Last
		}
		for key, a := range accs {
			if v, ok := perSecond(a); ok && o.room(key) {
				o.series[key] = append(o.series[key], point{w.Start, v})
				o.counts[key] = a.Kind == record.Counter
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	o.scrapes(rec.Scrapes)
	return o, nil
}

// room says key is compared: known already, or a new one within the bound.
func (o *observed) room(key string) bool {
	_, known := o.series[key]
	return known || len(o.series) < effectMaxSeries
}

// perSecond is a second's value of a series: a trend's mean, a counter's
// count, a rate's share, a gauge's last value.
func perSecond(a *record.Series) (float64, bool) {
	switch a.Kind {
	case record.Trend:
		return a.Sum / float64(a.Count), a.Count > 0
	case record.Counter:
		return a.Sum, true
	case record.Rate:
		return float64(a.NonZero) / float64(a.Count), a.Count > 0
	case record.Gauge:
		return a.Last, true
	}
	return 0, false
}

// scrapes adds the scraped values: a cumulative one as its increase per
// second since the instance's reading before, any other as read.
func (o *observed) scrapes(scrapes []record.Scrape) {
	type last struct {
		at time.Time
		v  float64
	}
	prev := map[string]last{}
	for _, sc := range scrapes {
		for _, name := range slices.Sorted(maps.Keys(sc.Values)) {
			v := sc.Values[name]
			key := "scrape:" + name + "@" + sc.Instance
			if !o.room(key) {
				continue
			}
			if !cumulative(name) {
				o.series[key] = append(o.series[key], point{sc.Time, v})
				continue
			}
			p, seen := prev[key]
			prev[key] = last{sc.Time, v}
			if dt := sc.Time.Sub(p.at).Seconds(); seen && dt > 0 && v >= p.v {
				o.series[key] = append(o.series[key], point{sc.Time, (v - p.v) / dt})
			}
		}
	}
}

// cumulative says a scraped value only grows: a counter (_total) or a
// histogram's or summary's _count, _sum or _bucket, the suffix after the
// labels or before them.
func cumulative(name string) bool {
	base, rest, _ := strings.Cut(name, "{")
	_, suffix, _ := strings.Cut(rest, "}")
	for _, s := range []string{"_total", "_count", "_sum", "_bucket"} {
		if strings.HasSuffix(base, s) || suffix == s {
			return true
		}
	}
	return false
}

// seriesKey writes a series as a selector: metric{tag:value,…}, tags in
// name order.
func seriesKey(metric string, tags map[string]string) string {
	if len(tags) == 0 {
		return metric
	}
	var b strings.Builder
	b.WriteString(metric + "{")
	for i, k := range slices.Sorted(maps.Keys(tags)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + ":" + tags[k])
	}
	b.WriteByte('}')
	return b.String()
}

// judgeEffects fills rec.FaultEffects. A fault that moved nothing it
// compared is a note, or, with expect_effect, a failing verdict; so is
// one that expects an effect and could not be judged.
func judgeEffects(sc *scenario.Scenario, rec *record.Run) (vs []record.Verdict, notes []string) {
	effects, err := FaultEffects(rec)
	if err != nil {
		return nil, []string{"fault effects not judged: " + err.Error()}
	}
	rec.FaultEffects = effects
	for _, f := range sc.Faults {
		i := slices.IndexFunc(effects, func(e record.FaultEffect) bool { return e.Fault == f.Name })
		var why string
		switch {
		case i < 0:
			why = "it was never applied"
		case effects[i].Unjudged != "":
			why = effects[i].Unjudged
		case len(effects[i].Moved) == 0:
			why = fmt.Sprintf("no observed series moved beyond run-to-run noise (%d compared): it may have missed its target (a wrong edge, a cached path, a retry that hid it)", effects[i].Compared)
			if !f.ExpectEffect {
				notes = append(notes, fmt.Sprintf("fault %s: %s", f.Name, why))
			}
		}
		if f.ExpectEffect {
			v := record.Verdict{Assertion: "fault-effect " + f.Name, Check: "series moved beyond noise >= 1", Metric: "observed series",
				Window: "during " + f.Name, Bound: 1, Pass: why == "", Error: why, Source: record.SourceRun}
			if i >= 0 {
				v.Samples = int64(effects[i].Compared)
				v.Observed = float64(len(effects[i].Moved))
			}
			vs = append(vs, v)
		}
	}
	return vs, notes
}
