package gameday

import (
	"reflect"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// TestTargetSeries: counters of refusals become sheds per second by reason
// (increases only: the first reading and a restart add nothing), gauges of
// ejected replicas are summed over instances, and both land on the points
// of the same second.
func TestTargetSeries(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := newTargetSeries()
	ts.setStart(t0)
	at := func(sec int, inst string, vals map[string]float64) {
		ts.add(record.Scrape{Time: t0.Add(time.Duration(sec)*time.Second + 100*time.Millisecond), Instance: inst, Values: vals})
	}
	at(0, "bank", map[string]float64{"platform_rejected_total{reason=codel}": 5, "platform_client_ejected_hosts{dependency=ledger}": 0})
	at(1, "bank", map[string]float64{"platform_rejected_total{reason=codel}": 12, "platform_client_ejected_hosts{dependency=ledger}": 1})
	at(1, "kv", map[string]float64{"kvdispatcher_shed_total{reason=ru,tier=sheddable}": 3})
	at(2, "kv", map[string]float64{"kvdispatcher_shed_total{reason=ru,tier=sheddable}": 10, "platform_client_ejected_hosts{dependency=kvstore}": 2})
	at(2, "bank", map[string]float64{"platform_rejected_total{reason=codel}": 2, "platform_bulkhead_rejected_total{bulkhead=vault}": 1}) // restarted
	at(3, "bank", map[string]float64{"platform_bulkhead_rejected_total{bulkhead=vault}": 4})

	pts := []Point{{T: 0}, {T: 1}, {T: 2}, {T: 3}}
	ts.fill(pts)
	want := []Point{
		{T: 0},
		{T: 1, Sheds: map[string]float64{"codel": 7}, Ejected: 1},
		{T: 2, Sheds: map[string]float64{"ru (sheddable)": 7}, Ejected: 2},
		{T: 3, Sheds: map[string]float64{"bulkhead vault": 3}},
	}
	if !reflect.DeepEqual(pts, want) {
		t.Errorf("points:\n got %+v\nwant %+v", pts, want)
	}
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct{ key, name, want string }{
		{"a{reason=codel,tier=x}", "tier", "x"},
		{"a{reason=codel}", "tier", ""},
		{"a", "reason", ""},
		{"a{}", "reason", ""},
	} {
		if got := label(tc.key, tc.name); got != tc.want {
			t.Errorf("label(%q, %q) = %q, want %q", tc.key, tc.name, got, tc.want)
		}
	}
}
