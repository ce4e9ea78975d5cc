package assertions

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// mergeHists merges histograms of possibly different ranges into one that
// covers them all.
func mergeHists(hs []*hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	lo, hi, sig := int64(1), int64(2), int64(1)
	for i, h := range hs {
		lo0, hi0, sig0 := h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures()
		if i == 0 || lo0 < lo {
			lo = lo0
		}
		hi, sig = max(hi, hi0), max(sig, sig0)
	}
	lo = max(lo, 1)
	hi = max(hi, 2*lo)
	out := hdrhistogram.New(lo, hi, int(sig))
	for _, h := range hs {
		if dropped := out.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("merging histograms dropped %d values", dropped)
		}
	}
	return out, nil
}
