// Package client is the client behaviour models: how a caller retries,
// backs off, keeps a retry budget, honours back pressure and breaks the
// circuit, and how long it waits for an answer. Both load engines (the k6
// extension and the native engine) make their decisions here.
package client

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/chaosrun/chaosrun/models/rng"
)

// Client behaviour models.
const (
	ModelNaive    = "naive"    // fixed retries, no pause between them
	ModelBackoff  = "backoff"  // exponential backoff with full jitter
	ModelBudgeted = "budgeted" // backoff, retrying only while retries/requests stay under a ratio
	ModelSmart    = "smart"    // budgeted backoff that never retries back pressure, with a breaker
)

// Models lists the model names a client accepts.
var Models = []string{ModelNaive, ModelBackoff, ModelBudgeted, ModelSmart}

// Config says how a client behaves. Zero fields take the defaults of Defaults.
type Config struct {
	Model string
	// Retries is the most retries of one logical request.
	Retries int
	// Base and Cap bound the backoff: attempt n waits uniform [0, min(Cap, Base·2ⁿ)).
	Base, Cap time.Duration
	// BudgetRatio caps retries/requests over BudgetWindow (budgeted, smart).
	BudgetRatio  float64
	BudgetWindow time.Duration
	// Deadline bounds a logical request, retries and pauses included; 0 is none.
	Deadline time.Duration
	// RetryOn lists the statuses worth retrying; status 0 (no answer) always is.
	RetryOn []int
	// Backpressure classifies back-pressure answers.
	Backpressure BackpressureRule
	// BreakerFailures consecutive failures open the smart client's breaker for
	// BreakerCooldown (or the answer's Retry-After when longer).
	BreakerFailures int
	BreakerCooldown time.Duration
}

// BackpressureRule says which answers are back pressure: a status in
// Statuses that carries Header: Value, or (RetryAfter) a Retry-After header.
type BackpressureRule struct {
	Statuses   []int
	Header     string
	Value      string
	RetryAfter bool
}

// Defaults returns the default configuration of a model.
func Defaults(model string) Config {
	return Config{
		Model:           model,
		Retries:         3,
		Base:            50 * time.Millisecond,
		Cap:             2 * time.Second,
		BudgetRatio:     0.1,
		BudgetWindow:    10 * time.Second,
		RetryOn:         []int{429, 500, 502, 503, 504},
		Backpressure:    BackpressureRule{Statuses: []int{429, 503}, Header: "X-Backpressure", Value: "1", RetryAfter: true},
		BreakerFailures: 5,
		BreakerCooldown: 5 * time.Second,
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	known := false
	for _, m := range Models {
		known = known || m == c.Model
	}
	switch {
	case !known:
		return fmt.Errorf("client model %q: allowed: naive, backoff, budgeted, smart", c.Model)
	case c.Retries < 0 || c.Retries > 100:
		return fmt.Errorf("client %s: retries %d: allowed 0..100", c.Model, c.Retries)
	case c.Base < 0 || c.Cap < 0:
		return fmt.Errorf("client %s: backoff base %s / cap %s: must not be negative", c.Model, c.Base, c.Cap)
	case c.BudgetRatio < 0 || c.BudgetRatio > 100 || math.IsNaN(c.BudgetRatio):
		return fmt.Errorf("client %s: budget ratio %v: allowed 0..100", c.Model, c.BudgetRatio)
	case c.BudgetWindow < time.Second:
		return fmt.Errorf("client %s: budget window %s: at least 1s", c.Model, c.BudgetWindow)
	case c.Deadline < 0:
		return fmt.Errorf("client %s: deadline %s: must not be negative", c.Model, c.Deadline)
	case c.BreakerFailures < 1:
		return fmt.Errorf("client %s: breaker failures %d: at least 1", c.Model, c.BreakerFailures)
	case c.BreakerCooldown < 0:
		return fmt.Errorf("client %s: breaker cooldown %s: must not be negative", c.Model, c.BreakerCooldown)
	}
	return nil
}

// Outcome is what one attempt got back.
type Outcome struct {
	// Status is the HTTP status; 0 means no answer (connection error, timeout).
	Status int
	// BackPressure marks an answer the server sent to shed load.
	BackPressure bool
	// RetryAfter is the answer's Retry-After, 0 when absent.
	RetryAfter time.Duration
}

// Classify builds an attempt's Outcome from its status and header lookup.
func (r BackpressureRule) Classify(status int, header func(name string) string) Outcome {
	o := Outcome{Status: status}
	if header == nil || !containsInt(r.Statuses, status) {
		return o
	}
	if r.Header != "" && header(r.Header) == r.Value {
		o.BackPressure = true
	}
	if ra := header("Retry-After"); ra != "" {
		if secs, err := parseSeconds(ra); err == nil {
			o.RetryAfter = secs
		}
		if r.RetryAfter {
			o.BackPressure = true
		}
	}
	return o
}

// Result is how one logical request went.
type Result struct {
	Attempts     int
	Retries      int
	BackPressure int
	// OK: the last attempt succeeded (2xx or 3xx).
	OK bool
	// Goodput: OK within the deadline.
	Goodput bool
	// GaveUp: the request ended without success.
	GaveUp bool
	// Rejected: the open breaker refused the request without an attempt.
	Rejected bool
	// Reason says why the client stopped: ok, exhausted, not-retryable,
	// backpressure, budget, deadline, breaker, stopped (the test ended), error.
	Reason  string
	Elapsed time.Duration
}

// AttemptFunc performs attempt n (0 first) with remaining time of the
// deadline (0 when there is none) and returns what it got.
type AttemptFunc func(n int, remaining time.Duration) (Outcome, error)

// Client makes a model's decisions for one VU: whether to retry, after how
// long, whether the breaker lets a request through. Not safe for concurrent use.
type Client struct {
	cfg     Config
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
	rng     rng.RNG
	budget  budget
	breaker breaker
}

// New returns a client of cfg with its own seeded jitter.
func New(cfg Config, seed uint64) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, now: time.Now, sleep: sleepCtx, rng: rng.New(seed)}
	c.budget.init(cfg.BudgetWindow)
	return c, nil
}

// Config returns the client's configuration.
func (c *Client) Config() Config { return c.cfg }

// Do runs one logical request, calling attempt until it succeeds or the model gives up.
// An error from attempt ends the request at once and is returned.
func (c *Client) Do(ctx context.Context, attempt AttemptFunc) (Result, error) {
	return c.DoFrom(ctx, c.now(), attempt)
}

// DoFrom is Do for a request meant to start at start (an open-model
// arrival's intended time): its deadline and elapsed time count from there.
func (c *Client) DoFrom(ctx context.Context, start time.Time, attempt AttemptFunc) (Result, error) {
	var res Result
	finish := func(reason string) (Result, error) {
		res.Reason = reason
		res.Elapsed = c.now().Sub(start)
		res.GaveUp = !res.OK
		res.Goodput = res.OK && (c.cfg.Deadline == 0 || res.Elapsed <= c.cfg.Deadline)
		return res, nil
	}
	smart := c.cfg.Model == ModelSmart
	if smart && !c.breaker.allow(start) {
		res.Rejected = true
		return finish("breaker")
	}
	c.budget.addRequest(start)
	for n := 0; ; n++ {
		remaining := time.Duration(0)
		if c.cfg.Deadline > 0 {
			remaining = c.cfg.Deadline - c.now().Sub(start)
			if remaining <= 0 {
				return finish("deadline")
			}
		}
		out, err := attempt(n, remaining)
		res.Attempts++
		if err != nil {
			res.Reason = "error"
			res.Elapsed = c.now().Sub(start)
			res.GaveUp = true
			return res, err
		}
		if out.BackPressure {
			res.BackPressure++
		}
		now := c.now()
		res.OK = out.Status >= 200 && out.Status < 400
		failure := !res.OK && (out.Status == 0 || containsInt(c.cfg.RetryOn, out.Status) || out.BackPressure)
		if smart {
			c.breaker.record(now, res.OK, failure, out.RetryAfter, c.cfg)
		}
		switch {
		case res.OK:
			return finish("ok")
		case !failure:
			return finish("not-retryable")
		case n >= c.cfg.Retries:
			return finish("exhausted")
		case smart && out.BackPressure:
			return finish("backpressure")
		case smart && c.breaker.isOpen(now):
			return finish("breaker")
		}
		if c.cfg.Model == ModelBudgeted || smart {
			if !c.budget.allowRetry(now, c.cfg.BudgetRatio) {
				return finish("budget")
			}
		}
		delay := c.delay(n)
		if c.cfg.Deadline > 0 && now.Sub(start)+delay >= c.cfg.Deadline {
			return finish("deadline")
		}
		if c.cfg.Model == ModelBudgeted || smart {
			c.budget.addRetry(now)
		}
		if delay > 0 {
			if err := c.sleep(ctx, delay); err != nil {
				return finish("stopped")
			}
		}
		res.Retries++
	}
}

// delay is the pause before retry n+1: none for naive, full jitter otherwise.
func (c *Client) delay(n int) time.Duration {
	if c.cfg.Model == ModelNaive || c.cfg.Base == 0 {
		return 0
	}
	ceil := c.cfg.Cap
	if n < 40 {
		if d := c.cfg.Base << n; d > 0 && (ceil == 0 || d < ceil) {
			ceil = d
		}
	}
	return time.Duration(c.rng.Float64() * float64(ceil))
}

// BreakerState returns "closed", "open" or "half-open" at now.
func (c *Client) BreakerState(now time.Time) string { return c.breaker.state(now) }

// budget counts requests and retries over a sliding window of one-second buckets.
type budget struct {
	secs     []int64
	requests []int64
	retries  []int64
}

func (b *budget) init(window time.Duration) {
	n := max(int(window/time.Second), 1)
	b.secs = make([]int64, n)
	b.requests = make([]int64, n)
	b.retries = make([]int64, n)
}

func (b *budget) slot(now time.Time) int {
	s := now.Unix()
	i := int(uint64(s) % uint64(len(b.secs)))
	if b.secs[i] != s {
		b.secs[i], b.requests[i], b.retries[i] = s, 0, 0
	}
	return i
}

func (b *budget) addRequest(now time.Time) { b.requests[b.slot(now)]++ }
func (b *budget) addRetry(now time.Time)   { b.retries[b.slot(now)]++ }

// totals sums the buckets still inside the window ending at now.
func (b *budget) totals(now time.Time) (requests, retries int64) {
	s := now.Unix()
	for i, t := range b.secs {
		if s-t < int64(len(b.secs)) && t <= s {
			requests += b.requests[i]
			retries += b.retries[i]
		}
	}
	return requests, retries
}

// allowRetry reports whether one more retry keeps retries/requests ≤ ratio.
func (b *budget) allowRetry(now time.Time, ratio float64) bool {
	req, ret := b.totals(now)
	return float64(ret+1) <= ratio*float64(req)
}

// breaker is a consecutive-failure circuit breaker with a half-open probe.
type breaker struct {
	failures  int
	openUntil time.Time
	halfOpen  bool
}

func (b *breaker) isOpen(now time.Time) bool { return now.Before(b.openUntil) }

func (b *breaker) state(now time.Time) string {
	switch {
	case b.isOpen(now):
		return "open"
	case b.halfOpen:
		return "half-open"
	}
	return "closed"
}

// allow lets a request through unless the breaker is open; after the
// cooldown the next request is a probe (half-open).
func (b *breaker) allow(now time.Time) bool {
	if b.isOpen(now) {
		return false
	}
	if !b.openUntil.IsZero() {
		b.halfOpen = true
		b.openUntil = time.Time{}
	}
	return true
}

func (b *breaker) record(now time.Time, ok, failure bool, retryAfter time.Duration, cfg Config) {
	switch {
	case ok:
		b.failures, b.halfOpen = 0, false
	case failure:
		b.failures++
		if b.halfOpen || b.failures >= cfg.BreakerFailures {
			cool := max(cfg.BreakerCooldown, retryAfter)
			b.openUntil = now.Add(cool)
			b.failures, b.halfOpen = 0, false
		}
	}
}

func containsInt(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// parseSeconds reads a Retry-After given in whole seconds (HTTP dates are ignored).
func parseSeconds(s string) (time.Duration, error) {
	n := 0
	if s == "" || len(s) > 9 {
		return 0, fmt.Errorf("retry-after %q: want whole seconds", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("retry-after %q: want whole seconds", s)
		}
		n = n*10 + int(s[i]-'0')
	}
	return time.Duration(n) * time.Second, nil
}

// sleepCtx pauses like k6's sleep: the VU waits, and a stopping test ends the wait.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
