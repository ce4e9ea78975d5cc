package nativerun

import (
	"math"
	"os"
	"runtime"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// procRate is the arrivals a second one P of the engine sends with its
// latency intact. Measured on a 2-core machine against a local server:
// at 12000/s one P's p99 (2.9 ms) was two Ps'; at 16000/s both fell behind.
const procRate = 12000

// procsFor is how many Ps (GOMAXPROCS) a shard of spec needs: one per
// procRate of its peak rate, at least one, at most have. Every P more than
// the load needs costs CPU without sending more: each idle P the runtime
// wakes to look for work is a thread woken and put back to sleep, which at
// a few thousand requests a second cost more than the requests.
func procsFor(spec native.Spec, shard native.Shard, have int) int {
	ps := make([]arrival.Profile, len(spec.Streams))
	for i, st := range spec.Streams {
		ps[i] = st.Arrival
	}
	peak := arrival.PeakOfSum(ps) / float64(max(shard.Count, 1))
	return min(max(int(math.Ceil(peak/procRate)), 1), have)
}

// limitProcs sets GOMAXPROCS to what the shard needs, unless the
// environment sets it; the returned func restores it.
func limitProcs(spec native.Spec, shard native.Shard) (procs int, restore func()) {
	have := runtime.GOMAXPROCS(0)
	if os.Getenv("GOMAXPROCS") != "" {
		return have, func() {}
	}
	n := procsFor(spec, shard, have)
	runtime.GOMAXPROCS(n)
	return n, func() { runtime.GOMAXPROCS(have) }
}
