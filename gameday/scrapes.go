package gameday

import (
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// keepSeconds is how many seconds of target readings the plots keep.
const keepSeconds = 300

// shedCounters are the targets' counters of refused requests; their label
// "reason" names why (codel, backpressure, quota, bulkhead, deadline, …).
var shedCounters = []string{"platform_rejected_total{", "kvdispatcher_shed_total{", "platform_bulkhead_rejected_total{"}

// ejectedGauge is the smart client's count of ejected replicas.
const ejectedGauge = "platform_client_ejected_hosts{"

// targetSeries turns the targets' /metrics readings into per-second plot
// data: sheds per reason (counter increases) and ejected hosts (gauges).
type targetSeries struct {
	mu      sync.Mutex
	start   time.Time
	prev    map[string]map[string]float64 // instance → counter key → last value
	sheds   map[int64]map[string]float64  // second → reason → sheds
	ejected map[int64]map[string]float64  // second → instance/dependency → ejected hosts
}

func newTargetSeries() *targetSeries {
	return &targetSeries{prev: map[string]map[string]float64{}, sheds: map[int64]map[string]float64{}, ejected: map[int64]map[string]float64{}}
}

func (ts *targetSeries) setStart(t time.Time) {
	ts.mu.Lock()
	ts.start = t
	ts.mu.Unlock()
}

// add takes one reading of one instance.
func (ts *targetSeries) add(sc record.Scrape) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	prev := ts.prev[sc.Instance]
	if prev == nil {
		prev = map[string]float64{}
		ts.prev[sc.Instance] = prev
	}
	sec := int64(-1)
	if !ts.start.IsZero() {
		sec = int64(sc.Time.Sub(ts.start.Truncate(time.Second)) / time.Second)
	}
	for key, v := range sc.Values {
		switch {
		case hasAnyPrefix(key, shedCounters):
			last, seen := prev[key]
			prev[key] = v
			if !seen || sec < 0 || v <= last {
				continue // the first reading, before load, or a restart
			}
			reason := label(key, "reason")
			if reason == "" {
				reason = "bulkhead " + label(key, "bulkhead")
			}
			if tier := label(key, "tier"); tier != "" {
				reason += " (" + tier + ")"
			}
			ts.slot(ts.sheds, sec)[reason] += v - last
		case strings.HasPrefix(key, ejectedGauge) && sec >= 0:
			ts.slot(ts.ejected, sec)[sc.Instance+" "+label(key, "dependency")] = v
		}
	}
	for s := range ts.sheds {
		if s < sec-keepSeconds {
			delete(ts.sheds, s)
		}
	}
	for s := range ts.ejected {
		if s < sec-keepSeconds {
			delete(ts.ejected, s)
		}
	}
}

func (ts *targetSeries) slot(m map[int64]map[string]float64, sec int64) map[string]float64 {
	if m[sec] == nil {
		m[sec] = map[string]float64{}
	}
	return m[sec]
}

// fill adds each point's sheds and ejected hosts.
func (ts *targetSeries) fill(pts []Point) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for i := range pts {
		if sh := ts.sheds[pts[i].T]; len(sh) > 0 {
			pts[i].Sheds = make(map[string]float64, len(sh))
			for k, v := range sh {
				pts[i].Sheds[k] = v
			}
		}
		for _, v := range ts.ejected[pts[i].T] {
			pts[i].Ejected += v
		}
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// label reads one label of a scrape key "name{a=1,b=2}".
func label(key, name string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return ""
	}
	for _, kv := range strings.Split(strings.TrimSuffix(key[i+1:], "}"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}
