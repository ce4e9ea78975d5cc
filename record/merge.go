package record

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// MergeWindows merges several window lists (e.g. one per load shard) into
// one: windows with the same start are merged exactly (counts add, HDR
// histograms merge), and the result is sorted by start.
func MergeWindows(lists ...[]Window) ([]Window, error) {
	var ws WindowSet
	for _, l := range lists {
		for _, w := range l {
			if err := ws.Add(w); err != nil {
				return nil, err
			}
		}
	}
	return ws.Windows(), nil
}

// WindowSet holds windows by start, merging the series of windows that
// share one: what a results stream or several shards' streams hold.
// The zero WindowSet is empty; its owner synchronises access.
type WindowSet struct {
	windows map[int64]*setWindow
}

// setWindow is one second's series keyed by seriesKey.
type setWindow struct {
	start  time.Time
	series map[string]*Series
	// sums hold the histograms merged into a series since its Hist was
	// last encoded: a histogram is encoded once when the window is read,
	// not once per merge, so that N shards' windows merge in O(N).
	sums map[string]*HistSum
}

// Add merges w into the window of its start; w is not changed.
func (ws *WindowSet) Add(w Window) error {
	if ws.windows == nil {
		ws.windows = make(map[int64]*setWindow)
	}
	sw := ws.windows[w.Start.UnixNano()]
	if sw == nil {
		sw = &setWindow{start: w.Start, series: make(map[string]*Series)}
		ws.windows[w.Start.UnixNano()] = sw
	}
	for i := range w.Series {
		s := w.Series[i]
		key := seriesKey(&s)
		old := sw.series[key]
		if old == nil {
			sw.series[key] = &s
			continue
		}
		if err := sw.merge(key, old, &s); err != nil {
			return err
		}
	}
	return nil
}

// merge folds b into a, the series of key, as mergeSeries does, but adds
// histograms into the key's sum, encoded when the window is read.
func (w *setWindow) merge(key string, a, b *Series) error {
	sum := w.sums[key]
	switch {
	case b.Count == 0:
		return nil
	case a.Count == 0:
		delete(w.sums, key)
		*a = *b
		return nil
	case b.Hist == "" || (a.Hist == "" && sum == nil):
		return mergeSeries(a, b)
	}
	if sum == nil {
		sum = &HistSum{}
		if err := sum.AddEncoded(a.Hist); err != nil {
			return fmt.Errorf("merge %s: %w", a.Metric, err)
		}
		if w.sums == nil {
			w.sums = make(map[string]*HistSum)
		}
		w.sums[key] = sum
	}
	if err := sum.AddEncoded(b.Hist); err != nil {
		return fmt.Errorf("merge %s: %w", b.Metric, err)
	}
	a.Sum += b.Sum
	a.Min = min(a.Min, b.Min)
	a.Max = max(a.Max, b.Max)
	a.Last = b.Last
	a.NonZero += b.NonZero
	a.Count += b.Count
	return nil
}

// flush encodes the histograms summed since the last read into their
// series.
func (w *setWindow) flush() error {
	for key, sum := range w.sums {
		enc, err := EncodeHist(sum.Histogram())
		if err != nil {
			return fmt.Errorf("merge %s: %w", w.series[key].Metric, err)
		}
		w.series[key].Hist = enc
		delete(w.sums, key)
	}
	return nil
}

// Windows copies the windows out, sorted by start, their series by key.
func (ws *WindowSet) Windows() []Window {
	out := make([]Window, 0, len(ws.windows))
	for _, k := range ws.starts(nil) {
		_ = ws.windows[k].flush() // cannot fail but for a broken encoder; Drain reports it
		out = append(out, ws.windows[k].window())
	}
	return out
}

// Drain calls f with each window that starts before cut, in start order,
// and forgets the window once f returned nil; it stops at f's first error
// and keeps the windows not yet handed over.
func (ws *WindowSet) Drain(cut time.Time, f func(Window) error) error {
	before := func(k int64) bool { return k < cut.UnixNano() }
	for _, k := range ws.starts(before) {
		if err := ws.windows[k].flush(); err != nil {
			return err
		}
		if err := f(ws.windows[k].window()); err != nil {
			return err
		}
		delete(ws.windows, k)
	}
	return nil
}

// starts lists the held starts (Unix ns) that keep accepts, sorted.
func (ws *WindowSet) starts(keep func(int64) bool) []int64 {
	out := make([]int64, 0, len(ws.windows))
	for k := range ws.windows {
		if keep == nil || keep(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// window copies the window out, its series sorted by key.
func (w *setWindow) window() Window {
	keys := make([]string, 0, len(w.series))
	for k := range w.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := Window{Start: w.start, Series: make([]Series, 0, len(keys))}
	for _, k := range keys {
		s := *w.series[k]
		if s.Tags != nil {
			tags := make(map[string]string, len(s.Tags))
			for tk, tv := range s.Tags {
				tags[tk] = tv
			}
			s.Tags = tags
		}
		out.Series = append(out.Series, s)
	}
	return out
}

// seriesKey identifies a series within a window: its metric, kind and tags.
func seriesKey(s *Series) string {
	names := make([]string, 0, len(s.Tags))
	for k := range s.Tags {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(s.Metric)
	b.WriteByte(0)
	b.WriteString(string(s.Kind))
	for _, k := range names {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(s.Tags[k])
	}
	return b.String()
}

// mergeSeries folds b into a: the same metric, kind and tags in the same
// second. Counts and sums add, extremes widen, Last is b's, histograms
// merge exactly (widening the range when b's exceeds a's).
func mergeSeries(a, b *Series) error {
	if b.Count == 0 {
		return nil
	}
	if a.Count == 0 {
		*a = *b
		return nil
	}
	a.Sum += b.Sum
	a.Min = min(a.Min, b.Min)
	a.Max = max(a.Max, b.Max)
	a.Last = b.Last
	a.NonZero += b.NonZero
	a.Count += b.Count
	if a.Hist == "" {
		a.Hist = b.Hist
		return nil
	}
	if b.Hist == "" {
		return nil
	}
	ha, err := DecodeHist(a.Hist)
	if err != nil {
		return fmt.Errorf("merge %s: %w", a.Metric, err)
	}
	hb, err := DecodeHist(b.Hist)
	if err != nil {
		return fmt.Errorf("merge %s: %w", b.Metric, err)
	}
	merged, err := mergeWidening(ha, hb)
	if err != nil {
		return fmt.Errorf("merge %s: %w", a.Metric, err)
	}
	a.Hist, err = EncodeHist(merged)
	return err
}
