package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrKind says how a call to a dependency failed.
type ErrKind int

// Kinds of dependency failure.
const (
	// KindTimeout: an attempt took longer than the configured per-call timeout.
	KindTimeout ErrKind = iota + 1
	// KindUnavailable: no answer (refused, reset, bad body).
	KindUnavailable
	// KindStatus: the dependency answered with a non-2xx status (see
	// DepError.Backpressure for a 503 that asks to back off).
	KindStatus
	// KindCanceled: the caller's own context was canceled.
	KindCanceled
	// KindDeadline: the request's deadline left no budget to start the call,
	// or passed while it ran.
	KindDeadline
	// KindBreaker: the dependency's circuit breaker is open; nothing was sent.
	KindBreaker
)

func (k ErrKind) String() string {
	switch k {
	case KindTimeout:
		return "timeout"
	case KindUnavailable:
		return "unavailable"
	case KindStatus:
		return "status"
	case KindCanceled:
		return "canceled"
	case KindDeadline:
		return "deadline"
	case KindBreaker:
		return "breaker"
	}
	return "unknown"
}

// DepError is a failed call to a dependency (the last attempt's failure when
// the call was retried).
type DepError struct {
	Dep    string
	Method string
	URL    string
	Kind   ErrKind
	Status int                // KindStatus only
	Body   platform.ErrorBody // KindStatus only, when the body was a JSON error body
	// Backpressure: the answer was 503 with X-Backpressure; RetryAfter is its hint.
	Backpressure bool
	RetryAfter   time.Duration
	// Attempts is how many attempts the call made.
	Attempts int
	// RetryDenied: the retry budget refused a retry of this failure.
	RetryDenied bool
	Err         error

	deadline time.Time // the call's deadline, zero if none
}

func (e *DepError) Error() string {
	var msg string
	switch e.Kind {
	case KindStatus:
		m := e.Body.Error
		if m == "" {
			m = http.StatusText(e.Status)
		}
		msg = fmt.Sprintf("%s: %s %s: status %d: %s", e.Dep, e.Method, e.URL, e.Status, m)
	default:
		msg = fmt.Sprintf("%s: %s %s: %s: %v", e.Dep, e.Method, e.URL, e.Kind, e.Err)
	}
	if e.Attempts > 1 {
		msg += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	if e.RetryDenied {
		msg += " (retry budget exhausted)"
	}
	return msg
}

func (e *DepError) Unwrap() error { return e.Err }

// KindOf returns the kind of a *DepError in err's chain, or 0.
func KindOf(err error) ErrKind {
	var de *DepError
	if errors.As(err, &de) {
		return de.Kind
	}
	return 0
}

// IsTimeout says whether err is a dependency call that timed out.
func IsTimeout(err error) bool { return KindOf(err) == KindTimeout }

// isBackpressure says whether err is a dependency's back-pressure answer.
func isBackpressure(err error) bool {
	var de *DepError
	return errors.As(err, &de) && de.Backpressure
}

// Client calls one dependency: its replicas through an outlier-ejecting load
// balancer, each call bounded by a timeout and the request's deadline, retried
// within a budget and guarded by a circuit breaker (see Config).
type Client struct {
	name    string
	addrs   []string
	timeout time.Duration
	cfg     Config
	caller  string
	hc      *http.Client
	grpc    grpcConns // with --rpc grpc: a connection per replica
	now     func() time.Time
	lb      *balancer
	budget  *retryBudget
	m       *depMetrics
	exec    failsafe.Executor[struct{}] // nil: one attempt, no breaker
	breaker circuitbreaker.CircuitBreaker[struct{}]
}

// Option tunes New.
type Option func(*options)

type options struct {
	cfg       Config
	reg       prometheus.Registerer
	now       func() time.Time
	transport http.RoundTripper
	caller    string
}

// WithConfig sets the protections (default DefaultConfig()).
func WithConfig(cfg Config) Option { return func(o *options) { o.cfg = cfg } }

// WithRegisterer registers the platform_client_* series on reg (default: a
// private registry). Clients of several dependencies may share one.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) { o.reg = reg }
}

// withTransport replaces the HTTP transport, for tests.
func withTransport(rt http.RoundTripper) Option {
	return func(o *options) { o.transport = rt }
}

// WithCaller sends name in X-Caller on every attempt (per-caller quotas).
func WithCaller(name string) Option { return func(o *options) { o.caller = name } }

// New returns a client to dependency name at addrs (host:port, at least
// one), each attempt bounded by timeout.
func New(name string, addrs []string, timeout time.Duration, opts ...Option) (*Client, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("dependency %s: no address given", name)
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("dependency %s: timeout %s must be positive", name, timeout)
	}
	o := options{cfg: DefaultConfig(), now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("dependency %s: %w", name, err)
	}
	if o.reg == nil {
		o.reg = prometheus.NewRegistry()
	}
	vecs, err := newClientVecs(o.reg)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: register metrics: %w", name, err)
	}
	if o.transport == nil {
		o.transport = &http.Transport{
			Proxy:                 nil, // dependencies are always reached directly
			DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          1024,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	}
	addrs = append([]string(nil), addrs...)
	c := &Client{
		name: name, addrs: addrs, timeout: timeout, cfg: o.cfg, caller: o.caller,
		hc: &http.Client{Transport: o.transport}, now: o.now,
		m: newDepMetrics(vecs, name, addrs),
	}
	if o.cfg.RPC == rpcGRPC {
		if c.grpc, err = dialGRPC(addrs); err != nil {
			return nil, fmt.Errorf("dependency %s: %w", name, err)
		}
	}
	seed := o.cfg.Seed
	if seed == 0 {
		seed = uint64(o.now().UnixNano())
	}
	c.lb = newBalancer(addrs, lbConfig{policy: o.cfg.Balancer, decay: o.cfg.BalancerDecay, outlier: o.cfg.Outlier, seed: seed}, o.now())
	c.lb.onChange = func(ev []ejection) { c.m.ejectionEvents(addrs, ev) }
	if o.cfg.RetryMode == retrySmart && o.cfg.RetryBudget > 0 {
		c.budget = newRetryBudget(o.cfg.RetryBudget, o.cfg.RetryBudgetMin, o.cfg.RetryBudgetWindow)
	}
	var policies []failsafe.Policy[struct{}]
	d := &retryDecider{cfg: &c.cfg, budget: c.budget, now: c.now, metrics: c.m}
	if rp := d.retryPolicy(); rp != nil {
		policies = append(policies, rp)
	}
	if c.breaker = newBreaker(&c.cfg, c.m); c.breaker != nil {
		policies = append(policies, c.breaker) // inside the retries: each attempt passes it
	}
	if len(policies) > 0 {
		c.exec = failsafe.With(policies...)
	}
	return c, nil
}

// ejectedHosts lists the replicas ejected now.
func (c *Client) ejectedHosts() []string { return c.lb.ejectedHosts() }

// Close drops idle connections (and closes gRPC ones).
func (c *Client) Close() {
	c.hc.CloseIdleConnections()
	c.grpc.close()
}

// PostJSON posts in as JSON to path and decodes a 2xx answer into out (if non-nil).
func (c *Client) PostJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: POST %s: encode request: %w", c.name, path, err)
	}
	return c.Do(ctx, http.MethodPost, path, body, out)
}

// GetJSON gets path and decodes a 2xx answer into out (if non-nil).
func (c *Client) GetJSON(ctx context.Context, path string, out any) error {
	return c.Do(ctx, http.MethodGet, path, nil, out)
}

// call is one Do's state across its attempts.
type call struct {
	method, path string
	body         []byte
	out          any
	attempts     int
	prev         int // host of the previous attempt, -1 before the first
}

// Do calls the dependency: one attempt, plus retries as configured. Callers
// must only use it for idempotent requests when retries are on (mutating
// calls carry idempotency keys). Failures are *DepError.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) error {
	now := c.now()
	if dl, ok := ctx.Deadline(); ok && c.cfg.PropagateDeadline && dl.Sub(now) < minRetryBudget {
		c.m.calls[callDeadline].Inc()
		return &DepError{Dep: c.name, Method: method, URL: "http://" + c.addrs[0] + path, Kind: KindDeadline,
			Err: fmt.Errorf("not started: %s of deadline budget left", max(dl.Sub(now), 0))}
	}
	if c.budget != nil {
		c.budget.request(now)
	}
	cl := &call{method: method, path: path, body: body, out: out, prev: -1}
	var err error
	if c.exec == nil {
		err = c.attempt(ctx, cl)
	} else {
		_, err = c.exec.WithContext(ctx).Get(func() (struct{}, error) { return struct{}{}, c.attempt(ctx, cl) })
		err = c.policyError(ctx, cl, err)
	}
	var de *DepError
	switch {
	case err == nil:
		c.m.calls[callOK].Inc()
	case errors.As(err, &de) && de.Kind == KindBreaker:
		c.m.calls[callBreaker].Inc()
	case de != nil && de.Kind == KindDeadline:
		c.m.calls[callDeadline].Inc()
	default:
		c.m.calls[callError].Inc()
	}
	return err
}

// policyError turns what failsafe returned into a *DepError.
func (c *Client) policyError(ctx context.Context, cl *call, err error) error {
	if err == nil {
		return nil
	}
	if de, ok := err.(*DepError); ok {
		de.Attempts = cl.attempts
		return de
	}
	fail := func(kind ErrKind, err error) error {
		return &DepError{Dep: c.name, Method: cl.method, URL: "http://" + c.addrs[max(cl.prev, 0)] + cl.path,
			Kind: kind, Attempts: cl.attempts, Err: err}
	}
	switch {
	case errors.Is(err, circuitbreaker.ErrOpen):
		c.m.breakerReject.Inc()
		return fail(KindBreaker, fmt.Errorf("circuit breaker open (%s left): %w", c.breaker.RemainingDelay(), err))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail(KindDeadline, err)
	case ctx.Err() != nil:
		return fail(KindCanceled, err)
	}
	return fail(KindUnavailable, err)
}

// attemptBudget returns the attempt's timeout and the budget to announce in
// HeaderDeadline (send false: none), or a KindDeadline failure when the
// deadline leaves nothing.
func (c *Client) attemptBudget(ctx context.Context, now time.Time) (timeout, announce time.Duration, send bool, deadline time.Time, ok bool) {
	timeout = c.timeout
	if !c.cfg.PropagateDeadline {
		if b, has := platform.CallerBudget(ctx); has {
			return timeout, b, true, time.Time{}, true
		}
		if dl, has := ctx.Deadline(); has {
			return timeout, dl.Sub(now), true, time.Time{}, true
		}
		return timeout, 0, false, time.Time{}, true
	}
	if dl, has := ctx.Deadline(); has {
		rem := dl.Sub(now)
		if rem < minRetryBudget {
			return 0, 0, false, dl, false
		}
		return min(timeout, rem), min(timeout, rem), true, dl, true
	}
	return timeout, timeout, true, time.Time{}, true
}

// attempt makes one attempt on the host the balancer picks.
func (c *Client) attempt(ctx context.Context, cl *call) error {
	cl.attempts++
	now := c.now()
	timeout, announce, send, deadline, ok := c.attemptBudget(ctx, now)
	if !ok {
		return &DepError{Dep: c.name, Method: cl.method, URL: "http://" + c.addrs[max(cl.prev, 0)] + cl.path,
			Kind: KindDeadline, Attempts: cl.attempts, deadline: deadline,
			Err: fmt.Errorf("attempt %d not started: deadline budget spent", cl.attempts)}
	}
	host := c.lb.pick(now, cl.prev)
	cl.prev = host
	c.m.hostRequests[host].Inc()
	err := c.roundTrip(ctx, c.addrs[host], timeout, announce, send, cl)
	end := c.now()
	r := result{oc: outcomeSuccess, rtt: end.Sub(now), timed: true}
	if err != nil {
		err.Attempts, err.deadline = cl.attempts, deadline
		r.oc = attemptOutcome(err)
		r.timed = r.oc == outcomeSuccess || err.Kind == KindTimeout || err.Kind == KindDeadline
		if err.Backpressure {
			c.m.backpressure[host].Inc()
			r.retryAfter = err.RetryAfter
		}
	}
	c.lb.done(host, r, end)
	c.m.attempts[r.oc].Inc()
	if err != nil {
		return err
	}
	return nil
}

// roundTrip sends one request to addr and decodes a 2xx answer into cl.out.
func (c *Client) roundTrip(ctx context.Context, addr string, timeout, announce time.Duration, send bool, cl *call) *DepError {
	url := "http://" + addr + cl.path
	fail := func(kind ErrKind, err error) *DepError {
		return &DepError{Dep: c.name, Method: cl.method, URL: url, Kind: kind, Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	classify := func(err error) *DepError {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fail(KindDeadline, fmt.Errorf("request deadline passed: %w", err))
		case ctx.Err() != nil:
			return fail(KindCanceled, err)
		case errors.Is(cctx.Err(), context.DeadlineExceeded) && timeout < c.timeout:
			return fail(KindDeadline, fmt.Errorf("no answer within the %s of deadline budget left: %w", timeout, err))
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return fail(KindTimeout, fmt.Errorf("no answer within %s: %w", timeout, err))
		}
		return fail(KindUnavailable, err)
	}
	if c.grpc != nil {
		return c.grpcRoundTrip(ctx, cctx, addr, announce, send, cl, classify)
	}
	var rd io.Reader
	if cl.body != nil {
		rd = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(cctx, cl.method, url, rd)
	if err != nil {
		return fail(KindUnavailable, err)
	}
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if send {
		req.Header.Set(platform.HeaderDeadline, platform.FormatBudget(announce))
	}
	if c.caller != "" {
		req.Header.Set(platform.HeaderCaller, c.caller)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return classify(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return classify(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		de := fail(KindStatus, nil)
		de.Status = resp.StatusCode
		_ = json.Unmarshal(data, &de.Body)
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(platform.HeaderBackpressure) != "" {
			de.Backpressure = true
			de.RetryAfter = platform.ParseRetryAfter(resp.Header.Get(platform.HeaderRetryAfter))
		}
		return de
	}
	if cl.out != nil {
		if err := json.Unmarshal(data, cl.out); err != nil {
			return fail(KindUnavailable, fmt.Errorf("decode answer: %w", err))
		}
	}
	return nil
}
