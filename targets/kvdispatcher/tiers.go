package kvdispatcher

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/stats"
)

// criticality is a request's criticality; a larger value is shed earlier.
type criticality int

// The tiers, from the one kept longest to the one shed first.
const (
	tierCritical criticality = iota
	tierDefault
	tierSheddable
	numTiers
)

var tierNames = [numTiers]string{platform.CriticalityCritical, platform.CriticalityDefault, platform.CriticalitySheddable}

func (t criticality) String() string {
	if t >= 0 && t < numTiers {
		return tierNames[t]
	}
	return fmt.Sprintf("tier(%d)", int(t))
}

// parseTier reads an X-Criticality value; empty is the default tier.
func parseTier(s string) (criticality, error) {
	switch s {
	case "", platform.CriticalityDefault:
		return tierDefault, nil
	case platform.CriticalityCritical:
		return tierCritical, nil
	case platform.CriticalitySheddable:
		return tierSheddable, nil
	}
	return 0, fmt.Errorf("%s %q: allowed: critical, default, sheddable", platform.HeaderCriticality, s)
}

// tierPolicy raises the RU price of the lowest tiers as the latency ratio
// falls: below Thresholds[0] the sheddable tier pays Penalty times its price,
// below Thresholds[1] the default tier too. The critical tier always pays
// its price.
type tierPolicy struct {
	Thresholds [2]float64
	Penalty    float64
}

// Validate checks 1 ≥ Thresholds[0] ≥ Thresholds[1] ≥ 0 and Penalty ≥ 1.
func (p tierPolicy) Validate() error {
	t := p.Thresholds
	if !(t[0] <= 1 && t[0] >= t[1] && t[1] >= 0) {
		return fmt.Errorf("tier thresholds %v, %v: want 1 ≥ sheddable ≥ default ≥ 0", t[0], t[1])
	}
	if !(p.Penalty >= 1) {
		return fmt.Errorf("tier penalty %v: must be at least 1", p.Penalty)
	}
	return nil
}

// Level is how many of the lowest tiers are penalised at ratio: 0, 1
// (sheddable) or 2 (sheddable and default).
func (p tierPolicy) Level(ratio float64) int {
	switch {
	case ratio < p.Thresholds[1]:
		return 2
	case ratio < p.Thresholds[0]:
		return 1
	}
	return 0
}

// Multiplier is tier's price multiplier at level.
func (p tierPolicy) Multiplier(level int, t criticality) float64 {
	if t != tierCritical && int(numTiers-t) <= level {
		return p.Penalty
	}
	return 1
}

// latencyRatio tracks long-term p95 / short-term p95 of backend latency with
// two P² estimators. Every window (Tick) the short-term one is read and reset.
// The long-term estimator learns only from windows that were healthy (ratio
// at or above Healthy), so a sustained fault does not become the new normal —
// unless it lasts AdaptAfter windows, then it is learned too. Floor (in the
// same unit as the samples) is added to both sides so that noise on a fast
// backend does not read as a collapse. Safe for concurrent use.
type latencyRatio struct {
	Healthy    float64
	AdaptAfter int
	MinSamples int
	Floor      float64

	mu        sync.Mutex
	long      *stats.P2
	short     *stats.P2
	window    []float64 // this window's samples, for the long-term estimator
	unhealthy int
	ratio     atomic.Uint64 // float64 bits
}

// maxWindowSamples bounds the samples kept per window.
const maxWindowSamples = 8192

// newLatencyRatio returns a tracker of the q-quantile (e.g. 0.95) whose ratio
// starts at 1.
func newLatencyRatio(q, healthy, floor float64, minSamples, adaptAfter int) *latencyRatio {
	l := &latencyRatio{
		Healthy: healthy, AdaptAfter: adaptAfter, MinSamples: max(minSamples, 5), Floor: floor,
		long: stats.NewP2(q), short: stats.NewP2(q),
		window: make([]float64, 0, 1024),
	}
	l.ratio.Store(math.Float64bits(1))
	return l
}

// Observe records one latency sample.
func (l *latencyRatio) Observe(x float64) {
	l.mu.Lock()
	l.short.Add(x)
	if len(l.window) < maxWindowSamples {
		l.window = append(l.window, x)
	}
	l.mu.Unlock()
}

// Ratio is the ratio computed at the last Tick (1 until there is data).
func (l *latencyRatio) Ratio() float64 { return math.Float64frombits(l.ratio.Load()) }

// Tick ends a window: it computes the ratio, feeds the window to the
// long-term estimator if due, resets the short-term one and returns the
// ratio with the two quantiles.
func (l *latencyRatio) Tick() (ratio, long, short float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ratio = l.Ratio()
	long, short = l.long.Quantile(), l.short.Quantile()
	learn := false
	switch {
	case l.short.Count() < l.MinSamples:
		// Too few samples to say anything: keep the last ratio.
	case l.long.Count() < l.MinSamples:
		ratio, learn = 1, true
	default:
		ratio = min((long+l.Floor)/(short+l.Floor), 10)
		if ratio >= l.Healthy {
			learn, l.unhealthy = true, 0
		} else if l.unhealthy++; l.unhealthy >= l.AdaptAfter {
			learn, l.unhealthy = true, 0
		}
	}
	if learn {
		for _, x := range l.window {
			l.long.Add(x)
		}
	}
	l.window = l.window[:0]
	l.short.Reset()
	l.ratio.Store(math.Float64bits(ratio))
	return ratio, long, short
}

// Next is the level after a window at ratio when the last level was prev:
// it rises at once and falls one step per window, so shedding does not flap.
func (p tierPolicy) Next(prev int, ratio float64) int {
	return max(p.Level(ratio), prev-1)
}
