package client

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// Config switches and tunes the smart client's protections. Every one
// can be switched off for A/B runs; DefaultConfig documents the defaults.
type Config struct {
	// RetryMode is smart, naive or off (--retry-mode).
	RetryMode string
	// Retries is the most retries per call (--retries; 0 = none).
	Retries int
	// RetryTimeouts lets smart mode retry an attempt that timed out (--retry-timeouts).
	RetryTimeouts bool
	// RetryBackoff is the first retry's backoff ceiling; it doubles per retry (--retry-backoff).
	RetryBackoff time.Duration
	// RetryBackoffMax caps the backoff ceiling (--retry-backoff-max).
	RetryBackoffMax time.Duration
	// RetryBudget is the most retries per request over RetryBudgetWindow; 0 = no budget (--retry-budget).
	RetryBudget float64
	// RetryBudgetMin is how many retries a window always allows, for low traffic (--retry-budget-min).
	RetryBudgetMin int
	// RetryBudgetWindow is the budget's sliding window (--retry-budget-window).
	RetryBudgetWindow time.Duration

	// Breaker switches the per-dependency circuit breaker (--breaker).
	Breaker bool
	// BreakerFailureRate opens the breaker at this share of failed attempts (--breaker-failure-rate).
	BreakerFailureRate float64
	// BreakerMinCalls is the attempts needed in the window before it may open (--breaker-min-calls).
	BreakerMinCalls int
	// BreakerWindow is the rolling window failures are counted over (--breaker-window).
	BreakerWindow time.Duration
	// BreakerDelay is how long it stays open before trial attempts (--breaker-delay).
	BreakerDelay time.Duration
	// BreakerProbes is the trial attempts in half-open that must all succeed to close (--breaker-probes).
	BreakerProbes int

	// Balancer is ewma, p2c or rr (--balancer).
	Balancer string
	// BalancerDecay is the time constant of the ewma balancer's latency
	// estimates: how fast a host's slow record fades (--balancer-decay).
	BalancerDecay time.Duration
	// PropagateDeadline bounds each attempt by the incoming request's remaining
	// budget, sends it downstream in X-Deadline-Ms and never starts an attempt
	// with no budget left (--deadline-propagation). Off, attempts use the
	// configured timeout only and the caller's budget is forwarded as is, for
	// downstream accounting of wasted work.
	PropagateDeadline bool
	// Outlier is outlier detection over the replicas.
	Outlier OutlierConfig
	// Seed seeds the balancer's random choices (ewma, p2c); 0 picks one.
	Seed uint64
	// RPC is how calls travel: http (JSON over HTTP/1.1) or grpc (the same
	// calls as gRPC unary methods, platform.GRPCMethod) (--rpc).
	RPC string
}

// DefaultConfig returns the defaults: smart retries (2, 10 ms..500 ms
// full-jitter backoff, 10% budget over 10 s with 10 retries always allowed,
// timeouts retried), breaker on (50% of ≥ 20 attempts in 10 s, open 5 s, 3
// probes), latency-aware balancing (peak EWMA over two random choices, 10 s
// decay), deadline propagation on, outlier detection on (defaultOutlierConfig).
func DefaultConfig() Config {
	return Config{
		RetryMode: retrySmart, Retries: 2, RetryTimeouts: true,
		RetryBackoff: 10 * time.Millisecond, RetryBackoffMax: 500 * time.Millisecond,
		RetryBudget: 0.1, RetryBudgetMin: 10, RetryBudgetWindow: 10 * time.Second,
		Breaker: true, BreakerFailureRate: 0.5, BreakerMinCalls: 20,
		BreakerWindow: 10 * time.Second, BreakerDelay: 5 * time.Second, BreakerProbes: 3,
		Balancer:          balanceEWMA,
		BalancerDecay:     defaultDecay,
		PropagateDeadline: true,
		Outlier:           defaultOutlierConfig(),
		RPC:               rpcHTTP,
	}
}

// Register adds the client flags to fs with c's current values as defaults.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.Var(choiceFlag{&c.RetryMode, parseRetryMode}, "retry-mode", "retries: smart (backoff, budget, never back pressure), naive (A/B only: immediate, no budget) or off")
	fs.IntVar(&c.Retries, "retries", c.Retries, "most retries per dependency call (0 = none)")
	fs.Var((*onOffFlag)(&c.RetryTimeouts), "retry-timeouts", "smart mode retries an attempt that timed out: on or off")
	fs.DurationVar(&c.RetryBackoff, "retry-backoff", c.RetryBackoff, "backoff ceiling of the first retry (full jitter; doubles per retry)")
	fs.DurationVar(&c.RetryBackoffMax, "retry-backoff-max", c.RetryBackoffMax, "largest backoff ceiling")
	fs.Var(budgetFlag{&c.RetryBudget}, "retry-budget", "most retries per request over the window, 0..1, or off")
	fs.IntVar(&c.RetryBudgetMin, "retry-budget-min", c.RetryBudgetMin, "retries always allowed per window, whatever the traffic")
	fs.DurationVar(&c.RetryBudgetWindow, "retry-budget-window", c.RetryBudgetWindow, "sliding window of the retry budget")
	fs.Var((*onOffFlag)(&c.Breaker), "breaker", "circuit breaker per dependency: on or off")
	fs.Float64Var(&c.BreakerFailureRate, "breaker-failure-rate", c.BreakerFailureRate, "share of failed attempts (0..1) that opens the breaker")
	fs.IntVar(&c.BreakerMinCalls, "breaker-min-calls", c.BreakerMinCalls, "attempts needed in the window before the breaker may open")
	fs.DurationVar(&c.BreakerWindow, "breaker-window", c.BreakerWindow, "rolling window of the breaker's failure rate")
	fs.DurationVar(&c.BreakerDelay, "breaker-delay", c.BreakerDelay, "time the breaker stays open before trial attempts")
	fs.IntVar(&c.BreakerProbes, "breaker-probes", c.BreakerProbes, "trial attempts in half-open that must succeed to close the breaker")
	fs.Var(choiceFlag{&c.Balancer, parseBalancer}, "balancer", "load balancing over replicas: ewma (two random choices, lower peak-EWMA latency × calls in flight), p2c (two random choices, least loaded) or rr (round robin)")
	fs.DurationVar(&c.BalancerDecay, "balancer-decay", c.BalancerDecay, "time constant of the ewma balancer's latency estimates (how fast a slow record fades)")
	fs.Var(choiceFlag{&c.RPC, parseRPC}, "rpc", "how calls to dependencies travel: http (JSON over HTTP/1.1) or grpc (gRPC unary calls on the same port)")
	fs.Var((*onOffFlag)(&c.PropagateDeadline), "deadline-propagation", "bound dependency calls by the request's deadline and send it on: on or off")
	o := &c.Outlier
	fs.Var((*onOffFlag)(&o.Enabled), "outlier", "outlier detection and ejection over replicas: on or off")
	fs.DurationVar(&o.Interval, "outlier-interval", o.Interval, "time between outlier sweeps (success rate, failure percentage, un-ejection)")
	fs.IntVar(&o.Consecutive5xx, "outlier-consecutive-5xx", o.Consecutive5xx, "failures in a row that eject a replica (0 = off)")
	fs.DurationVar(&o.BaseEjection, "outlier-base-ejection", o.BaseEjection, "ejection time of a first ejection (times the ejection count after)")
	fs.DurationVar(&o.MaxEjection, "outlier-max-ejection", o.MaxEjection, "longest ejection time")
	fs.IntVar(&o.MaxEjectionPercent, "outlier-max-percent", o.MaxEjectionPercent, "most replicas ejected at once, in percent (one may always be)")
	fs.Float64Var(&o.SuccessRateStdevFactor, "outlier-success-rate-stdev", o.SuccessRateStdevFactor, "eject replicas below mean - this × stdev of success rates (0 = off)")
	fs.IntVar(&o.SuccessRateMinHosts, "outlier-success-rate-min-hosts", o.SuccessRateMinHosts, "replicas with enough volume needed for the success-rate detector")
	fs.IntVar(&o.SuccessRateVolume, "outlier-success-rate-volume", o.SuccessRateVolume, "requests per interval a replica needs for the success-rate detector")
	fs.IntVar(&o.FailurePercent, "outlier-failure-percent", o.FailurePercent, "eject replicas failing at least this percent of requests in an interval (0 = off)")
	fs.IntVar(&o.FailurePercentMinHosts, "outlier-failure-percent-min-hosts", o.FailurePercentMinHosts, "replicas with enough volume needed for the failure-percentage detector")
	fs.IntVar(&o.FailurePercentVolume, "outlier-failure-percent-volume", o.FailurePercentVolume, "requests per interval a replica needs for the failure-percentage detector")
	fs.Float64Var(&o.LatencyFactor, "outlier-latency-factor", o.LatencyFactor, "eject replicas whose mean latency in an interval is over this × the other replicas' median (0 = off)")
	fs.IntVar(&o.LatencyVolume, "outlier-latency-volume", o.LatencyVolume, "latency samples per interval a replica needs for the latency detector")
	fs.DurationVar(&o.LatencyFloor, "outlier-latency-floor", o.LatencyFloor, "a mean latency at or under this never makes a replica an outlier")
}

// Validate checks the values; the error names the flag and what is allowed.
func (c *Config) Validate() error {
	if _, err := parseRetryMode(c.RetryMode); err != nil {
		return err
	}
	if _, err := parseRPC(c.RPC); err != nil {
		return err
	}
	if _, err := parseBalancer(c.Balancer); err != nil {
		return err
	}
	switch {
	case c.Retries < 0 || c.Retries > 10:
		return fmt.Errorf("--retries %d: must be 0..10", c.Retries)
	case c.RetryBackoff < 0 || c.RetryBackoffMax < c.RetryBackoff:
		return fmt.Errorf("--retry-backoff %s, --retry-backoff-max %s: want 0 ≤ backoff ≤ max", c.RetryBackoff, c.RetryBackoffMax)
	case c.RetryBudget < 0 || c.RetryBudget > 1:
		return fmt.Errorf("--retry-budget %g: must be 0..1 or off", c.RetryBudget)
	case c.RetryBudgetMin < 0:
		return fmt.Errorf("--retry-budget-min %d: must not be negative", c.RetryBudgetMin)
	case c.RetryBudgetWindow < 10*time.Millisecond:
		return fmt.Errorf("--retry-budget-window %s: must be at least 10ms", c.RetryBudgetWindow)
	case c.BreakerFailureRate <= 0 || c.BreakerFailureRate > 1:
		return fmt.Errorf("--breaker-failure-rate %g: must be in (0, 1]", c.BreakerFailureRate)
	case c.BreakerMinCalls < 1 || c.BreakerProbes < 1:
		return fmt.Errorf("--breaker-min-calls %d, --breaker-probes %d: both must be at least 1", c.BreakerMinCalls, c.BreakerProbes)
	case c.BreakerWindow <= 0 || c.BreakerDelay <= 0:
		return fmt.Errorf("--breaker-window %s, --breaker-delay %s: both must be positive", c.BreakerWindow, c.BreakerDelay)
	case c.BalancerDecay <= 0:
		return fmt.Errorf("--balancer-decay %s: must be positive", c.BalancerDecay)
	}
	return c.Outlier.validate()
}

// onOffFlag is a bool flag spelled on|off.
type onOffFlag bool

func (o *onOffFlag) String() string {
	if o != nil && *o {
		return "on"
	}
	return "off"
}

func (o *onOffFlag) Set(s string) error {
	switch s {
	case "on":
		*o = true
	case "off":
		*o = false
	default:
		return fmt.Errorf("%q: want on or off", s)
	}
	return nil
}

// choiceFlag is a string flag checked by parse.
type choiceFlag struct {
	v     *string
	parse func(string) (string, error)
}

func (c choiceFlag) String() string {
	if c.v == nil {
		return ""
	}
	return *c.v
}

func (c choiceFlag) Set(s string) error {
	v, err := c.parse(s)
	if err != nil {
		return err
	}
	*c.v = v
	return nil
}

// budgetFlag is a ratio in [0, 1] or "off" (0).
type budgetFlag struct{ v *float64 }

func (b budgetFlag) String() string {
	if b.v == nil || *b.v == 0 {
		return "off"
	}
	return strconv.FormatFloat(*b.v, 'g', -1, 64)
}

func (b budgetFlag) Set(s string) error {
	if s == "off" {
		*b.v = 0
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		return fmt.Errorf("%q: want a ratio 0..1 (0.1 = 10%% of requests) or off", s)
	}
	*b.v = f
	return nil
}
