package client

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Balancing policies for a dependency's replicas (--balancer).
const (
	// balanceEWMA picks two healthy hosts at random and takes the one whose
	// peak-EWMA latency times its calls in flight (plus this one) is lower.
	balanceEWMA = "ewma"
	// balanceRoundRobin takes the healthy hosts in turn.
	balanceRoundRobin = "rr"
	// balanceP2C picks two healthy hosts at random and takes the one with
	// fewer calls in flight (power of two choices, least loaded).
	balanceP2C = "p2c"
)

// parseBalancer checks a --balancer value.
func parseBalancer(s string) (string, error) {
	switch s {
	case balanceEWMA, balanceRoundRobin, balanceP2C:
		return s, nil
	}
	return "", fmt.Errorf("--balancer %q: want %s, %s or %s", s, balanceEWMA, balanceP2C, balanceRoundRobin)
}

// maxAvoid caps how long a back-pressure answer's Retry-After keeps a host
// out of the first choice.
const maxAvoid = 10 * time.Second

// defaultDecay is the time constant of the peak-EWMA latency estimates
// (Finagle's and Linkerd's default too).
const defaultDecay = 10 * time.Second

// lbConfig configures a balancer.
type lbConfig struct {
	policy  string
	decay   time.Duration // of the latency estimates (ewma)
	outlier OutlierConfig
	seed    uint64 // of the random choices (p2c, ewma)
}

// balancer spreads one dependency's attempts over its replicas, skipping
// ejected hosts and, when it can, hosts that asked to back off and the host the
// previous attempt of the same call failed on. If every host is ejected (only
// possible with --outlier-max-percent 100) it balances over all of them
// (Envoy's panic mode).
type balancer struct {
	mu       sync.Mutex
	addrs    []string
	policy   string
	decay    time.Duration
	od       *outliers // nil when outlier detection is off
	inflight []int
	lat      []latencyEstimate // per host, kept with the ewma policy
	avoid    []time.Time       // back off from host until
	next     int
	rnd      *rand.Rand
	onChange func([]ejection) // called under mu with ejections and returns
}

func newBalancer(addrs []string, cfg lbConfig, now time.Time) *balancer {
	b := &balancer{
		addrs: addrs, policy: cfg.policy, decay: cfg.decay,
		inflight: make([]int, len(addrs)), lat: make([]latencyEstimate, len(addrs)),
		avoid: make([]time.Time, len(addrs)),
		rnd:   rand.New(rand.NewPCG(cfg.seed, cfg.seed^0x9e3779b97f4a7c15)),
	}
	if b.decay <= 0 {
		b.decay = defaultDecay
	}
	if cfg.outlier.Enabled {
		b.od = newOutliers(cfg.outlier, len(addrs), now)
	}
	return b
}

// candidate levels, most to least preferred.
const (
	levelBest    = iota // healthy, not backing off, not the host just tried
	levelNotPrev        // healthy, not the host just tried
	levelHealthy        // healthy
	levelAny            // panic mode
	levelCount
)

func (b *balancer) ok(i, level, prev int, now time.Time) bool {
	switch level {
	case levelBest:
		return !b.ejected(i) && i != prev && !now.Before(b.avoid[i])
	case levelNotPrev:
		return !b.ejected(i) && i != prev
	case levelHealthy:
		return !b.ejected(i)
	}
	return true
}

func (b *balancer) ejected(i int) bool { return b.od != nil && b.od.ejected(i) }

// pick chooses the host for an attempt at now (prev is the host the previous
// attempt of this call used, or -1) and counts it in flight; the caller must
// call done with the same index.
func (b *balancer) pick(now time.Time, prev int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.od != nil && b.od.due(now) {
		if ev := b.od.sweep(now); len(ev) > 0 && b.onChange != nil {
			b.onChange(ev)
		}
	}
	n := len(b.addrs)
	for level := range levelCount {
		count := 0
		for i := range n {
			if b.ok(i, level, prev, now) {
				count++
			}
		}
		if count == 0 {
			continue
		}
		var i int
		if b.policy != balanceRoundRobin && count > 1 {
			x := b.nth(b.rnd.IntN(count), level, prev, now)
			k := b.rnd.IntN(count - 1)
			y := b.nth(k, level, prev, now)
			if y == x {
				y = b.nth(count-1, level, prev, now)
			}
			i = x
			if b.cheaper(y, x, now) {
				i = y
			}
		} else {
			i = b.nextRR(level, prev, now)
		}
		b.inflight[i]++
		return i
	}
	panic("balancer: no host") // unreachable: levelAny accepts every host and n ≥ 1
}

// cheaper says whether host y is the better of two random choices over x:
// fewer calls in flight (p2c), or a lower latency estimate times calls in
// flight (ewma). A tie keeps x, the first choice.
func (b *balancer) cheaper(y, x int, now time.Time) bool {
	if b.policy == balanceEWMA {
		return cheaperEWMA(b.lat[y], b.inflight[y], b.lat[x], b.inflight[x], now, b.decay)
	}
	return b.inflight[y] < b.inflight[x]
}

// nth returns the k-th host (0-based) that is ok at level.
func (b *balancer) nth(k, level, prev int, now time.Time) int {
	for i := range b.addrs {
		if b.ok(i, level, prev, now) {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return -1
}

// nextRR returns the next host in turn that is ok at level.
func (b *balancer) nextRR(level, prev int, now time.Time) int {
	n := len(b.addrs)
	for k := range n {
		i := (b.next + k) % n
		if b.ok(i, level, prev, now) {
			b.next = (i + 1) % n
			return i
		}
	}
	return -1
}

// done ends an attempt on host i as r says, at now. A back-pressure answer
// (r.retryAfter > 0) keeps the host out of the first choice that long.
func (b *balancer) done(i int, r result, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight[i]--
	if r.retryAfter > 0 {
		b.avoid[i] = now.Add(min(r.retryAfter, maxAvoid))
	}
	if r.timed && b.policy == balanceEWMA {
		b.lat[i].observe(r.rtt, now, b.decay)
	}
	if b.od == nil {
		return
	}
	if ev := b.od.record(i, r, now); len(ev) > 0 && b.onChange != nil {
		b.onChange(ev)
	}
}

// ejectedHosts lists the hosts ejected now.
func (b *balancer) ejectedHosts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for i, a := range b.addrs {
		if b.ejected(i) {
			out = append(out, a)
		}
	}
	return out
}
