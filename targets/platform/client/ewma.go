package client

import (
	"math"
	"time"
)

// latencyEstimate is one host's peak-sensitive moving average of latency
// ("peak EWMA", the load metric of Finagle's and Linkerd's balancers).
// Between samples the estimate decays toward zero (time heals: a host avoided
// for being slow is tried again once its record has aged); a sample above
// the decayed estimate replaces it at once; one below is blended in with a
// weight that grows with the time since the last sample. Every method is a
// function of the state and the now passed in; the zero value knows nothing.
type latencyEstimate struct {
	ns float64   // the estimate when last set, in nanoseconds
	at time.Time // when it was last set; zero: no sample yet
}

// decayWeight is how much of an estimate survives elapsed time under the
// time constant tau: e^(-elapsed/tau), 1 for no time (or a clock step back).
func decayWeight(elapsed, tau time.Duration) float64 {
	if elapsed <= 0 {
		return 1
	}
	return math.Exp(-float64(elapsed) / float64(tau))
}

// observe adds the latency rtt of an attempt that ended at now.
func (e *latencyEstimate) observe(rtt time.Duration, now time.Time, tau time.Duration) {
	x := float64(max(rtt, 0))
	if e.at.IsZero() || x >= e.ns {
		e.ns, e.at = x, now // no history, or a peak even before decay
		return
	}
	w := decayWeight(now.Sub(e.at), tau)
	if d := e.ns * w; x >= d {
		e.ns, e.at = x, now // a peak over the decayed estimate
	} else {
		e.ns, e.at = d*w+x*(1-w), now
	}
}

// value is the estimate at now: the last one decayed for the time since.
func (e latencyEstimate) value(now time.Time, tau time.Duration) float64 {
	if e.at.IsZero() {
		return 0
	}
	return e.ns * decayWeight(now.Sub(e.at), tau)
}

// unknownCost is the cost of one request in flight to a host with no latency
// sample yet: above any real one, so that such a host takes one request at a
// time until it has answered once.
const unknownCost = float64(time.Hour)

// ewmaCost is what sending one more request to a host costs at now: its
// latency estimate times the requests it would then have in flight. A host
// nothing is known of costs nothing while idle (it is tried) and unknownCost
// per request once busy.
func ewmaCost(e latencyEstimate, inflight int, now time.Time, tau time.Duration) float64 {
	if e.at.IsZero() {
		return unknownCost * float64(inflight)
	}
	return e.value(now, tau) * float64(inflight+1)
}

// cheaperEWMA says whether host y (estimate ey, ny calls in flight) costs
// less than host x at now. Both known estimates decay alike, so the order
// does not depend on now and one exponential of their age difference decides:
// cost_y < cost_x ⇔ ns_y·(ny+1)·e^((at_y−at_x)/τ) < ns_x·(nx+1).
func cheaperEWMA(ey latencyEstimate, ny int, ex latencyEstimate, nx int, now time.Time, tau time.Duration) bool {
	if ey.at.IsZero() || ex.at.IsZero() {
		return ewmaCost(ey, ny, now, tau) < ewmaCost(ex, nx, now, tau)
	}
	age := math.Exp(float64(ey.at.Sub(ex.at)) / float64(tau))
	return ey.ns*float64(ny+1)*age < ex.ns*float64(nx+1)
}
