package assertions

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// histSum merges histograms of possibly different ranges one at a time, so
// that a range of any length holds one histogram, not one per window.
type histSum struct{ h *hdrhistogram.Histogram }

// add merges h in, widening the sum's range and precision when h's exceed
// them. The sum may take h over: the caller must not use h afterwards.
func (s *histSum) add(h *hdrhistogram.Histogram) error {
	if s.h == nil {
		s.h = h
		return nil
	}
	lo, hi, sig := s.h.LowestTrackableValue(), s.h.HighestTrackableValue(), s.h.SignificantFigures()
	if h.LowestTrackableValue() < lo || h.HighestTrackableValue() > hi || h.SignificantFigures() > sig {
		lo = max(min(lo, h.LowestTrackableValue()), 1)
		hi = max(hi, h.HighestTrackableValue(), 2*lo)
		wide := hdrhistogram.New(lo, hi, int(max(sig, h.SignificantFigures())))
		if dropped := wide.Merge(s.h); dropped > 0 {
			return fmt.Errorf("merging histograms dropped %d values", dropped)
		}
		s.h = wide
	}
	if dropped := s.h.Merge(h); dropped > 0 {
		return fmt.Errorf("merging histograms dropped %d values", dropped)
	}
	return nil
}
