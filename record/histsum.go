package record

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HistSum adds histograms together exactly, from their encodings, without
// building a histogram for each. A small sum (a second's series) keeps
// only the non-zero counts it was given; a larger one keeps one array of
// counts per parameter set and adds encodings to it count by count. A
// second parameter set makes it fall back to merging histograms of a
// range that covers both. The zero HistSum is empty.
type HistSum struct {
	lowest, highest, sig int64
	slots                int64 // counts a histogram of these parameters has
	total                int64
	adds                 int // encodings added while sparse
	// sparse holds the non-zero counts added, in no order; an index may
	// repeat. counts replaces it once the sum grows (see dense).
	sparse []bucket
	counts []int64
	h      *hdrhistogram.Histogram // the fallback, once used
}

// bucket is one non-zero count at its index.
type bucket struct {
	idx int32
	n   int64
}

// A sparse sum becomes dense when it holds more encodings than
// maxSparseAdds or more buckets than its counts' length over
// sparsePerSlot: a sum over a range of seconds then costs one array, a
// second's sum a few hundred buckets.
const (
	maxSparseAdds = 16
	sparsePerSlot = 4
)

// Empty reports whether nothing was added.
func (a *HistSum) Empty() bool { return a.slots == 0 && a.h == nil }

// AddEncoded adds the histogram that s encodes. A bad encoding leaves the
// sum as it was.
func (a *HistSum) AddEncoded(s string) error {
	e, err := parseHist(s)
	if err != nil {
		return err
	}
	if a.Empty() {
		a.lowest, a.highest, a.sig, a.slots = e.lowest, e.highest, e.sig, e.slots
	}
	if a.h != nil || e.lowest != a.lowest || e.highest != a.highest || e.sig != a.sig {
		h, err := DecodeHist(s)
		if err != nil {
			return err
		}
		return a.mergeHist(h)
	}
	a.total += e.total
	if a.counts != nil {
		return e.each(func(i, v int64) error {
			if v > 0 {
				a.counts[i] += v
			}
			return nil
		})
	}
	err = e.each(func(i, v int64) error {
		if v > 0 {
			a.sparse = append(a.sparse, bucket{int32(i), v})
		}
		return nil
	})
	a.adds++
	a.densifyIfLarge()
	return err
}

// Merge adds the sum b to a; b is left as it was.
func (a *HistSum) Merge(b *HistSum) error {
	switch {
	case b.Empty():
		return nil
	case a.Empty() && b.h == nil:
		*a = HistSum{lowest: b.lowest, highest: b.highest, sig: b.sig, slots: b.slots, total: b.total, adds: b.adds,
			sparse: slices.Clone(b.sparse), counts: slices.Clone(b.counts)}
		return nil
	case a.h != nil || b.h != nil || b.lowest != a.lowest || b.highest != a.highest || b.sig != a.sig:
		return a.mergeHist(b.Histogram())
	}
	a.total += b.total
	if b.counts != nil {
		a.densify()
		for i, n := range b.counts {
			a.counts[i] += n
		}
		return nil
	}
	if a.counts != nil {
		for _, c := range b.sparse {
			a.counts[c.idx] += c.n
		}
		return nil
	}
	a.sparse = append(a.sparse, b.sparse...)
	a.adds += b.adds
	a.densifyIfLarge()
	return nil
}

// mergeHist merges h into the sum through histograms, widening the range
// to cover both; h is not changed.
func (a *HistSum) mergeHist(h *hdrhistogram.Histogram) error {
	cur := a.h
	switch {
	case cur == nil && a.Empty():
		cur = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
	case cur == nil:
		cur = a.imported()
	}
	merged, err := mergeWidening(cur, h)
	if err != nil {
		return err
	}
	*a = HistSum{h: merged}
	return nil
}

func (a *HistSum) densifyIfLarge() {
	if a.adds > maxSparseAdds || int64(len(a.sparse)) > a.slots/sparsePerSlot {
		a.densify()
	}
}

// densify moves the sparse counts into an array of counts.
func (a *HistSum) densify() {
	if a.counts != nil {
		return
	}
	a.counts = make([]int64, a.slots)
	for _, c := range a.sparse {
		a.counts[c.idx] += c.n
	}
	a.sparse, a.adds = nil, 0
}

// Histogram returns the sum; nil when nothing was added. It may share the
// sum's counts: add nothing more once it is taken.
func (a *HistSum) Histogram() *hdrhistogram.Histogram {
	if a.h != nil || a.Empty() {
		return a.h
	}
	return a.imported()
}

func (a *HistSum) imported() *hdrhistogram.Histogram {
	a.densify()
	return hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: a.lowest, HighestTrackableValue: a.highest,
		SignificantFigures: a.sig, Counts: a.counts})
}

// Total is how many values the sum holds.
func (a *HistSum) Total() int64 {
	if a.h != nil {
		return a.h.TotalCount()
	}
	return a.total
}

// Quantile is the value at percentile q (0 to 100) of the sum, exactly as
// hdrhistogram's ValueAtQuantile gives it for the merged histogram: the
// highest value equivalent to the first bucket at which the count reaches
// q% of the total. ok is false when nothing was added.
func (a *HistSum) Quantile(q float64) (v int64, ok bool) {
	if a.h != nil {
		return a.h.ValueAtQuantile(q), true
	}
	if a.Empty() {
		return 0, false
	}
	q = min(q, 100)
	want := int64(((q / 100) * float64(a.total)) + 0.5)
	idx := int64(0)
	if want > 0 {
		idx = a.indexAtCount(want)
	}
	lo, hi := a.valueRange(idx)
	if q == 0 {
		return lo, true
	}
	return hi, true
}

// indexAtCount is the first index at which the running count reaches
// want (> 0); the last non-zero one if it never does.
func (a *HistSum) indexAtCount(want int64) int64 {
	var acc, last int64
	if a.counts != nil {
		for i, n := range a.counts {
			if n == 0 {
				continue
			}
			acc, last = acc+n, int64(i)
			if acc >= want {
				break
			}
		}
		return last
	}
	slices.SortFunc(a.sparse, func(x, y bucket) int { return cmp.Compare(x.idx, y.idx) })
	for _, c := range a.sparse {
		acc, last = acc+c.n, int64(c.idx)
		if acc >= want {
			break
		}
	}
	return last
}

// valueRange is the lowest and highest value that count index idx holds,
// by hdrhistogram's layout: bucket 0 has subBucketCount sub-buckets of
// width 2^unitMagnitude, every further bucket the upper half of as many,
// twice as wide as the one before.
func (a *HistSum) valueRange(idx int64) (lo, hi int64) {
	unit := max(int64(math.Floor(math.Log2(float64(a.lowest)))), 0)
	halfMag := max(int64(math.Ceil(math.Log2(2*math.Pow10(int(a.sig))))), 1) - 1
	half := int64(1) << halfMag
	bucket := max(idx>>halfMag-1, 0)
	sub := idx - bucket*half
	shift := bucket + unit
	return sub << shift, (sub+1)<<shift - 1
}

// mergeWidening merges b into a, first widening a's range and precision
// when b's exceed them.
func mergeWidening(a, b *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	lo, hi, sig := a.LowestTrackableValue(), a.HighestTrackableValue(), a.SignificantFigures()
	if b.LowestTrackableValue() < lo || b.HighestTrackableValue() > hi || b.SignificantFigures() > sig {
		lo = max(min(lo, b.LowestTrackableValue()), 1)
		hi = max(hi, b.HighestTrackableValue(), 2*lo)
		wide := hdrhistogram.New(lo, hi, int(max(sig, b.SignificantFigures())))
		if dropped := wide.Merge(a); dropped > 0 {
			return nil, fmt.Errorf("merging histograms dropped %d values", dropped)
		}
		a = wide
	}
	if dropped := a.Merge(b); dropped > 0 {
		return nil, fmt.Errorf("merging histograms dropped %d values", dropped)
	}
	return a, nil
}
