package client

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// OutlierConfig is Envoy-style outlier detection over a dependency's replicas.
// Hosts are ejected by four detectors: consecutive failures (inline), success
// rate below mean − StdevFactor·stdev, failure percentage above a threshold
// and mean latency far above the other hosts' (the last three at each
// Interval sweep). An ejected host stays out for BaseEjection ×
// times ejected (capped at MaxEjection) and is returned to service by the
// first sweep after that. At most MaxEjectionPercent of the hosts are ejected at
// once, but one host may always be.
type OutlierConfig struct {
	// Enabled switches outlier detection on (--outlier on|off).
	Enabled bool
	// Interval is the time between sweeps (--outlier-interval).
	Interval time.Duration
	// Consecutive5xx ejects a host after this many failures in a row; 0 disables.
	Consecutive5xx int
	// BaseEjection is the ejection time of a first ejection.
	BaseEjection time.Duration
	// MaxEjection caps BaseEjection × times ejected.
	MaxEjection time.Duration
	// MaxEjectionPercent caps the share of hosts ejected at once (one host may always be).
	MaxEjectionPercent int
	// SuccessRateStdevFactor: eject hosts below mean − factor·stdev; 0 disables.
	SuccessRateStdevFactor float64
	// SuccessRateMinHosts is how many hosts need SuccessRateVolume requests in
	// an interval for the success-rate detector to run.
	SuccessRateMinHosts int
	// SuccessRateVolume is the requests a host needs in an interval to count.
	SuccessRateVolume int
	// FailurePercent ejects hosts whose failure percentage in an interval is at
	// least this; 0 disables.
	FailurePercent int
	// FailurePercentMinHosts is how many hosts need FailurePercentVolume requests.
	FailurePercentMinHosts int
	// FailurePercentVolume is the requests a host needs in an interval to count.
	FailurePercentVolume int
	// LatencyFactor ejects hosts whose mean latency in an interval is above
	// this many times the median of the other judged hosts' and above
	// LatencyFloor; 0 disables.
	LatencyFactor float64
	// LatencyVolume is the latency samples a host needs in an interval to be
	// judged (and to count in the others' median).
	LatencyVolume int
	// LatencyFloor: a mean latency at or below it is never an outlier, so
	// that noise among fast hosts ejects nothing.
	LatencyFloor time.Duration
}

// defaultOutlierConfig returns the defaults documented on the flags: tighter
// than Envoy's (which are made for large clusters) so that a bad replica among
// three is ejected within seconds.
func defaultOutlierConfig() OutlierConfig {
	return OutlierConfig{
		Enabled:                true,
		Interval:               time.Second,
		Consecutive5xx:         5,
		BaseEjection:           5 * time.Second,
		MaxEjection:            60 * time.Second,
		MaxEjectionPercent:     50,
		SuccessRateStdevFactor: 1.9,
		SuccessRateMinHosts:    5,
		SuccessRateVolume:      20,
		FailurePercent:         50,
		FailurePercentMinHosts: 3,
		FailurePercentVolume:   20,
		LatencyFactor:          3,
		LatencyVolume:          20,
		LatencyFloor:           10 * time.Millisecond,
	}
}

// validate checks the values are in range; the error names the flag.
func (c OutlierConfig) validate() error {
	switch {
	case c.Interval <= 0:
		return fmt.Errorf("--outlier-interval %s: must be positive", c.Interval)
	case c.Consecutive5xx < 0:
		return fmt.Errorf("--outlier-consecutive-5xx %d: must be 0 (off) or more", c.Consecutive5xx)
	case c.BaseEjection <= 0:
		return fmt.Errorf("--outlier-base-ejection %s: must be positive", c.BaseEjection)
	case c.MaxEjection < c.BaseEjection:
		return fmt.Errorf("--outlier-max-ejection %s: must be at least --outlier-base-ejection %s", c.MaxEjection, c.BaseEjection)
	case c.MaxEjectionPercent < 0 || c.MaxEjectionPercent > 100:
		return fmt.Errorf("--outlier-max-percent %d: must be 0..100", c.MaxEjectionPercent)
	case c.SuccessRateStdevFactor < 0:
		return fmt.Errorf("--outlier-success-rate-stdev %g: must be 0 (off) or positive", c.SuccessRateStdevFactor)
	case c.SuccessRateMinHosts < 1 || c.SuccessRateVolume < 1:
		return fmt.Errorf("--outlier-success-rate-min-hosts %d, --outlier-success-rate-volume %d: both must be at least 1",
			c.SuccessRateMinHosts, c.SuccessRateVolume)
	case c.FailurePercent < 0 || c.FailurePercent > 100:
		return fmt.Errorf("--outlier-failure-percent %d: must be 0 (off) to 100", c.FailurePercent)
	case c.FailurePercentMinHosts < 1 || c.FailurePercentVolume < 1:
		return fmt.Errorf("--outlier-failure-percent-min-hosts %d, --outlier-failure-percent-volume %d: both must be at least 1",
			c.FailurePercentMinHosts, c.FailurePercentVolume)
	case c.LatencyFactor != 0 && !(c.LatencyFactor > 1):
		return fmt.Errorf("--outlier-latency-factor %g: must be 0 (off) or above 1", c.LatencyFactor)
	case c.LatencyVolume < 1:
		return fmt.Errorf("--outlier-latency-volume %d: must be at least 1", c.LatencyVolume)
	case c.LatencyFloor < 0:
		return fmt.Errorf("--outlier-latency-floor %s: must not be negative", c.LatencyFloor)
	}
	return nil
}

// detector names an outlier detector, as in the ejections metric.
type detector string

// The outlier detectors.
const (
	detectConsecutive5xx    detector = "consecutive_5xx"
	detectSuccessRate       detector = "success_rate"
	detectFailurePercentage detector = "failure_percentage"
	detectLatency           detector = "latency"
)

// Signals that eject a host, as in the ejections metric: failures (the first
// three detectors) or latency.
const (
	signalFailures = "failures"
	signalLatency  = "latency"
)

// signal is the kind of evidence d ejects on.
func (d detector) signal() string {
	if d == detectLatency {
		return signalLatency
	}
	return signalFailures
}

// outcome is what one attempt says about the host that served it.
type outcome uint8

const (
	// outcomeSuccess: an answer below 500 (a 4xx is the host working).
	outcomeSuccess outcome = iota
	// outcomeFailure: 5xx (not back pressure), connection error or timeout.
	outcomeFailure
	// outcomeNeutral: back pressure or the caller gave up; says nothing of health.
	outcomeNeutral
)

// result is how one attempt on a host ended, as the balancer and the
// outlier detector see it.
type result struct {
	oc outcome
	// rtt is the attempt's latency; timed says it is a latency sample: an
	// answer, or no answer within the attempt's time. Fast failures and
	// calls the caller gave up are not.
	rtt   time.Duration
	timed bool
	// retryAfter > 0: a back-pressure answer asked to back off that long.
	retryAfter time.Duration
}

// hostHealth is one host's outlier state.
type hostHealth struct {
	consecutive int // failures in a row
	succ, fail  int // this interval
	latSum      time.Duration
	latN        int // latency samples this interval
	ejected     bool
	ejectedAt   time.Time
	unejectedAt time.Time
	multiplier  int // times ejected, decays while healthy
}

// ejection is one host leaving or rejoining the healthy set.
type ejection struct {
	Host     int
	Detector detector // empty when the host was returned to service
}

// outliers is the detector state of one dependency. It is not safe for
// concurrent use: the balancer guards it. Every decision is a function of the
// state and the now passed in.
type outliers struct {
	cfg       OutlierConfig
	hosts     []hostHealth
	nEjected  int
	nextSweep time.Time
	means     []float64 // latency detector's scratch: each host's mean, -1 unjudged
	others    []float64 // and the other hosts' means
}

func newOutliers(cfg OutlierConfig, n int, now time.Time) *outliers {
	return &outliers{cfg: cfg, hosts: make([]hostHealth, n), nextSweep: now.Add(cfg.Interval),
		means: make([]float64, n), others: make([]float64, 0, n)}
}

// ejected says whether host i is out of the healthy set.
func (o *outliers) ejected(i int) bool { return o.hosts[i].ejected }

// ejectionTime is how long a host ejected for the k-th time (k ≥ 1) stays out.
func (o *outliers) ejectionTime(k int) time.Duration {
	d := time.Duration(k) * o.cfg.BaseEjection
	if k <= 0 || d > o.cfg.MaxEjection || d/time.Duration(k) != o.cfg.BaseEjection {
		return o.cfg.MaxEjection
	}
	return d
}

// canEject applies max ejection percent: the first host always may be ejected,
// another only while the ejected share (it included) stays within the cap.
func (o *outliers) canEject() bool {
	if o.nEjected == 0 {
		return true
	}
	return 100*(o.nEjected+1) <= o.cfg.MaxEjectionPercent*len(o.hosts)
}

// eject takes host i out at now if allowed.
func (o *outliers) eject(i int, d detector, now time.Time, out []ejection) []ejection {
	h := &o.hosts[i]
	if h.ejected || !o.canEject() {
		return out
	}
	h.ejected, h.ejectedAt = true, now
	h.multiplier++
	h.consecutive = 0
	o.nEjected++
	return append(out, ejection{Host: i, Detector: d})
}

// record counts how one attempt on host i ended; a consecutive-failure
// ejection happens at once and is returned.
func (o *outliers) record(i int, r result, now time.Time) []ejection {
	h := &o.hosts[i]
	if r.timed {
		h.latSum += r.rtt
		h.latN++
	}
	switch r.oc {
	case outcomeSuccess:
		h.succ++
		h.consecutive = 0
	case outcomeFailure:
		h.fail++
		h.consecutive++
		if o.cfg.Consecutive5xx > 0 && h.consecutive >= o.cfg.Consecutive5xx {
			return o.eject(i, detectConsecutive5xx, now, nil)
		}
	}
	return nil
}

// due says whether a sweep should run at now.
func (o *outliers) due(now time.Time) bool { return !now.Before(o.nextSweep) }

// sweep runs the interval work at now: it returns hosts whose ejection time has
// passed to service, decays the multiplier of hosts healthy for a whole base
// ejection time, runs the success-rate, failure-percentage and latency
// detectors over this interval's counts, and starts a new interval.
func (o *outliers) sweep(now time.Time) []ejection {
	var out []ejection
	for i := range o.hosts {
		h := &o.hosts[i]
		switch {
		case h.ejected && !now.Before(h.ejectedAt.Add(o.ejectionTime(h.multiplier))):
			h.ejected, h.unejectedAt = false, now
			h.consecutive = 0
			o.nEjected--
			out = append(out, ejection{Host: i})
		case !h.ejected && h.multiplier > 0 && !now.Before(h.unejectedAt.Add(o.cfg.BaseEjection)):
			h.multiplier--
			h.unejectedAt = now // one step per base ejection time of good health
		}
	}
	if o.cfg.SuccessRateStdevFactor > 0 {
		for _, i := range o.successRateOutliers() {
			out = o.eject(i, detectSuccessRate, now, out)
		}
	}
	if o.cfg.FailurePercent > 0 {
		for _, i := range o.failurePercentOutliers() {
			out = o.eject(i, detectFailurePercentage, now, out)
		}
	}
	if o.cfg.LatencyFactor > 0 {
		for _, i := range o.latencyOutliers() {
			out = o.eject(i, detectLatency, now, out)
		}
	}
	for i := range o.hosts {
		h := &o.hosts[i]
		h.succ, h.fail, h.latSum, h.latN = 0, 0, 0, 0
	}
	o.nextSweep = now.Add(o.cfg.Interval)
	return out
}

// successRateOutliers returns the healthy hosts whose success rate this
// interval is below mean − factor·stdev of the hosts with enough volume, when
// at least SuccessRateMinHosts have it. (With three hosts no single outlier can
// fall below mean − 1.9·stdev: the detector needs five or more.)
func (o *outliers) successRateOutliers() []int {
	var sum, sq float64
	n := 0
	for _, h := range o.hosts {
		if v := h.succ + h.fail; !h.ejected && v >= o.cfg.SuccessRateVolume {
			r := float64(h.succ) / float64(v)
			sum += r
			sq += r * r
			n++
		}
	}
	if n == 0 || n < o.cfg.SuccessRateMinHosts {
		return nil
	}
	mean := sum / float64(n)
	stdev := math.Sqrt(max(sq/float64(n)-mean*mean, 0))
	threshold := mean - o.cfg.SuccessRateStdevFactor*stdev
	var out []int
	for i, h := range o.hosts {
		if v := h.succ + h.fail; !h.ejected && v >= o.cfg.SuccessRateVolume && float64(h.succ)/float64(v) < threshold {
			out = append(out, i)
		}
	}
	return out
}

// failurePercentOutliers returns the healthy hosts whose failure percentage
// this interval is at least FailurePercent, when at least
// FailurePercentMinHosts hosts have enough volume.
func (o *outliers) failurePercentOutliers() []int {
	n := 0
	for _, h := range o.hosts {
		if !h.ejected && h.succ+h.fail >= o.cfg.FailurePercentVolume {
			n++
		}
	}
	if n < o.cfg.FailurePercentMinHosts {
		return nil
	}
	var out []int
	for i, h := range o.hosts {
		if v := h.succ + h.fail; !h.ejected && v >= o.cfg.FailurePercentVolume && 100*h.fail >= o.cfg.FailurePercent*v {
			out = append(out, i)
		}
	}
	return out
}

// latencyOutliers returns the healthy hosts whose mean latency this interval
// is above LatencyFloor and above LatencyFactor × the median of the other
// judged hosts' means. A host is judged with LatencyVolume latency samples
// in the interval; with no other host judged there is nothing to compare.
func (o *outliers) latencyOutliers() []int {
	for i, h := range o.hosts {
		o.means[i] = -1
		if !h.ejected && h.latN >= o.cfg.LatencyVolume {
			o.means[i] = float64(h.latSum) / float64(h.latN)
		}
	}
	var out []int
	for i, m := range o.means {
		if m < 0 || m <= float64(o.cfg.LatencyFloor) {
			continue
		}
		if med, ok := o.medianOfOthers(i); ok && m > o.cfg.LatencyFactor*med {
			out = append(out, i)
		}
	}
	return out
}

// medianOfOthers is the median of the judged hosts' mean latencies but host
// skip's, and false when no other host is judged.
func (o *outliers) medianOfOthers(skip int) (float64, bool) {
	s := o.others[:0]
	for j, m := range o.means {
		if j != skip && m >= 0 {
			s = append(s, m)
		}
	}
	if len(s) == 0 {
		return 0, false
	}
	slices.Sort(s)
	k := len(s) / 2
	if len(s)%2 == 1 {
		return s[k], true
	}
	return (s[k-1] + s[k]) / 2, true
}
