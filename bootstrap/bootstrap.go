// Package bootstrap bounds the change of a median between two sides of
// block values by a hierarchical block bootstrap: runs drawn with
// replacement, then each drawn run's blocks with replacement (with one run
// a side, a bootstrap over that run's blocks). diff compares runs with it;
// the fault-effect check compares a fault's window with the time before.
package bootstrap

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Side is one side of a comparison: the block values of each run.
type Side [][]float64

// Blocks counts the side's block values.
func (s Side) Blocks() int {
	n := 0
	for _, run := range s {
		n += len(run)
	}
	return n
}

// Median of every block value of every run of the side.
func (s Side) Median() float64 {
	var all []float64
	for _, run := range s {
		all = append(all, run...)
	}
	return Median(all)
}

// Median of xs, which it sorts; NaN when xs is empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// resample draws a replicate of the side into buf.
func (s Side) resample(rng *rand.Rand, buf []float64) []float64 {
	buf = buf[:0]
	for range s {
		run := s[rng.IntN(len(s))]
		for range run {
			buf = append(buf, run[rng.IntN(len(run))])
		}
	}
	return buf
}

// Interval bounds the change of the median block value, head−base: the
// quantiles at 1−conf and conf of iters replicates. Both sides need a
// block value.
func Interval(base, head Side, iters int, conf float64, rng *rand.Rand) (lo, hi float64) {
	deltas := make([]float64, 0, iters)
	var bb, hb []float64
	for range iters {
		bb = base.resample(rng, bb)
		hb = head.resample(rng, hb)
		deltas = append(deltas, Median(hb)-Median(bb))
	}
	sort.Float64s(deltas)
	at := func(p float64) float64 {
		i := int(math.Floor(p * float64(len(deltas)-1)))
		return deltas[min(max(i, 0), len(deltas)-1)]
	}
	return at(1 - conf), at(conf)
}
