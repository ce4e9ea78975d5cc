package assertions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/chaosrun/chaosrun/record"
)

// Selectors "scrape:NAME{label:value,…}" read the targets' /metrics
// readings (record.Scrapes, once a second per instance). The tag
// "instance" matches the instance (ledger.1), "service" its service
// (ledger); every other tag matches a Prometheus label. A value "@PROXY"
// stands for the address of that Toxiproxy proxy in the run
// (host:@bank->ledger.1), as clients label hosts by the address they dial.
//
// A name ending in _total, _count, _sum or _bucket is a counter:
//
//	sum, count: its increase over the range, summed over matching series
//	            (from the last reading before the range, so the first
//	            second counts; a reset counts from zero)
//	rate:       that increase per second of the range
//
// Any other name is a gauge: min, max and avg over every reading of every
// matching series in the range; count is how many readings there were.

// scrapeSeries is one Prometheus series of one instance over time.
type scrapeSeries struct {
	before *float64 // last reading before the range
	values []float64
}

func isCounterName(name string) bool {
	for _, suf := range []string{"_total", "_count", "_sum", "_bucket"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// splitScrapeKey splits "name{a=b,c=d}" into the name and its labels.
func splitScrapeKey(key string) (string, map[string]string) {
	name, rest, ok := strings.Cut(key, "{")
	labels := map[string]string{}
	if !ok {
		return name, labels
	}
	rest = strings.TrimSuffix(rest, "}")
	for _, kv := range strings.Split(rest, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			labels[k] = v
		}
	}
	return name, labels
}

// scrapeMatches reports whether a reading's instance and labels pass m's filters.
func scrapeMatches(m Metric, instance string, labels map[string]string) bool {
	for _, f := range m.Filters {
		var v string
		var ok bool
		switch f.Key {
		case "instance":
			v, ok = instance, true
		case "service":
			v, ok = instance, true
			if i := strings.LastIndexByte(instance, '.'); i > 0 {
				v = instance[:i]
			}
		default:
			v, ok = labels[f.Key]
		}
		if f.Not == (ok && v == f.Value) {
			return false
		}
	}
	return true
}

// resolveProxyRefs replaces tag values "@PROXY" (a Toxiproxy proxy name such
// as @bank->ledger.1) with the address that proxy listened on in this run,
// as clients label their per-host series with the address they dial.
func resolveProxyRefs(run *record.Run, m Metric) (Metric, error) {
	out := m
	out.Filters = append([]TagFilter(nil), m.Filters...)
	for i, f := range out.Filters {
		name, ok := strings.CutPrefix(f.Value, "@")
		if !ok {
			continue
		}
		addr := ""
		for _, si := range run.Topology {
			if a, ok := si.Proxies[name]; ok {
				addr = a
			}
		}
		if addr == "" {
			return m, fmt.Errorf("%s: no proxy %q in this run's topology", m, name)
		}
		out.Filters[i].Value = addr
	}
	return out, nil
}

func aggregateScrapes(run *record.Run, m Metric, rng Range, agg record.Agg) (result, error) {
	m, err := resolveProxyRefs(run, m)
	if err != nil {
		return result{}, err
	}
	series, readings := collectScrapes(run, m, rng)
	res := result{samples: readings, kind: record.Gauge}
	if readings == 0 {
		return res, fmt.Errorf("no /metrics readings of %s in %s", m, rng.Desc)
	}
	if isCounterName(m.Name) {
		res.kind = record.Counter
		res.value, err = scrapeCounter(series, m, rng, agg)
		return res, err
	}
	var sum, lo, hi float64
	first := true
	for _, s := range series {
		for _, v := range s.values {
			if first {
				lo, hi, first = v, v, false
			}
			lo, hi, sum = min(lo, v), max(hi, v), sum+v
		}
	}
	switch agg.Func {
	case record.AggMin:
		res.value = lo
	case record.AggMax:
		res.value = hi
	case record.AggAvg:
		res.value = sum / float64(readings)
	case record.AggCount:
		res.value = float64(readings)
	default:
		return res, fmt.Errorf("%s is not defined for %s, a gauge read from /metrics (allowed: min, max, avg, count)", agg, m.Name)
	}
	return res, nil
}

// collectScrapes gathers the readings m selects before rng's end, per
// instance and series, and counts those inside rng.
func collectScrapes(run *record.Run, m Metric, rng Range) (map[string]*scrapeSeries, int64) {
	series := map[string]*scrapeSeries{}
	var readings int64
	for _, sc := range run.Scrapes {
		if !sc.Time.Before(rng.To) {
			continue
		}
		inRange := !sc.Time.Before(rng.From)
		for key, val := range sc.Values {
			name, labels := splitScrapeKey(key)
			if name != m.Name || !scrapeMatches(m, sc.Instance, labels) {
				continue
			}
			id := sc.Instance + "/" + key
			s := series[id]
			if s == nil {
				s = &scrapeSeries{}
				series[id] = s
			}
			if !inRange {
				v := val
				s.before = &v
				continue
			}
			s.values = append(s.values, val)
			readings++
		}
	}
	return series, readings
}

// scrapeCounter applies agg to counters: their increase over rng, summed
// over the series in name order.
func scrapeCounter(series map[string]*scrapeSeries, m Metric, rng Range, agg record.Agg) (float64, error) {
	var inc float64
	ids := make([]string, 0, len(series))
	for id := range series {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		inc += increase(series[id])
	}
	switch agg.Func {
	case record.AggSum, record.AggCount:
		return inc, nil
	case record.AggRate:
		secs := rng.To.Sub(rng.From).Seconds()
		if secs <= 0 {
			return 0, fmt.Errorf("rate of %s: %s is empty", m, rng.Desc)
		}
		return inc / secs, nil
	}
	return 0, fmt.Errorf("%s is not defined for %s, a counter read from /metrics (allowed: sum, count, rate)", agg, m.Name)
}

// increase is how much a counter grew over the range, counting a drop as a
// restart from 0. Without a reading before the range the series starts from
// 0: a labelled counter appears at its first increment, and every target
// starts with the run.
func increase(s *scrapeSeries) float64 {
	prev := 0.0
	if s.before != nil {
		prev = *s.before
	}
	var inc float64
	for _, v := range s.values {
		if v < prev {
			inc += v
		} else {
			inc += v - prev
		}
		prev = v
	}
	return inc
}
