package kvdispatcher

import (
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform/stats"
)

// hotKeys finds the keys asked for most often with a Space-Saving top-k,
// counted over windows: a key is hot when its guaranteed count (count −
// error) in the current window reaches Threshold, or when it was hot at the
// end of the last window. Time is passed in. Safe for concurrent use.
type hotKeys struct {
	threshold uint64
	window    time.Duration

	mu      sync.Mutex
	ss      *stats.SpaceSaving[string]
	start   time.Time
	prevHot map[string]struct{}
}

// newHotKeys monitors k keys per window; threshold counts per window.
func newHotKeys(k int, threshold uint64, window time.Duration) *hotKeys {
	return &hotKeys{
		threshold: threshold, window: window,
		ss: stats.NewSpaceSaving[string](k), prevHot: map[string]struct{}{},
	}
}

// Observe counts one request for key at now and says whether key is hot.
func (h *hotKeys) Observe(key string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.start.IsZero() {
		h.start = now
	}
	if now.Sub(h.start) >= h.window {
		h.rotate()
		h.start = now
	}
	c := h.ss.Add(key)
	if c.Count-c.Err >= h.threshold {
		return true
	}
	_, hot := h.prevHot[key]
	return hot
}

// rotate ends a window: the keys hot in it stay hot through the next.
func (h *hotKeys) rotate() {
	hot := make(map[string]struct{})
	for _, c := range h.ss.Top(0) {
		if c.Count-c.Err >= h.threshold {
			hot[c.Item] = struct{}{}
		}
	}
	h.prevHot = hot
	h.ss.Reset()
}

// Hot lists the keys hot at the end of the last window and those already
// hot in this one.
func (h *hotKeys) Hot() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for k := range h.prevHot {
		seen[k] = true
		out = append(out, k)
	}
	for _, c := range h.ss.Top(0) {
		if c.Count-c.Err >= h.threshold && !seen[c.Item] {
			out = append(out, c.Item)
		}
	}
	return out
}
