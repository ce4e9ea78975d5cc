package nativerun

import (
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/workloads/native"
)

func TestProcsFor(t *testing.T) {
	spec := func(ps ...arrival.Profile) native.Spec {
		var s native.Spec
		for _, p := range ps {
			s.Streams = append(s.Streams, native.Stream{Arrival: p})
		}
		return s
	}
	c := func(rate float64, start, dur time.Duration) arrival.Profile {
		return arrival.Constant(rate, start, dur)
	}
	for _, tc := range []struct {
		name  string
		spec  native.Spec
		shard native.Shard
		have  int
		want  int
	}{
		{"a few thousand a second", spec(c(4000, 0, 5*time.Second)), native.Shard{Count: 1}, 2, 1},
		{"warm-up then load, one after another", spec(c(12000, 0, time.Second), c(12000, time.Second, 4*time.Second)), native.Shard{Count: 1}, 2, 1},
		{"two streams at once", spec(c(8000, 0, 5*time.Second), c(8000, 0, 5*time.Second)), native.Shard{Count: 1}, 2, 2},
		{"more than the machine has", spec(c(80000, 0, time.Second)), native.Shard{Count: 1}, 2, 2},
		{"split over shards", spec(c(20000, 0, time.Second)), native.Shard{Count: 2}, 8, 1},
		{"no arrivals", spec(), native.Shard{Count: 1}, 4, 1},
	} {
		if got := procsFor(tc.spec, tc.shard, tc.have); got != tc.want {
			t.Errorf("%s: %d Ps, want %d", tc.name, got, tc.want)
		}
	}
}
