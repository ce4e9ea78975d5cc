package stats

import (
	"container/heap"
	"sort"
)

// SpaceSaving counts the most frequent items of a stream in constant memory
// with the Space-Saving algorithm (Metwally, Agrawal & El Abbadi, 2005): k
// counters; an unmonitored item takes over the smallest counter and inherits
// its count as its error bound. Among equal smallest counters the one updated
// longest ago is replaced. It is not safe for concurrent use.
type SpaceSaving[K comparable] struct {
	k     int
	n     uint64
	seq   uint64
	index map[K]int // item -> position in heap
	heap  ssHeap[K]
}

// Counter is one monitored item: its estimated count and the most that
// estimate may exceed the true count by (true ≤ Count, Count − Err ≤ true).
type Counter[K comparable] struct {
	Item  K
	Count uint64
	Err   uint64
}

type ssEntry[K comparable] struct {
	Counter[K]
	seq uint64 // last update, for ties
}

// NewSpaceSaving returns a counter monitoring at most k items (k ≥ 1).
func NewSpaceSaving[K comparable](k int) *SpaceSaving[K] {
	if k < 1 {
		panic("stats.NewSpaceSaving: k must be at least 1")
	}
	idx := make(map[K]int, k)
	return &SpaceSaving[K]{k: k, index: idx, heap: ssHeap[K]{es: make([]ssEntry[K], 0, k), idx: idx}}
}

// Add counts one occurrence of item and returns its new estimate.
func (s *SpaceSaving[K]) Add(item K) Counter[K] {
	s.n++
	s.seq++
	h := &s.heap
	if i, ok := s.index[item]; ok {
		e := &h.es[i]
		e.Count++
		e.seq = s.seq
		heap.Fix(h, i)
		return h.es[s.index[item]].Counter
	}
	if len(h.es) < s.k {
		heap.Push(h, ssEntry[K]{Counter: Counter[K]{Item: item, Count: 1}, seq: s.seq})
		return Counter[K]{Item: item, Count: 1}
	}
	// Replace the minimum (the root).
	min := &h.es[0]
	delete(s.index, min.Item)
	*min = ssEntry[K]{Counter: Counter[K]{Item: item, Count: min.Count + 1, Err: min.Count}, seq: s.seq}
	s.index[item] = 0
	heap.Fix(h, 0)
	return h.es[s.index[item]].Counter
}

// estimate returns item's counter if it is monitored.
func (s *SpaceSaving[K]) estimate(item K) (Counter[K], bool) {
	i, ok := s.index[item]
	if !ok {
		return Counter[K]{}, false
	}
	return s.heap.es[i].Counter, true
}

// minCount is the smallest monitored count (0 while fewer than k items are
// monitored): an unmonitored item occurred at most minCount times.
func (s *SpaceSaving[K]) minCount() uint64 {
	if len(s.heap.es) < s.k {
		return 0
	}
	return s.heap.es[0].Count
}

// Top returns up to n counters by decreasing count (all with n ≤ 0).
func (s *SpaceSaving[K]) Top(n int) []Counter[K] {
	out := make([]Counter[K], 0, len(s.heap.es))
	for _, e := range s.heap.es {
		out = append(out, e.Counter)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	if n > 0 && n < len(out) {
		out = out[:n]
	}
	return out
}

// Reset forgets everything.
func (s *SpaceSaving[K]) Reset() {
	s.n, s.seq = 0, 0
	clear(s.index)
	s.heap.es = s.heap.es[:0]
}

// ssHeap is a min-heap on (count, last update) that keeps index current.
type ssHeap[K comparable] struct {
	es  []ssEntry[K]
	idx map[K]int
}

func (h *ssHeap[K]) Len() int { return len(h.es) }
func (h *ssHeap[K]) Less(i, j int) bool {
	if h.es[i].Count != h.es[j].Count {
		return h.es[i].Count < h.es[j].Count
	}
	return h.es[i].seq < h.es[j].seq
}
func (h *ssHeap[K]) Swap(i, j int) {
	h.es[i], h.es[j] = h.es[j], h.es[i]
	h.idx[h.es[i].Item] = i
	h.idx[h.es[j].Item] = j
}
func (h *ssHeap[K]) Push(x any) {
	e := x.(ssEntry[K])
	h.idx[e.Item] = len(h.es)
	h.es = append(h.es, e)
}
func (h *ssHeap[K]) Pop() any {
	e := h.es[len(h.es)-1]
	h.es = h.es[:len(h.es)-1]
	delete(h.idx, e.Item)
	return e
}
